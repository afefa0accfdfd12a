"""`cora-ci related`, `outline` and `agents` on a real repository's bundle, as a user runs them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import dedent_files, git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cora_ci.build import build
from cora_ci.commands.agents import SNIPPET, client_config
from cora_ci.rebind.view import mentions, signature
from cora_ci.render import nested
from cora_ci.render.query import Where, run_outline, run_query, run_related, run_show

CORA = shutil.which("cora-ci", path=os.path.dirname(sys.executable)) or "cora-ci"

# A base type and a subclass overriding one member, a helper it calls, a caller and a test.
SHOP = {
    "shop/base.py": '''\
        """Stores."""


        class Store:
            """A place that holds items."""

            def save(self, item):
                """Keep an item; subclasses decide where."""
                raise NotImplementedError("a store must say how it saves an item")

            def load(self, key):
                """Give back the item saved under key, or None when nothing was saved there."""
                raise NotImplementedError("a store must say how it loads an item")
        ''',
    "shop/memory.py": '''\
        """A store in memory."""
        from shop.base import Store


        class MemoryStore(Store):
            """Keeps items in a list, for tests and small runs."""

            def save(self, item):
                """Normalize the item and append it to the list."""
                clean = normalize(item)
                self.items.append(clean)
                return clean


        def normalize(item):
            """The item as a stripped string, the form every store keeps."""
            text = str(item)
            return text.strip()
        ''',
    "shop/service.py": '''\
        """Checkout."""
        from shop.memory import MemoryStore


        def checkout(cart):
            """Save each item of the cart in a new memory store and return what was kept."""
            store = MemoryStore()
            return [store.save(item) for item in cart]
        ''',
    "tests/test_shop.py": """\
        from shop.memory import MemoryStore


        def test_save_keeps_the_stripped_item():
            store = MemoryStore()
            store.items = []
            assert store.save(" a ") == "a"
            assert store.items == ["a"]
        """,
}


def cora(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CORA, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1", **env}, check=False)  # fmt: skip


@pytest.fixture
def shop(make_repo: Callable[[dict[str, str]], Path], private_cache: None) -> Path:
    repo = make_repo(dedent_files(SHOP))
    out = cora("index", "--model", "none", "-q", cwd=repo)
    assert out.returncode == 0, out.stderr
    return repo


def _relations(repo: Path, anchor: str, k: int = 10) -> list[tuple[str, str]]:
    rel, _ = run_related(anchor, Where.of(None, None, repo), k)
    return [(r.hit.relation or "", r.anchor or "") for r in rel.results]


def test_a_method_relates_to_its_type_override_callee_caller_and_test(shop: Path) -> None:
    got = _relations(shop, "shop/memory.py::MemoryStore.save")
    assert got[:2] == [("parent", "shop/memory.py::MemoryStore"), ("overrides", "shop/base.py::Store.save")]
    assert ("callee", "shop/memory.py::normalize") in got
    assert ("caller", "shop/service.py::checkout") in got
    assert ("test", "tests/test_shop.py::test_save_keeps_the_stripped_item") in got
    assert len({a for _, a in got}) == len(got)  # each related symbol once
    assert "shop/memory.py::MemoryStore.save" not in {a for _, a in got}  # never itself


def test_a_javascript_private_method_has_its_callers(make_repo: Callable[[dict[str, str]], Path]) -> None:
    """hono's `Hono.#dispatch` had neither callers nor callees: `#name` was no name to the graph."""
    ts = (
        "export class Hono {\n"
        "  #dispatch(request: Request, method: string): Response {\n"
        "    return this.router.match(method, this.getPath(request))\n  }\n\n"
        "  fetch(request: Request): Response {\n    return this.#dispatch(request, request.method)\n  }\n}\n"
    )
    repo = make_repo({".cora.toml": "min_tokens = 0\n", "src/hono.ts": ts})
    build(repo, model="none")
    assert ("caller", "src/hono.ts::Hono.fetch") in _relations(repo, "src/hono.ts::Hono.#dispatch")
    assert ("callee", "src/hono.ts::Hono.#dispatch") in _relations(repo, "src/hono.ts::Hono.fetch")


def test_the_type_hierarchy_is_seen_from_both_ends(shop: Path) -> None:
    assert ("overridden-by", "shop/memory.py::MemoryStore.save") in _relations(
        shop, "shop/base.py::Store.save"
    )
    assert ("subclass", "shop/memory.py::MemoryStore") in _relations(shop, "shop/base.py::Store")
    assert ("base", "shop/base.py::Store") in _relations(shop, "shop/memory.py::MemoryStore")


def test_k_bounds_the_list_and_keeps_the_structural_relations_first(shop: Path) -> None:
    got = _relations(shop, "shop/memory.py::MemoryStore.save", k=2)
    assert [r for r, _ in got] == ["parent", "overrides"]


def test_related_cli_formats_and_errors(shop: Path) -> None:
    out = cora("related", "shop/memory.py::normalize", "--format", "json", cwd=shop)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["anchor"] == "shop/memory.py::normalize" and doc["bundle_id"]
    first = doc["results"][0]
    assert (first["relation"], first["anchor"]) == ("caller", "shop/memory.py::MemoryStore.save")
    assert first["elided"] and first["text"].startswith("    def save(self, item):")  # its signature
    full = json.loads(
        cora("related", "shop/memory.py::normalize", "--full", "--format", "json", cwd=shop).stdout
    )
    assert "self.items.append(clean)" in full["results"][0]["text"] and not full["results"][0]["elided"]
    cora_out = cora("related", "shop/memory.py::normalize", cwd=shop).stdout  # a pipe: cora blocks
    assert cora_out.startswith("<cora:chunk>") and 'relation="caller"' in cora_out
    assert "Related as caller" in cora_out
    # its signature by design, not for a budget no one gave (a commons-lang trial)
    assert "`--full` for its code" in cora_out and "to fit the budget" not in cora_out
    text = cora("related", "shop/memory.py::normalize", "--format", "text", cwd=shop).stdout
    assert "shop/memory.py:8:  lines 8-12" in text and "caller" in text
    bad = cora("related", "shop/memory.py::nope", cwd=shop)
    assert bad.returncode == 4 and bad.stderr.startswith("error: CORA-QRY-002: ")
    assert bad.stderr.count("\n") == 1


def test_outline_lists_a_file_symbols_with_lines_kinds_and_anchors(shop: Path) -> None:
    o, _ = run_outline("shop/base.py", Where.of(None, None, shop))
    rows = [
        (e.anchor.split("::")[1], e.declared, e.depth, e.start_line, e.end_line, e.stale) for e in o.entries
    ]
    assert rows == [
        ("Store", "class", 0, 4, 13, None),
        ("Store.save", "method", 1, 7, 9, None),
        ("Store.load", "method", 1, 11, 13, None),
    ]
    assert [e.signature for e in o.entries][1] == "def save(self, item):"


def test_outline_declares_a_member_by_its_declaration_not_an_annotation_naming_it(
    make_repo: Callable[[dict[str, str]], Path], private_cache: None
) -> None:
    """An annotation that names its member in a string (gson's `@SerializedName("name")`,
    Kotlin's `ReplaceWith("delegate")`) stands above the line that declares it."""
    repo = make_repo(dedent_files({
        ".cora.toml": "min_tokens = 0\n",
        "src/User.java": """\
            package app;

            public class User {
              @SerializedName("name")
              private String name;

              @SerializedName("email_address")
              private String email;
            }
            """,
        "src/Forwarding.kt": """\
            package okio

            abstract class ForwardingSource(val source: Source) {
              @JvmName("-deprecated_delegate")
              @Deprecated(
                message = "moved to val",
                replaceWith = ReplaceWith(expression = "delegate"),
              )
              fun delegate() = source
            }
            """,
    }))  # fmt: skip
    assert cora("index", "--model", "none", "-q", cwd=repo).returncode == 0
    java = {
        e.symbol: e.signature for e in run_outline("src/User.java", Where.of(None, None, repo))[0].entries
    }
    assert java["name"] == "private String name;" and java["email"] == "private String email;"
    kotlin = {
        e.symbol: e.signature for e in run_outline("src/Forwarding.kt", Where.of(None, None, repo))[0].entries
    }
    assert kotlin["delegate"] == "fun delegate() = source"


def test_a_symbol_is_declared_by_its_code_not_by_a_comment_naming_it(
    make_repo: Callable[[dict[str, str]], Path], private_cache: None
) -> None:
    """A doc comment above a declaration often names it (googletest's `// Don't inherit from
    TestPartResult ...`, Scaladoc's `[[copy.over]]`): outline declares each symbol by its code,
    and an elided result shows that code. C names an anonymous `typedef struct {...} t;` on its
    closing line: such a sibling is shown from its `typedef`, not from that line alone."""
    repo = make_repo(dedent_files({
        "include/part.hpp": """\
            namespace testing {
            // Don't inherit from TestPartResult as its destructor is not virtual.
            class TestPartResult {
             public:
              // Gets the summary of the failure message.
              const char* summary() const { return summary_; }
              // Gets the message associated with the test part.
              const char* message() const { return message_; }

             private:
              const char* summary_;
              const char* message_;
            };
            }  // namespace testing
            """,
        "include/clock.h": """\
            /* not 2038-proof */
            typedef struct {
              long tv_sec;
              long tv_nsec;
            } cv_timespec_t;

            typedef struct {
              long tv_sec;
              long tv_usec;
            } cv_timeval_t;
            """,
        "src/Ops.scala": """\
            package os

            /**
             * Copy a file or folder; see [[copy.over]] to replace what is there.
             */
            object copy {
              def apply(from: String, to: String): Unit = {}
            }
            """,
    }))  # fmt: skip
    assert cora("index", "--model", "none", "-q", cwd=repo).returncode == 0
    where = Where.of(None, None, repo)

    def declared(path: str) -> dict[str, tuple[str, int, int]]:
        return {
            e.symbol: (e.signature, e.start_line, e.end_line) for e in run_outline(path, where)[0].entries
        }

    cpp = declared("include/part.hpp")
    assert cpp["TestPartResult"][0] == "class TestPartResult {"
    assert cpp["summary"][0] == "const char* summary() const { return summary_; }"
    assert cpp["message"][0] == "const char* message() const { return message_; }"
    assert declared("src/Ops.scala")["copy"][0] == "object copy {"
    assert declared("include/clock.h") == {
        "cv_timespec_t": ("typedef struct { . . . } cv_timespec_t;", 2, 5),
        "cv_timeval_t": ("typedef struct { . . . } cv_timeval_t;", 7, 10),
    }
    shown = run_show("include/clock.h::cv_timeval_t", where).view.text()
    assert shown == "typedef struct {\n  long tv_sec;\n  long tv_usec;\n} cv_timeval_t;"
    first = run_show("include/clock.h::cv_timespec_t", where).view.text()
    assert first.endswith("  long tv_nsec;\n} cv_timespec_t;") and "tv_usec" not in first
    elided = signature(
        run_show("include/part.hpp::testing.TestPartResult", where).view, "TestPartResult", "cpp"
    )
    assert [t for n, t in elided.rendered() if n is not None][-1] == "class TestPartResult {"


def test_outline_follows_the_working_tree(shop: Path) -> None:
    base = shop / "shop" / "base.py"
    base.write_text("# a comment\n# and another\n" + base.read_text())
    o, _ = run_outline("shop/base.py", Where.of(None, None, shop))
    assert (o.entries[0].start_line, o.entries[0].end_line, o.entries[0].stale) == (6, 15, "moved")
    base.write_text(base.read_text().replace("def load(self, key)", "def fetch(self, key)"))
    gone = {e.anchor: e.stale for e in run_outline("shop/base.py", Where.of(None, None, shop))[0].entries}
    assert gone["shop/base.py::Store.load"] == "missing"


def test_outline_cli_formats_and_errors(shop: Path) -> None:
    doc = json.loads(cora("outline", "shop/memory.py", "--format", "json", cwd=shop).stdout)
    assert [s["anchor"] for s in doc["symbols"]] == [
        "shop/memory.py::MemoryStore", "shop/memory.py::MemoryStore.save", "shop/memory.py::normalize",
    ]  # fmt: skip
    assert doc["lang"] == "python" and doc["symbols"][0]["signature"] == "class MemoryStore(Store):"
    blocks = cora("outline", "./shop/memory.py", cwd=shop).stdout
    assert blocks.startswith("<cora:chunk>") and 'kind="outline"' in blocks
    assert "8-12    def save(self, item):  (anchor: shop/memory.py::MemoryStore.save)" in blocks
    text = cora("outline", "shop/memory.py", "--format", "text", cwd=shop).stdout
    assert "  ::MemoryStore.save" in text
    bad = cora("outline", "shop/nope.py", cwd=shop)
    assert bad.returncode == 4 and bad.stderr.startswith("error: CORA-QRY-004: ")


def test_members_of_a_type_kept_whole_are_listed_and_shown(
    make_repo: Callable[[dict[str, str]], Path], private_cache: None
) -> None:
    """A small class is one chunk: its members have no chunk, yet outline lists them with the
    anchors a chunk of theirs would have, and show and related find them."""
    repo = make_repo({"point.py": "class Point:\n    x: int  # the x of it\n    y: int\n\n"
                                  "    def norm(self):\n        return abs(self.x)\n"})  # fmt: skip
    assert cora("index", "--model", "none", "-q", cwd=repo).returncode == 0
    o, _ = run_outline("point.py", Where.of(None, None, repo))
    assert [(e.anchor, e.kind, e.depth, e.start_line, e.end_line, e.stale) for e in o.entries] == [
        ("point.py::Point", "type", 0, 1, 6, None),
        ("point.py::Point.x", "field", 1, 2, 2, None),
        ("point.py::Point.y", "field", 1, 3, 3, None),
        ("point.py::Point.norm", "method", 1, 5, 6, None),
    ]
    assert o.entries[3].signature == "def norm(self):" and o.entries[3].declared == "method"
    parses = nested._parsed.cache_info().misses
    assert run_outline("point.py", Where.of(None, None, repo))[0] == o  # the file parsed once a process
    assert nested._parsed.cache_info().misses == parses
    shown = json.loads(cora("show", "point.py::Point.y", "--format", "json", cwd=repo).stdout)
    assert (shown["symbol"], shown["kind"], shown["text"], shown["stale"]) == (
        "y",
        "field",
        "    y: int",
        None,
    )
    (repo / "point.py").write_text("# moved down\n" + (repo / "point.py").read_text())
    moved = json.loads(cora("show", "point.py::Point.norm", "--format", "json", cwd=repo).stdout)
    assert (moved["start_line"], moved["stale"]) == (6, "moved")
    assert cora("related", "point.py::Point.norm", cwd=repo).returncode == 0
    (repo / "point.py").unlink()
    gone = cora("show", "point.py::Point.norm", cwd=repo)
    assert gone.returncode == 4 and gone.stderr.startswith("error: CORA-QRY-003: ")
    outline = run_outline("point.py", Where.of(None, None, repo))[0]
    assert {e.stale for e in outline.entries} == {"missing"}  # indexed lines, marked
    assert cora("show", "point.py::Point.nope", cwd=repo).returncode == 4


def test_agents_prints_the_snippet_and_a_client_config(tmp_path: Path) -> None:
    out = cora("agents", cwd=tmp_path)
    assert out.returncode == 0
    for tool in ("`search`", "`show`", "`related`", "`outline(path)`", "anchor"):
        assert tool in out.stdout
    config = json.loads(cora("agents", "--json", cwd=tmp_path).stdout)
    server = config["mcpServers"]["cora-ci"]
    assert server["args"] == ["mcp"] and Path(server["command"]).name == "cora-ci"
    ran = subprocess.run([server["command"] if os.sep in server["command"] else CORA, "--version"],
                         capture_output=True, text=True, check=False)  # fmt: skip
    assert ran.returncode == 0  # the command it registers runs


def test_related_reads_the_bundle_the_repository_has_now(shop: Path) -> None:
    (shop / "shop" / "audit.py").write_text("from shop.memory import normalize\n\n\ndef audit(x):\n"
                                            "    return normalize(x)\n")  # fmt: skip
    git(shop, "add", "-A")
    git(shop, "commit", "-qm", "audit")
    assert cora("index", "--model", "none", "-q", cwd=shop).returncode == 0
    assert ("caller", "shop/audit.py::audit") in _relations(shop, "shop/memory.py::normalize")


# ---- outline and show agree ---------------------------------------------------------------------

_MEMBER = st.one_of(
    st.builds(lambda n, note: f"    {n}: int = 0{note}\n", st.sampled_from(["size", "name", "count", "limit"]),
              st.sampled_from(["", "  # the size, not the count", "  # name, then limit"])),
    st.builds(
        lambda n, body: f"    def {n}(self):\n" + "".join(f"        x{i} = {i} * len(str(self))\n" for i in range(body))
        + "        return None\n",
        st.sampled_from(["run", "stop", "load", "save", "parse"]), st.integers(0, 40),
    ),
)  # fmt: skip


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(classes=st.lists(st.lists(_MEMBER, min_size=1, max_size=6), min_size=1, max_size=3))
def test_every_outline_entry_is_what_show_gives_for_its_anchor(
    tmp_path: Path, classes: list[list[str]]
) -> None:
    """Whatever the chunker made of a file (types split, kept whole, small siblings merged), each
    symbol of its outline is one anchor that `show` finds, with the same lines."""
    src = "".join(f"class C{i}:\n" + "".join(members) + "\n\n" for i, members in enumerate(classes))
    root = tmp_path / f"t{abs(hash(src))}"
    root.mkdir()
    (root / "m.py").write_text(src)
    build(root, model="none")
    where = Where.of(None, root, root)
    entries = run_outline("m.py", where)[0].entries
    assert len({e.anchor for e in entries}) == len(entries)
    assert {f"m.py::C{i}" for i in range(len(classes))} <= {e.anchor for e in entries}
    for e in entries:
        shown = run_show(e.anchor, where)
        assert (shown.view.start, shown.view.end, shown.stale) == (e.start_line, e.end_line, None), e
        assert shown.symbol == e.symbol and e.signature in shown.view.text()
        assert mentions(e.signature.split("#")[0], e.symbol), e  # its own declaration, not a comment's


def test_the_docs_show_what_agents_prints() -> None:
    docs = (Path(__file__).parent.parent / "docs" / "agents.md").read_text()
    assert f"```markdown\n{SNIPPET}```" in docs
    shown = json.loads(docs.split("```json\n", 1)[1].split("```", 1)[0])
    assert shown == client_config("cora-ci")


def test_a_member_sharing_its_chunk_has_its_own_callers_and_pages_come_after_code(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A rack trial: `escape` and `escape_path`, small siblings, share a chunk, and every caller of
    `escape` was listed as one of `escape_path`; a changelog entry and a page took caller slots;
    library code had a test's helper as a callee (a name's twin)."""
    repo = make_repo({
        "shop/text.py": "def escape(s):\n    return s.replace('&', '&amp;')\n\n\n"
                        "def escape_path(s):\n    return s.replace(' ', '%20')\n",
        "shop/render.py": "from shop.text import escape\n\n\ndef render(x):\n    return escape(x)\n",
        "shop/links.py": "from shop.text import escape_path\n\n\ndef link(p):\n    return escape_path(p) + fixture()\n",
        "tests/test_text.py": "def fixture():\n    return ''\n\n\ndef test_link():\n    assert escape_path('a b')\n",
        "docs/guide.md": "# Guide\n\n## Paths\n\nUse `escape_path` for the paths of links.\n",
        "CHANGES.md": "# Changes\n\n## 1.1\n\n- `escape_path` quotes spaces.\n",
    })  # fmt: skip
    build(repo, model="none")
    got = _relations(repo, "shop/text.py::escape_path")
    anchors = [a for _, a in got]
    assert ("caller", "shop/links.py::link") in got and ("caller", "shop/render.py::render") not in got, got
    assert ("test", "tests/test_text.py::test_link") in got, got
    pages = [i for i, (r, _) in enumerate(got) if r == "mention"]
    assert len(pages) == 2 and min(pages) > anchors.index("shop/links.py::link"), got
    assert ("caller", "shop/render.py::render") in _relations(repo, "shop/text.py::escape")
    of_link = _relations(repo, "shop/links.py::link")
    assert ("callee", "shop/text.py::escape_path") in of_link, of_link  # not the chunk's first, `escape`
    assert all(r != "callee" or not a.startswith("tests/") for r, a in of_link)


def test_an_anchor_written_otherwise_is_the_one_symbol_it_means(shop: Path) -> None:
    """Trials' agents spent calls on refusals whose hint named the symbol: `Router.url_path_for`
    without its path, Ruby's `Rack::Request#params`, an absolute path inside the repository. A
    name that one symbol ends with is that symbol; several, or a file not indexed, say so."""
    from cora_ci.errors import CoraError

    where = Where.of(None, None, shop)
    for written in ("MemoryStore.save", "MemoryStore#save", "MemoryStore::save()",
                    f"{shop.resolve()}/shop/memory.py::MemoryStore.save", "shop/memory.py::MemoryStore::save"):  # fmt: skip
        shown = run_show(written, where)
        assert (shown.anchor, shown.view.text().lstrip()[:8]) == (
            "shop/memory.py::MemoryStore.save",
            "def save",
        ), written
    rel, _ = run_related("MemoryStore.save", where, 3)
    assert rel.anchor == "shop/memory.py::MemoryStore.save" and rel.results
    with pytest.raises(CoraError) as several:
        run_show("save", where)
    assert several.value.code == "CORA-QRY-002" and "shop/base.py::Store.save" in (several.value.hint or "")
    assert "shop/memory.py::MemoryStore.save" in (several.value.hint or "")
    with pytest.raises(CoraError) as no_file:
        run_show("shop/nothere.py::Store.save", where)
    assert no_file.value.code == "CORA-QRY-004"
    with pytest.raises(CoraError) as in_file:
        run_show("shop/memory.py::MemoryStore.sav", where)
    assert in_file.value.code == "CORA-QRY-002"
    assert (in_file.value.hint or "").startswith("did you mean shop/memory.py::MemoryStore.save")
    assert run_outline(f"{shop.resolve()}/shop/base.py", where)[0].path == "shop/base.py"


def test_c_plus_plus_and_java_names_as_their_users_write_them(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """leveldb's and gson's trials: `DBImpl::Write` (anchored `leveldb.DBImpl::Write`),
    `leveldb::SkipList::Insert` (a template's), `com.google.gson.Gson#fromJson` (a package the
    anchor does not hold), `MapTypeAdapterFactory$Adapter.read` (a JVM binary name), and an
    overload by its parameters, `Gson.toJson(Object)`, as the hints print it."""
    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "db/db_impl.cc": "namespace leveldb {\n\nStatus DBImpl::Write(const WriteOptions& o, WriteBatch* b) {\n"
                         "  return Status::OK();\n}\n\n}  // namespace leveldb\n",
        "db/skiplist.h": "namespace leveldb {\n\ntemplate <typename Key, class Comparator>\n"
                         "void SkipList<Key, Comparator>::Insert(const Key& key) {\n  head_ = key;\n}\n\n}\n",
        "src/com/google/gson/Gson.java": "package com.google.gson;\n\npublic final class Gson {\n"
            "  public String toJson(Object src) {\n    return src.toString();\n  }\n\n"
            "  public String toJson(Object src, Type t) {\n    return src.toString() + t;\n  }\n\n"
            "  public <T> T fromJson(String json) {\n    return null;\n  }\n}\n",
        "src/com/google/gson/internal/MapTypeAdapterFactory.java": "package com.google.gson.internal;\n\n"
            "public final class MapTypeAdapterFactory {\n  private final class Adapter {\n"
            "    public Object read(JsonReader in) {\n      return in.next();\n    }\n  }\n}\n",
    })  # fmt: skip
    build(repo, model="none")
    where = Where.of(None, None, repo)
    for written, anchor in [
        ("DBImpl::Write", "db/db_impl.cc::leveldb.DBImpl::Write"),
        ("leveldb::DBImpl::Write", "db/db_impl.cc::leveldb.DBImpl::Write"),
        ("leveldb::SkipList::Insert", "db/skiplist.h::leveldb.SkipList<Key, Comparator>::Insert"),
        ("com.google.gson.Gson#fromJson", "src/com/google/gson/Gson.java::Gson.fromJson"),
        ("Gson.toJson(Object)", "src/com/google/gson/Gson.java::Gson.toJson(Object)"),
        ("MapTypeAdapterFactory$Adapter.read",
         "src/com/google/gson/internal/MapTypeAdapterFactory.java::MapTypeAdapterFactory.Adapter.read"),
    ]:  # fmt: skip
        assert run_show(written, where).anchor == anchor, written


def test_a_rust_trait_implementations_member_by_its_type(make_repo: Callable[[dict[str, str]], Path]) -> None:
    """bat, a trial: a backtrace prints `InteractivePrinter::print_line`, the bundle anchors it
    `<InteractivePrinter as Printer>.print_line`: written either way, it is that member; and a
    member of a small impl kept whole, `Line::default`, which has no chunk of its own."""
    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "src/printer.rs": "pub trait Printer {\n    fn print_line(&mut self, n: usize) -> usize;\n}\n\n"
                          "pub struct InteractivePrinter {\n    width: usize,\n}\n\n"
                          "impl Printer for InteractivePrinter {\n    fn print_line(&mut self, n: usize) -> usize {\n"
                          "        n + self.width\n    }\n}\n",
        "src/line.rs": "impl Default for Line {\n    fn default() -> Self {\n        Line { n: 0 }\n    }\n}\n\n"
                       "pub struct Line {\n    n: usize,\n}\n",
    })  # fmt: skip
    build(repo, model="none")
    where = Where.of(None, None, repo)
    want = "src/printer.rs::<InteractivePrinter as Printer>.print_line"
    for written in ("InteractivePrinter::print_line", "src/printer.rs::InteractivePrinter.print_line"):
        assert run_show(written, where).anchor == want, written
    # a small impl kept whole with the struct after it: its member has no chunk of its own
    (repo / ".cora.toml").unlink()
    git(repo, "commit", "-qam", "default sizes")
    build(repo, model="none")
    shown = run_show("Line::default", where)
    assert shown.anchor == "src/line.rs::<Line as Default>.default", shown.anchor
    assert shown.view.text().lstrip().startswith("fn default() -> Self {")


def test_what_a_function_calls_comes_before_the_types_it_names(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """An httpx trial: `related Client.send` listed the types of its annotations (`Request`,
    `Response`, `AuthTypes`: hubs everything names) above the three functions it calls, which
    the default ten left out. A callee it calls comes before one it only names."""
    models = "".join(
        f"class {t}:\n    def __init__(self):\n        self.x = 1\n\n\n"
        for t in ("Request", "Response", "Auth")
    )
    users = "".join(
        f"def use_{n}(r: Request, s: Response, a: Auth) -> Response:\n    return s\n\n\n" for n in range(8)
    )
    client = (
        "from shop.models import Request, Response, Auth\n\n\n"
        "def _build_auth(auth):\n    return auth\n\n\n"
        "def _send_handling_auth(request, auth):\n    return request\n\n\n"
        "def send(request: Request, auth: Auth = None) -> Response:\n"
        "    auth = _build_auth(auth)\n    return _send_handling_auth(request, auth)\n"
    )
    repo = make_repo({".cora.toml": "min_tokens = 0\n", "shop/models.py": models, "shop/users.py": users,
                      "shop/client.py": client})  # fmt: skip
    build(repo, model="none")
    callees = [a for rel, a in _relations(repo, "shop/client.py::send") if rel == "callee"]
    assert callees[:2] == ["shop/client.py::_send_handling_auth", "shop/client.py::_build_auth"] or callees[
        :2
    ] == ["shop/client.py::_build_auth", "shop/client.py::_send_handling_auth"], callees
    assert {"shop/models.py::Request", "shop/models.py::Response", "shop/models.py::Auth"} <= set(callees[2:])


def test_outline_declares_a_function_by_its_code_not_its_docs_example(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A phoenix trial: 119 of 1,586 symbols were declared by a line of their `@doc` heredoc
    (`pipe_through [:browser]` for `defmacro pipe_through`), an example naming them; and
    a symbol in two overlapping parts read the heredoc's closing line twice."""
    doc = (
        '  @doc """\n  Pipes the connection through the pipelines.\n\n      pipe_through [:browser]\n  """\n'
    )
    body = "".join(f"    step_{n}(pipes)\n" for n in range(120))
    ex = f"defmodule Phoenix.Router do\n{doc}  defmacro pipe_through(pipes) do\n{body}  end\nend\n"
    repo = make_repo({"lib/phoenix/router.ex": ex})
    build(repo, model="none")
    outline = {
        e.symbol: e.signature
        for e in run_outline("lib/phoenix/router.ex", Where.of(None, None, repo))[0].entries
    }
    assert outline["pipe_through"] == "defmacro pipe_through(pipes) do", outline


def test_a_rust_mod_tests_is_tests_in_the_file_it_tests(make_repo: Callable[[dict[str, str]], Path]) -> None:
    """A ripgrep trial: a `#[cfg(test)] mod tests` in the file it tests was code to the ranking and to
    `related` (`tests.case_insensitive` a callee of `add_line`; such tests took 14 of 100 first places
    of ten bug reports). Its chunks are tests: after the code, and tests in `related`."""
    rs = (
        "pub fn parse_size(text: &str) -> Option<u64> {\n    text.trim().parse().ok()\n}\n\n"
        "#[cfg(test)]\nmod tests {\n    use super::parse_size;\n\n    fn size(text: &str) -> u64 {\n        parse_size(text).unwrap()\n    }\n\n"
        "    #[test]\n    fn parse_size_of_a_human_readable_size() {\n"
        '        assert_eq!(parse_size("10k"), Some(10240));\n        assert_eq!(parse_size("2M"), None);\n    }\n}\n'
    )
    repo = make_repo({".cora.toml": "min_tokens = 0\n", "src/human.rs": rs})
    build(repo, model="none")
    got = [
        r.anchor for r in run_query("parse a human readable size", Where.of(None, None, repo), k=3).results
    ]
    assert got.index("src/human.rs::parse_size") < got.index(
        "src/human.rs::tests.parse_size_of_a_human_readable_size"
    )
    assert ("test", "src/human.rs::tests.parse_size_of_a_human_readable_size") in _relations(
        repo, "src/human.rs::parse_size"
    )
    # a name only the tests define is still found first (ripgrep's `tests.inexact` helper)
    named = run_query("size", Where.of(None, None, repo), k=2).results
    assert named[0].anchor == "src/human.rs::tests.size", [r.anchor for r in named]


def test_a_rust_function_marked_test_is_a_test_outside_a_mod_tests(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """A ripgrep trial: its flag definitions follow each flag with a `#[cfg(test)] #[test] fn
    test_type_add`, no `mod tests` around it, and "parse the --type-add flag" put that test second,
    above the flag's own code. A function marked as a test is a test wherever it is; one merely
    named `test_...` is not."""
    rs = (
        "/// The --type-add flag: a file type definition added to the matcher.\n"
        "pub fn add_type_flag(args: &mut Args, value: &str) {\n    args.types.push(value.to_string());\n}\n\n"
        "pub fn test_and_set_type_flag(args: &mut Args, value: &str) -> bool {\n"
        "    let had = args.types.is_empty();\n    args.types.push(value.to_string());\n    had\n}\n\n"
        "#[cfg(test)]\n#[test]\nfn test_type_add_flag() {\n"
        '    let args = parse_flags(&["--type-add", "x:*.x"]);\n'
        '    assert_eq!(args.types, vec!["--type-add type flag"]);\n}\n'
    )
    repo = make_repo({".cora.toml": "min_tokens = 0\n", "src/flags.rs": rs})
    build(repo, model="none")
    ranked = run_query("type add flag", Where.of(None, None, repo), k=3).results
    demoted = {r.anchor: r.hit.explain.get("demoted") for r in ranked}
    assert demoted.get("src/flags.rs::test_type_add_flag") == "test", demoted
    assert demoted.get("src/flags.rs::test_and_set_type_flag", "absent") != "test", demoted
    order = [r.anchor for r in ranked]
    assert order.index("src/flags.rs::add_type_flag") < order.index("src/flags.rs::test_type_add_flag"), order


def test_a_callee_of_merged_siblings_is_named_after_one_it_names(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """An httpx trial: `Client.send` uses `ClientState.CLOSED` and `ClientState.OPENED`, merged with
    `UNOPENED` in one chunk, and the callee was named `UNOPENED`, the chunk's first. Named after
    the first member it names (the chunk whole: it names two)."""
    members = "".join(
        f"    # {n}:\n    #   The client is {n.lower()}, as a long comment of the state says it here.\n"
        f"    {n} = {i}\n"
        for i, n in enumerate(("UNOPENED", "OPENED", "CLOSED"), 1)
    )
    py = (
        'import enum\n\n\nclass State(enum.Enum):\n    """The client\'s state."""\n\n' + members + "\n\n"
        "def send(client):\n    if client.state == State.CLOSED:\n        raise RuntimeError('closed')\n"
        "    client.state = State.OPENED\n    return client\n"
    )
    repo = make_repo({"web/client.py": py})
    build(repo, model="none")
    callees = [a for rel, a in _relations(repo, "web/client.py::send") if rel == "callee"]
    assert callees and callees[0] in ("web/client.py::State.OPENED", "web/client.py::State.CLOSED"), callees
