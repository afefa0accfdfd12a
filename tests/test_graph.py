"""Reference graph: extraction with real tree-sitter, resolution across files, CSR and PageRank."""

from __future__ import annotations

import random
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cora_ci.chunking import chunk_file
from cora_ci.chunking.model import Chunk
from cora_ci.config import from_mapping
from cora_ci.files.text import decode
from cora_ci.graph import FileRefs, Graph, build_graph, extract_refs, personalized_pagerank
from cora_ci.graph.extract import MAX_REFS, expand_use_tree, source_bytes

CFG = from_mapping({"min_tokens": 1})  # no merging of small siblings: one chunk per symbol


def index(files: dict[str, str], **cfg: object) -> dict[str, tuple[list[Chunk], FileRefs]]:
    config = from_mapping({"min_tokens": 1, **cfg})
    out = {}
    for path, text in files.items():
        data = textwrap.dedent(text).lstrip("\n").encode()
        r = chunk_file(path, data, config, keep_tree=True)
        out[path] = (r.chunks, extract_refs(path, r.lang, data, r.chunks, r.tree))
    return out


def edges(files: dict[str, str]) -> set[tuple[str, str]]:
    """(from, to) pairs of anchors (or `path:kind` for anonymous chunks)."""
    data = index(files)
    g = build_graph(data)
    name = {c.id: c.anchor or f"{c.path}:{c.kind}" for cs, _ in data.values() for c in cs}
    return {
        (name[g.ids[i]], name[g.ids[j]])
        for i in range(len(g.ids))
        for j in g.indices[g.indptr[i] : g.indptr[i + 1]]
    }


def targets(files: dict[str, str], anchor: str) -> set[str]:
    return {b for a, b in edges(files) if a == anchor}


# ---- extraction ----------------------------------------------------------------------------------


def refs_of(path: str, text: str, anchor: str, **cfg: object) -> list[str]:
    data = index({path: text}, **cfg)
    chunks, refs = data[path]
    (c,) = [c for c in chunks if c.anchor == anchor]
    return refs.refs.get(c.id, [])


def test_comments_strings_and_locals_are_not_references() -> None:
    refs = refs_of(
        "a.py",
        """
        def f(param):
            # helper_in_comment()
            s = "helper_in_string()"
            local = compute(param)
            return local.value
        """,
        "a.py::f",
    )
    assert refs == ["compute", "value"]


def test_c_plus_plus_template_and_qualified_calls_are_references_and_parameters_are_not() -> None:
    """fmt's `write_float` had no callee `do_write_float` (called as `do_write_float<Char>(out, f)`:
    the generic `name:` rule bound a template's name) and its parameters (`out`) were callees."""
    refs = refs_of(
        "format.h",
        """
        template <typename Char, typename OutputIt>
        auto write_float(OutputIt out, const float& f, int exp_upper) -> OutputIt {
          auto grouping = digit_grouping<Char>(f);
          Status s = Status::OK();
          return do_write_float<Char, OutputIt>(out, f, exp_upper, grouping);
        }
        """,
        "format.h::write_float",
    )
    assert {"do_write_float", "digit_grouping", "OK", "Status"} <= set(refs), refs
    assert not {"out", "exp_upper", "grouping", "s", "f"} & set(refs), refs


def test_python_imports_are_specifiers_as_written() -> None:
    data = index(
        {"pkg/m.py": "import os.path as p\nfrom .util import helper\nfrom .. import top\nfrom x.y import *\n"}
    )
    assert data["pkg/m.py"][1].imports == ["..", "..top", ".util", ".util.helper", "os.path", "x.y"]


def test_rust_use_trees_expand_without_recursion() -> None:
    assert expand_use_tree("crate::a::{b, c::{D, E as F}, self, g::*}") == [
        "crate::a",
        "crate::a::b",
        "crate::a::c::D",
        "crate::a::c::E",
        "crate::a::g",
    ]


def test_reference_lists_are_capped_deterministically() -> None:
    body = "\n".join(
        f"    use_{k:03d}() + use_{k:03d}()" if k < 5 else f"    use_{k:03d}()" for k in range(300)
    )
    refs = refs_of("a.py", f"def f():\n{body}\n", "a.py::f", max_tokens=100_000)
    assert len(refs) == MAX_REFS
    assert refs[:5] == [f"use_{k:03d}" for k in range(5)]  # the most frequent names are kept
    assert refs == sorted(refs)


@given(st.binary(max_size=200) | st.text(alphabet="ab\r\n\xe9", max_size=60).map(str.encode))
@settings(max_examples=300, deadline=None)
def test_source_bytes_matches_what_chunk_file_parses(data: bytes) -> None:
    assert source_bytes(data) == "\n".join(decode(data).lines).encode("utf-8")


def test_deep_nesting_does_not_crash() -> None:
    depth = 3000
    py = "x = " + "(" * depth + "leaf" + ")" * depth + "\n"
    js = "function f() " + "{" * depth + "leaf();" + "}" * depth + "\n"
    for path, text in (("deep.py", py), ("deep.js", js)):
        data = text.encode()
        r = chunk_file(path, data, CFG, keep_tree=True)
        extract_refs(path, r.lang, data, r.chunks, r.tree)
        extract_refs(path, r.lang, data, r.chunks)  # parsing itself as well


def test_markdown_code_spans_reference_code_and_config_keys_define_nothing() -> None:
    files = {
        "README.md": "# Use\n\nCall `compute_total` once; prose compute_other is ignored.\n",
        "calc.py": "def compute_total():\n    return 1\n\ndef compute_other():\n    return 2\n",
        "conf.yaml": "compute_total: 3\n",
    }
    assert targets(files, "README.md::Use") == {"calc.py::compute_total"}


# ---- resolution --------------------------------------------------------------------------------


def test_python_import_beats_a_same_named_definition_elsewhere() -> None:
    files = {
        "app/main.py": """
            from app.auth import login

            def run_app():
                return login()
            """,
        "app/auth.py": "def login():\n    return 1\n",
        "legacy/auth.py": "def login():\n    return 2\n",
    }
    assert targets(files, "app/main.py::run_app") == {"app/auth.py::login"}


def test_python_relative_import_resolves_to_the_package_module() -> None:
    files = {
        "pkg/sub/main.py": "from .tools import shaper\n\ndef go():\n    return shaper()\n",
        "pkg/sub/tools.py": "def shaper():\n    return 1\n",
        "other/tools.py": "def shaper():\n    return 2\n",
    }
    assert targets(files, "pkg/sub/main.py::go") == {"pkg/sub/tools.py::shaper"}


def test_same_file_definition_wins_and_sibling_methods_link() -> None:
    files = {
        "a.py": """
            from b import helper

            def helper():
                return 0

            class Auth:
                def login(self):
                    return self.check() + helper()

                def check(self):
                    return Auth
            """,
        "b.py": "def helper():\n    return 1\n",
    }
    assert targets(files, "a.py::Auth.login") == {"a.py::Auth.check", "a.py::helper"}
    assert targets(files, "a.py::Auth.check") == set()  # its own class is its parent, not a reference


def test_a_forwarder_calls_the_method_of_its_own_name_and_recursion_links_nothing() -> None:
    """viper's package-level `func WatchConfig() { v.WatchConfig() }` had no edge to the method it
    calls (its own name was dropped as a definition), so `related` listed no caller of it."""
    go = {
        "viper.go": """
            package viper

            var v *Viper

            type Viper struct{ watching bool }

            func WatchConfig() { v.WatchConfig() }

            func (v *Viper) WatchConfig() {
                v.watching = true
            }

            func walk(n int) int {
                if n == 0 {
                    return 0
                }
                return walk(n - 1)
            }
            """,
        "tree.go": """
            package viper

            type tree struct{}

            func (t *tree) walk(n int) int { return n }
            """,
    }
    got = edges(go)
    assert ("viper.go::WatchConfig", "viper.go::Viper.WatchConfig") in got
    assert not {b for a, b in got if a == "viper.go::walk"}  # recursion, not the other file's method
    py = {
        "client.py": """
            class Session:
                def prepare_request(self, request):
                    return request

            _session = Session()

            def prepare_request(request):
                return _session.prepare_request(request)
            """,
        "tests/test_views.py": """
            def test_one(app):
                class Index:
                    def get(self):
                        return "one"

                app.add_url_rule("/", view_func=Index.as_view("index"))

            def test_two(app):
                class Index:
                    def get(self):
                        return "two"

                app.add_url_rule("/", view_func=Index.as_view("index"))
            """,
    }
    got = edges(py)
    assert ("client.py::prepare_request", "client.py::Session.prepare_request") in got
    assert not {(a, b) for a, b in got if a.endswith(".Index") and b.endswith(".Index")}  # each names itself


def test_a_shell_function_is_called_as_a_command() -> None:
    """An nvm trial: nvm.sh's 118 functions call each other as commands, which no identifier
    query read (30 edges in the whole repository, `related` empty); a variable or an argument that
    spells a function's name is no call."""
    files = {
        "nvm.sh": """
            nvm_echo() {
              command printf %s\\n "$*"
            }

            nvm_version_greater() {
              local nvm_echo="$1"
              nvm_echo "$nvm_echo" | awk '{ print $1 > $2 }'
            }

            nvm_install_source() {
              if nvm_version_greater "$1" 0.1; then
                VERSION="$(nvm_echo nvm_version_greater)"
              fi
            }
            """,
    }
    assert targets(files, "nvm.sh::nvm_install_source") == {"nvm.sh::nvm_version_greater", "nvm.sh::nvm_echo"}
    assert targets(files, "nvm.sh::nvm_version_greater") == {"nvm.sh::nvm_echo"}


def test_a_haskell_function_references_the_functions_it_applies() -> None:
    """An aeson trial: Haskell's functions are `variable` nodes, which no reference query read
    (`related consToValue` was empty, its four callers in the same file); a parameter or a local
    binding that spells a function's name is no reference."""
    files = {
        "src/TH.hs": """
            module TH where

            jstring :: String -> Value
            jstring s = String s

            consToValue :: Int -> Value
            consToValue jstring_ = jstring (show jstring_)

            deriveToJSON :: Int -> Value
            deriveToJSON n = go n
              where go consToValue = consToValue
            """,
    }
    assert targets(files, "src/TH.hs::consToValue") == {"src/TH.hs::jstring"}
    assert targets(files, "src/TH.hs::deriveToJSON") == set()


def test_unique_name_fallback_and_ambiguous_names() -> None:
    files = {
        "x.py": "def caller():\n    return unique_thing() + twice() + run()\n",
        "y.py": "def unique_thing():\n    return 1\n\ndef twice():\n    return 1\n\ndef run():\n    return 1\n",
        "z.py": "def twice():\n    return 2\n",
    }
    # `twice` is defined twice and not imported: unresolved; `run` is too common to guess
    assert targets(files, "x.py::caller") == {"y.py::unique_thing"}


def test_typescript_relative_import() -> None:
    files = {
        "src/app.ts": """
            import { format } from './util';

            export function render(): string {
              return format(1);
            }
            """,
        "src/util.ts": "export function format(n: number): string {\n  return String(n);\n}\n",
        "lib/util.ts": "export function format(n: number): string {\n  return '';\n}\n",
    }
    assert targets(files, "src/app.ts::render") == {"src/util.ts::format"}


def test_csharp_using_resolves_through_namespaces() -> None:
    files = {
        "App/Service.cs": """
            using Acme.Data;

            namespace Acme.App
            {
                public class Service
                {
                    public int Load() { return new Repo().Fetch(); }
                }
            }
            """,
        "Data/Repo.cs": """
            namespace Acme.Data
            {
                public class Repo
                {
                    public int Fetch() { return 1; }
                }
            }
            """,
        "Other/Repo.cs": """
            namespace Other.Data
            {
                public class Repo
                {
                    public int Fetch() { return 2; }
                }
            }
            """,
    }
    assert targets(files, "App/Service.cs::Acme.App.Service.Load") == {
        "Data/Repo.cs::Acme.Data.Repo",
        "Data/Repo.cs::Acme.Data.Repo.Fetch",
    }


def test_a_common_name_is_no_member_of_an_imported_file() -> None:
    """marshmallow's `data.pop(field_name)` is a dict's, not the `OrderedSet.pop` of a module its
    file imports for another reason; a member of a common name links where the chunk names its
    owner, and an imported function of a common name, a member of a rarer name and a file's own
    members (rule 1) link as before."""
    files = {
        "pkg/schema.py": """
            from pkg.orderedset import OrderedSet, load

            def validate(data):
                data.pop("x", None)
                data.discard_all()
                return load(data)

            def drain(names):
                seen = OrderedSet(names)
                return seen.pop()
            """,
        "pkg/store.py": """
            class Store:
                def pop(self):
                    return 1

                def drain(self):
                    return self.pop()
            """,
        "pkg/orderedset.py": """
            class OrderedSet:
                def pop(self, last=True):
                    return last

                def discard_all(self):
                    return self

            def load(data):
                return data
            """,
    }
    assert targets(files, "pkg/schema.py::validate") == {
        "pkg/orderedset.py::OrderedSet.discard_all",
        "pkg/orderedset.py::load",
    }
    assert targets(files, "pkg/schema.py::drain") == {
        "pkg/orderedset.py::OrderedSet",
        "pkg/orderedset.py::OrderedSet.pop",
    }
    assert targets(files, "pkg/store.py::Store.drain") == {"pkg/store.py::Store.pop"}


def test_a_common_name_is_no_member_of_its_own_file_outside_its_owner() -> None:
    """aiohttp's `BaseRequest.host` and `BaseRequest.if_none_match` were callers of the `FileField.name`
    their file defines: a file's own member of a common name links from inside its owner or from a
    chunk naming the owner (`post`, which makes `FileField`s), as an imported one does; the file's
    own functions of common names link as before."""
    files = {
        "pkg/sets.py": """
            class OrderedSet:
                def pop(self, last=True):
                    return last

                def drain(self):
                    return self.pop()

            def close(data):
                return data

            def validate(data):
                data.pop("x", None)
                return close(data)

            def take(names):
                seen = OrderedSet(names)
                return seen.pop()
            """,
    }
    assert targets(files, "pkg/sets.py::validate") == {"pkg/sets.py::close"}
    assert targets(files, "pkg/sets.py::take") == {"pkg/sets.py::OrderedSet", "pkg/sets.py::OrderedSet.pop"}
    assert targets(files, "pkg/sets.py::OrderedSet.drain") == {"pkg/sets.py::OrderedSet.pop"}


def test_a_java_call_of_a_common_name_is_not_every_class_of_its_package() -> None:
    """gson's tests: a `create(...)` named in one test class linked to the `create` of every other
    class of its package (15% of gson's edges); a distinctive member name still links."""
    files = {
        f"src/com/acme/{name}.java": f"""
            package com.acme;

            public class {name} {{
                public Object create(Object o) {{ return o; }}
                public Object make{name}(Object o) {{ return o; }}
            }}
            """
        for name in ("First", "Second")
    }
    files["src/com/acme/User.java"] = """
        package com.acme;

        public class User {
            public Object go(Object f) { return f.create(f.makeSecond(f)); }
        }
        """
    assert targets(files, "src/com/acme/User.java::User.go") == {
        "src/com/acme/Second.java::Second.makeSecond"
    }


def test_java_import_resolves_to_the_class_file() -> None:
    files = {
        "src/com/acme/app/Main.java": """
            package com.acme.app;

            import com.acme.util.Strings;

            public class Main {
                public String go() { return Strings.shout("x"); }
            }
            """,
        "src/com/acme/util/Strings.java": """
            package com.acme.util;

            public class Strings {
                public static String shout(String s) { return s; }
            }
            """,
        "src/org/other/Strings.java": """
            package org.other;

            public class Strings {
                public static String shout(String s) { return s; }
            }
            """,
    }
    assert targets(files, "src/com/acme/app/Main.java::Main.go") == {
        "src/com/acme/util/Strings.java::Strings",
        "src/com/acme/util/Strings.java::Strings.shout",
    }


def test_go_import_path_resolves_to_the_package_directory() -> None:
    files = {
        "cmd/main.go": """
            package main

            import "example.com/proj/pkg/mathx"

            func Run() int {
                return mathx.Double(2)
            }
            """,
        "pkg/mathx/mathx.go": "package mathx\n\nfunc Double(n int) int {\n    return 2 * n\n}\n",
        "pkg/other/other.go": "package other\n\nfunc Double(n int) int {\n    return n\n}\n",
    }
    assert targets(files, "cmd/main.go::Run") == {"pkg/mathx/mathx.go::Double"}


def test_rust_crate_path_resolves_to_the_module_file() -> None:
    files = {
        "src/lib.rs": "mod geo;\nmod other;\n\nuse crate::geo::area;\n\npub fn total() -> f64 {\n    area(2.0)\n}\n",
        "src/geo.rs": "pub fn area(r: f64) -> f64 {\n    r * r\n}\n",
        "src/other.rs": "pub fn area(r: f64) -> f64 {\n    r\n}\n",
    }
    assert targets(files, "src/lib.rs::total") == {"src/geo.rs::area"}


# ---- the graph ---------------------------------------------------------------------------------

REPO = {
    "a/core.py": "from a.util import norm, scale\n\nclass Core:\n    def step(self):\n        return norm(scale(self.size()))\n\n    def size(self):\n        return 1\n",
    "a/util.py": "def norm(x):\n    return scale(x) / 2\n\ndef scale(x):\n    return x * 3\n",
    "b/main.py": "from a.core import Core\n\ndef main_entry():\n    return Core().step()\n",
    "README.md": "# Core\n\nSee `main_entry` and `norm`.\n",
}


def test_build_is_deterministic_regardless_of_dict_order() -> None:
    msgpack = pytest.importorskip("msgpack")
    data = index(REPO)
    first = build_graph(data)
    items = list(data.items())
    for seed in range(5):
        random.Random(seed).shuffle(items)
        again = build_graph(dict(items))
        assert again == first
        assert msgpack.packb(again.to_dict()) == msgpack.packb(first.to_dict())
    assert len(first.indices) >= 6


def test_csr_rows_are_sorted_and_weights_split_over_targets() -> None:
    g = build_graph(index(REPO))
    assert g.ids == sorted(g.ids)
    assert len(g.indptr) == len(g.ids) + 1 and g.indptr[-1] == len(g.indices) == len(g.weights)
    for i in range(len(g.ids)):
        row = g.indices[g.indptr[i] : g.indptr[i + 1]]
        assert row == sorted(set(row))
    assert all(w > 0 for w in g.weights)


@st.composite
def graphs(draw: st.DrawFn) -> Graph:
    ids = sorted(draw(st.sets(st.integers(0, 2**53 - 1), max_size=30)))
    indptr, indices, weights = [0], [], []
    for _ in ids:
        row = sorted(draw(st.sets(st.integers(0, len(ids) - 1), max_size=len(ids))))
        indices += row
        weights += [draw(st.floats(0.5, 100, width=32)) for _ in row]
        indptr.append(len(indices))
    return Graph(ids, indptr, indices, weights)


@given(graphs())
@settings(max_examples=200, deadline=None)
def test_graph_round_trips_through_msgpack(g: Graph) -> None:
    msgpack = pytest.importorskip("msgpack")
    packed = msgpack.packb(g.to_dict())
    assert Graph.from_dict(msgpack.unpackb(packed)) == g


def test_graph_is_stored_in_narrow_arrays_with_a_weight_table() -> None:
    g = Graph([10, 20, 30], [0, 2, 3, 3], [1, 2, 2], [0.5, 1.0, 0.5])
    d = g.to_dict()
    assert d["degrees"] == [1, bytes([2, 1, 0])] and d["indices"] == [1, bytes([1, 2, 2])]
    assert np.frombuffer(d["levels"], "<f4").tolist() == [0.5, 1.0] and d["weights"] == [1, bytes([0, 1, 0])]
    wide = Graph(list(range(300)), [0, *([1] * 300)], [299], [2.0])
    assert wide.to_dict()["indices"][0] == 2 and Graph.from_dict(wide.to_dict()) == wide


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"degrees": [3, b"\x01\x00\x00"]}, "not an array"),
        ({"degrees": [2, b"\x01\x00\x00"]}, "bad length"),
        ({"degrees": [1, bytes([1, 1, 0])]}, "inconsistent"),
        ({"indices": [1, bytes([1, 2, 3])]}, "inconsistent"),
        ({"weights": [1, bytes([0, 1, 2])]}, "inconsistent"),
        ({"levels": np.array([0.5, -1.0], "<f4").tobytes()}, "inconsistent"),
        ({"levels": np.array([0.5, np.nan], "<f4").tobytes()}, "inconsistent"),
        ({"ids": np.array([10, 10, 30], "<u8").tobytes()}, "inconsistent"),
        ({"indices": [8, np.array([1, 2, 2**63], "<u8").tobytes()]}, "bad length or value"),
        ({"levels": 7}, "not an array"),
    ],
)
def test_a_damaged_graph_is_refused(change: dict[str, object], says: str) -> None:
    d = {**Graph([10, 20, 30], [0, 2, 3, 3], [1, 2, 2], [0.5, 1.0, 0.5]).to_dict(), **change}
    with pytest.raises(ValueError, match=says):
        Graph.from_dict(d)


def test_a_stored_graph_names_its_chunks_by_their_places_in_the_manifest() -> None:
    """`graph.msgpack` holds no chunk ids (7.0): each node is a place in the manifest's chunk
    order, in the narrowest width; a graph of other chunks is refused both ways."""
    import msgpack

    from cora_ci.graph.csr import Csr, pack_csr, unpack_csr

    g = Graph([10, 20, 30], [0, 2, 3, 3], [1, 2, 2], [0.5, 1.0, 0.5])
    c = Csr(
        np.array(g.ids, np.uint64), np.array(g.indptr), np.array(g.indices), np.array(g.weights, np.float32)
    )
    rows = np.array([30, 10, 20], dtype=np.uint64)
    data = pack_csr(c, rows)
    stored = msgpack.unpackb(data)
    assert "ids" not in stored and stored["order"] == [1, bytes([1, 2, 0])]
    assert Graph(*(a.tolist() for a in unpack_csr(data, rows))) == g
    with pytest.raises(ValueError, match="not the manifest's chunks"):
        unpack_csr(data, rows[:2])
    with pytest.raises(ValueError, match="inconsistent"):  # the places no longer in the ids' order
        unpack_csr(data, np.array([30, 10, 40], dtype=np.uint64))
    with pytest.raises(ValueError, match="not the manifest's chunks"):
        pack_csr(c, rows[:2])
    stored["order"] = [1, bytes([1, 1, 0])]  # a place twice
    with pytest.raises(ValueError, match="inconsistent"):
        unpack_csr(msgpack.packb(stored), rows)


def test_unknown_graph_format_is_rejected() -> None:
    with pytest.raises(ValueError, match="format"):
        Graph.from_dict({**Graph([], [0], [], []).to_dict(), "format": 99})


# ---- personalized PageRank ---------------------------------------------------------------------


def chain() -> Graph:
    """A -> B -> C, and D on its own: ids 10, 20, 30, 40."""
    return Graph(ids=[10, 20, 30, 40], indptr=[0, 1, 2, 2, 2], indices=[1, 2], weights=[1.0, 1.0])


def test_pagerank_follows_references_from_the_seeds() -> None:
    s = personalized_pagerank(chain(), {10: 1.0})
    assert s[10] > s[20] > s[30] > 0
    assert 40 not in s
    assert sum(s.values()) == pytest.approx(1.0, abs=1e-6)


def test_pagerank_seed_weights_and_unknown_seeds() -> None:
    g = chain()
    s = personalized_pagerank(g, {30: 3.0, 40: 1.0, 999: 5.0})
    assert s[30] > s[40] > 0 and 10 not in s
    assert sum(s.values()) == pytest.approx(1.0, abs=1e-6)
    assert personalized_pagerank(g, {999: 1.0}) == {}
    assert personalized_pagerank(Graph([], [0], [], []), {1: 1.0}) == {}


def test_pagerank_on_a_built_graph_reaches_the_called_code() -> None:
    data = index(REPO)
    g = build_graph(data)
    by_anchor = {c.anchor: c.id for cs, _ in data.values() for c in cs}
    s = personalized_pagerank(g, {by_anchor["b/main.py::main_entry"]: 1.0})
    assert s[by_anchor["a/core.py::Core.step"]] > s.get(by_anchor["a/core.py::Core.size"], 0) > 0
    assert by_anchor["a/util.py::norm"] in s


def test_a_query_keeps_exactly_the_patterns_its_grammar_compiles() -> None:
    """All patterns compiled at once and a failing row dropped at a time keeps what compiling each
    alone keeps, for every language with reference patterns (JavaScript, TypeScript and Rust
    drop some: their grammars lack the node kinds)."""
    from cora_ci.graph import queries as q

    dropped = {}
    for lang in sorted({*q.BINDINGS, *q._IMPORTS, "ruby", "kotlin", "bash"}):
        lang_obj = q.language(lang)
        candidates = [*q.BINDINGS.get(lang, q._GENERIC), *q._IMPORTS.get(lang, ())]
        query, kept = q.compiled(lang_obj, [], candidates)
        assert kept == [p for p in candidates if q._compiles(lang_obj, p)], lang
        assert (query.pattern_count if query is not None else 0) == len(kept)
        assert q.refs_query(lang) is not None
        dropped[lang] = len(candidates) - len(kept)
    assert dropped["python"] == 0 and dropped["typescript"] > 0 and dropped["kotlin"] > 0


def _every_suffix(paths: list[str], langs: dict[str, str]) -> dict[str, list[str]]:
    """The map the lookup stands for: each dotted suffix of each Python module name -> its files."""
    out: dict[str, list[str]] = {}
    for p in sorted(paths):
        if langs[p] != "python" or not p.endswith((".py", ".pyi")):
            continue
        parts = p.rsplit(".", 1)[0].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        for k in range(len(parts)):
            out.setdefault(".".join(parts[k:]), []).append(p)
    return out


_SEGMENT = st.sampled_from(["a", "b", "src", "util", "__init__", "b_c"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(_SEGMENT, min_size=1, max_size=4), st.sampled_from([".py", ".pyi", ".ts"])),
        max_size=12,
    ),
    st.lists(st.lists(_SEGMENT, min_size=1, max_size=3).map(".".join), max_size=6),
)
def test_a_python_module_is_found_by_any_dotted_suffix_of_its_name(
    files: list[tuple[list[str], str]], specs: list[str]
) -> None:
    from cora_ci.graph.resolve import Repo

    paths = sorted({"/".join(parts) + ext for parts, ext in files})
    langs = {p: "typescript" if p.endswith(".ts") else "python" for p in paths}
    want = _every_suffix(paths, langs)
    repo = Repo(langs, {})
    for spec in [*specs, *want, "", "a..b"]:
        assert repo.py_modules(spec) == want.get(spec, []), spec
