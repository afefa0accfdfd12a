"""Budget packing and the three formats, on real bundles of small real git repositories."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import dedent_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cora_ci.build import build
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.chunking.model import ELISION, chunk_id
from cora_ci.chunking.tokens import default_counter
from cora_ci.rebind import WorkTree
from cora_ci.rebind.view import View, merge, signature
from cora_ci.render.answer import Result, pack
from cora_ci.render.formats import as_cora, as_json, as_text, doc_sentence
from cora_ci.render.source import BundleChunks
from cora_ci.retrieval.types import Hit

FILES = {
    ".cora.toml": "min_tokens = 0\n",  # every symbol its own chunk, however small
    "src/auth.py": '''\
        """Authentication helpers."""
        import os


        class Auth:
            """Checks credentials."""

            def login(self, user, password):
                """Log a user in. Returns True on success."""
                token = os.environ.get("TOKEN")
                return password == token

            def logout(self, user):
                """Log a user out."""
                print("bye", user)
                return None

            def refresh(self, user):
                """Refresh a session."""
                return self.login(user, "again")


        def helper(value):
            """Return the value twice."""
            return value * 2
        ''',
    "src/tags.py": '''\
        def render_tag(name):
            """Render </cora:content> & <cora:chunk> safely."""
            return "<" + name + ">" + "</cora:content>"
        ''',
    "src/point.rs": """\
        use std::fmt;

        pub struct Point { x: i32 }

        impl fmt::Display for Point {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "{}", self.x)
            }
        }
        """,
    "README.md": "# Demo\n\nSome text.\n\n## Install\n\nRun it.\n",
}


pytestmark = pytest.mark.usefixtures("private_cache")


@pytest.fixture
def repo(make_repo: Callable[[dict[str, str]], Path]) -> Path:
    repo = make_repo(dedent_files(FILES))
    build(repo, model="none")
    return repo


@pytest.fixture
def bundle(repo: Path) -> Bundle:
    return open_bundle(repo / ".cora" / "index")


def _hit(anchor: str, score: float = 1.0, full: bool = False) -> Hit:
    path, _, qual = anchor.partition("::")
    return Hit(chunk_id(path, qual or "file"), score, full=full)


def _numbers(r: Result) -> list[int]:
    return [n for n, _ in r.view.rendered() if n is not None]


def _all_chunk_hits(bundle: Bundle) -> list[Hit]:
    return [Hit(cid, 1.0 / (i + 1)) for i, cid in enumerate(bundle.chunks.ids)]


def test_a_member_hit_is_its_own_lines_and_its_parent_is_context(bundle: Bundle) -> None:
    results = pack([_hit("src/auth.py::Auth.login")], BundleChunks(bundle, None), None)
    assert len(results) == 1
    r = results[0]
    assert r.chunk.anchor == "src/auth.py::Auth.login" and not r.elided and r.stale is None
    assert (r.view.start, r.view.end) == (8, 11) and r.text.startswith("    def login(self, user, password):")
    assert r.text.endswith("return password == token") and "class Auth" not in r.text
    p = r.parent
    assert p is not None and (p.anchor, p.kind, p.label, p.text) == ("src/auth.py::Auth", "type", "class Auth",
                                                                      "class Auth:")  # fmt: skip
    assert (p.start, p.end) == (5, 20) and p.start <= r.view.start <= r.view.end <= p.end


def test_a_type_below_its_member_is_its_context_and_above_it_takes_it_in(bundle: Bundle) -> None:
    src = BundleChunks(bundle, None)
    hits = [_hit("src/auth.py::Auth.login"), _hit("src/auth.py::Auth", 0.9), _hit("src/auth.py::Auth.refresh", 0.8),
            _hit("src/auth.py::Auth.login", 0.5)]  # fmt: skip
    login, refresh = pack(hits, src, None)  # the class is where both sit, not a result of its own
    assert (login.chunk.anchor, refresh.chunk.anchor) == (
        "src/auth.py::Auth.login",
        "src/auth.py::Auth.refresh",
    )
    assert (
        login.parent is not None and login.parent.anchor == "src/auth.py::Auth" and "class" not in login.text
    )
    (r,) = pack([_hit("src/auth.py::Auth"), _hit("src/auth.py::Auth.login", 0.5)], src, None)
    nums = _numbers(r)
    assert nums == sorted(set(nums)) and r.chunk.anchor == "src/auth.py::Auth"
    assert r.text.startswith("class Auth:") and "return password == token" in r.text  # the member in full
    assert (
        "    def logout(self, user):\n        . . ." in r.text
        and r.members[1] == _hit("src/auth.py::Auth.login").chunk_id
    )


def test_results_of_different_places_stay_apart_in_rank_order(bundle: Bundle) -> None:
    hits = [
        _hit("src/auth.py::helper", 2.0),
        _hit("src/auth.py::Auth.logout", 1.0),
        _hit("README.md::Demo/Install"),
    ]
    results = pack(hits, BundleChunks(bundle, None), None)
    assert [r.chunk.anchor for r in results] == ["src/auth.py::helper", "src/auth.py::Auth.logout",
                                                 "README.md::Demo/Install"]  # fmt: skip


def test_a_tight_budget_cuts_lower_hits_to_signatures(bundle: Bundle) -> None:
    hits = [_hit("src/auth.py::helper", 2.0), _hit("src/auth.py::Auth.logout", 1.0)]
    src = BundleChunks(bundle, None)
    full = pack(hits, src, None)
    need = sum(r.tokens for r in full)
    r1, r2 = pack(hits, BundleChunks(bundle, None), full[0].tokens + 12)
    assert not r1.elided and r1.text == full[0].text
    assert r2.elided and r2.text.splitlines() == ["    def logout(self, user):", "        " + ELISION]
    assert r1.tokens + r2.tokens <= full[0].tokens + 12 < need


def test_the_budget_goes_to_the_best_result_first(bundle: Bundle) -> None:
    """Tokens in rank order: the best result in full when it fits, before lower results'
    signatures (ten signatures in 800 tokens had left out the best one's code)."""
    hits = [_hit("src/auth.py::helper", 2.0), _hit("src/auth.py::Auth.logout", 1.0), _hit("src/auth.py")]
    best = pack(hits, BundleChunks(bundle, None), None)[0]
    results = pack(hits, BundleChunks(bundle, None), best.tokens + 8)
    assert results[0].text == best.text and not results[0].elided
    assert sum(r.tokens for r in results) <= best.tokens + 8


def test_full_hits_are_verbatim_whatever_the_budget(bundle: Bundle) -> None:
    hits = [_hit("src/auth.py::helper", full=True), _hit("src/auth.py::Auth.logout")]
    results = pack(hits, BundleChunks(bundle, None), 1)
    assert len(results) == 1 and not results[0].elided
    assert results[0].text.endswith("return value * 2")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_budget_is_never_exceeded(bundle: Bundle, data: st.DataObject) -> None:
    pool = _all_chunk_hits(bundle)
    hits = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=12))
    budget = data.draw(st.integers(1, 600))
    results = pack(hits, BundleChunks(bundle, None), budget)
    total = sum(r.tokens for r in results)
    assert results  # never empty: the best hit stays, as a signature, even alone over the budget
    assert total <= budget or (len(results) == 1 and (results[0].elided or len(_numbers(results[0])) <= 2))
    counter = default_counter()
    for r in results:
        assert r.tokens == sum(counter.count_lines(r.text.split("\n")))
        nums = _numbers(r)
        assert nums == sorted(set(nums))
    # tokens in rank order: no result in full below an elided one (but one as short as its own
    # signature), and a bigger budget shows the best result at least as fully
    cut = next((n for n, r in enumerate(results) if r.elided), len(results))
    for r in results[cut:]:
        assert r.elided or signature(r.view, r.chunk.symbol, r.chunk.lang).text() == r.text
    more = pack(hits, BundleChunks(bundle, None), budget * 2)
    assert more[0].members[0] == results[0].members[0] and (results[0].elided or not more[0].elided)


def test_cora_blocks_have_the_spec_shape_and_escape_what_must_be(bundle: Bundle) -> None:
    hits = [_hit("src/tags.py::render_tag"), _hit("src/point.rs::<Point as Display>.fmt", 0.5)]
    results = pack(hits, BundleChunks(bundle, None), None)
    out = as_cora(results)
    blocks = re.findall(r"<cora:chunk>\n(.*?)\n</cora:chunk>", out, re.DOTALL)
    assert len(blocks) == 2 and out.count("<cora:chunk>") == 2
    shape = re.compile(
        r"  <cora:metadata>\n    (?P<meta>[^\n]*)\n  </cora:metadata>\n"
        r"  <cora:commentary>\n(?P<notes>(    [^\n]*\n)*)  </cora:commentary>\n"
        r"  <cora:content>\n(?P<content>.*)\n  </cora:content>$",
        re.DOTALL,
    )
    m0, m1 = (shape.match(b) for b in blocks)
    assert m0 is not None and m1 is not None
    attrs = dict(re.findall(r'(\w+)="([^"]*)"', m0["meta"]))
    assert attrs == {"file": "src/tags.py", "lines": "1-3", "symbol": "render_tag", "kind": "method",
                     "anchor": "src/tags.py::render_tag", "score": "1"}  # fmt: skip
    assert "&lt;/cora:content>" in m0["content"] and "</cora:content>" not in m0["content"]
    assert m0["content"].replace("&lt;/cora:", "</cora:").replace("&lt;cora:", "<cora:") == results[0].text
    assert "Render &amp; safely." in m0["notes"]  # the doc sentence drops tags; & is escaped
    rust = dict(re.findall(r'(\w+)="([^"]*)"', m1["meta"]))
    assert rust["anchor"] == "src/point.rs::&lt;Point as Display&gt;.fmt" and rust["symbol"] == "fmt"
    assert "Parent: impl &lt;Point as Display>" in m1["notes"] or "Parent:" in m1["notes"]


def test_commentary_has_header_doc_and_parent(bundle: Bundle) -> None:
    results = pack([_hit("src/auth.py::Auth.login")], BundleChunks(bundle, None), None)
    notes = re.search(r"<cora:commentary>\n(.*?)\n  </cora:commentary>", as_cora(results), re.DOTALL)
    assert notes is not None
    lines = [ln.strip() for ln in notes[1].splitlines()]
    assert lines[0] == "Method login of class Auth. Signature: def login(self, user, password)."
    assert lines[1] == "Log a user in."
    assert lines[2] == "Parent: class Auth (src/auth.py::Auth, lines 5-20): class Auth:"
    assert doc_sentence(results[0].chunk) == "Log a user in."


def test_json_has_exactly_the_issue_schema(bundle: Bundle) -> None:
    hits = [_hit("src/auth.py::helper", 2.0), _hit("src/auth.py::Auth.logout", 1.0), _hit("src/auth.py")]
    results = pack(hits, BundleChunks(bundle, None), 50)  # helper in full, the rest as signatures
    doc = json.loads(as_json("helper", "b", results))
    assert set(doc) == {"query", "bundle", "results"} and doc["query"] == "helper" and doc["bundle"] == "b"
    keys = {"path", "start_line", "end_line", "symbol", "anchor", "kind", "score", "text", "elided", "stale",
            "parent"}  # fmt: skip
    assert doc["results"] and all(set(r) == keys for r in doc["results"])
    first = doc["results"][0]
    assert first == {"path": "src/auth.py", "start_line": 23, "end_line": 25, "symbol": "helper",
                     "anchor": "src/auth.py::helper", "kind": "method", "score": 2.0,
                     "text": 'def helper(value):\n    """Return the value twice."""\n    return value * 2',
                     "elided": False, "stale": None, "parent": None}  # fmt: skip
    logout = next(r for r in doc["results"] if r["anchor"] == "src/auth.py::Auth.logout")
    assert logout["parent"] == {"path": "src/auth.py", "start_line": 5, "end_line": 20, "symbol": "Auth",
                                "anchor": "src/auth.py::Auth", "kind": "type", "text": "class Auth:"}  # fmt: skip
    assert any(r["elided"] for r in doc["results"])
    explained = json.loads(as_json("helper", "b", results, explain=True))["results"][0]
    assert set(explained) == {*keys, "explain"}


def test_text_is_numbered_and_styles_only_when_asked(bundle: Bundle) -> None:
    results = pack([_hit("src/auth.py::helper")], BundleChunks(bundle, None), None)
    lines = list(as_text(results))
    plain = [re.sub(r"\x1b\[[0-9;]*m", "", ln) for ln in lines]
    assert plain[0].startswith("── src/auth.py:23:  lines 23-25  method  helper")
    assert "23 │ def helper(value):" in plain
    assert any("\x1b[" in ln for ln in lines)  # styled; click strips styles when colour is off


def test_missing_results_never_merge_with_current_lines(repo: Path, bundle: Bundle) -> None:
    p = repo / "src/auth.py"
    text = p.read_text()
    start = text.index("    def login")
    p.write_text(text[:start] + text[text.index("    def logout") :])
    src = BundleChunks(bundle, WorkTree(repo))
    results = pack([_hit("src/auth.py::Auth"), _hit("src/auth.py::Auth.login", 0.5)], src, None)
    by = {r.chunk.anchor: r for r in results}
    login, auth = by["src/auth.py::Auth.login"], by["src/auth.py::Auth"]
    assert login.stale == "missing" and "return password == token" in login.text
    assert login.parent is not None and login.parent.start <= login.view.start  # indexed lines, both
    assert auth.stale == "moved" and "def login" not in auth.text
    assert "Gone from the working tree" in as_cora([login], commit="abc")


def test_a_file_chunk_is_described_by_the_file_own_docstring(bundle: Bundle) -> None:
    t = bundle.chunks
    head = next(t.chunk(r) for r in range(len(t)) if t.chunk(r).path == "src/auth.py")
    assert head.kind in ("file", "module")
    results = pack([Hit(head.id, 1.0)], BundleChunks(bundle, None), None)
    assert doc_sentence(results[0].chunk) == "Authentication helpers."
    assert "  <cora:commentary>\n    Authentication helpers.\n  </cora:commentary>" in as_cora(results)
    readme = next(t.chunk(r) for r in range(len(t)) if t.chunk(r).path == "README.md")
    empty = as_cora(pack([Hit(readme.id, 1.0)], BundleChunks(bundle, None), None))
    assert "\n\n" not in empty.split("<cora:content>")[0]  # no blank commentary line


def test_a_directive_or_an_attribute_is_no_doc_comment(make_repo: Callable[[dict[str, str]], Path]) -> None:
    """`#` starts a comment in Python, not in C or Rust: a C file's `#include` lines were its doc
    ("include include "util.h"), a Rust crate's `//! Utilities.` after `#![allow(...)]` read as
    "! Utilities.", and a `#define` above a function was that function's doc."""
    repo = make_repo({
        ".cora.toml": "min_tokens = 0\n",
        "util.c": '#include <stdio.h>\n#include "util.h"\n\nstatic int counter = 0;\n\n'
                  "#define STEP 1\nint bump(void) {\n    return counter += STEP;\n}\n",
        "lib.rs": "#![allow(dead_code)]\n//! Utilities.\n\n/// Adds one.\n#[inline]\npub fn bump(x: u32) -> u32 {\n    x + 1\n}\n",
        "tool.py": "# Tools for counting.\nimport os\n\n\n# Add one.\ndef bump(x):\n    return x + 1\n",
    })  # fmt: skip
    build(repo, model="none")
    t = open_bundle(repo / ".cora" / "index").chunks
    docs = {(c.path, c.symbol or c.kind): doc_sentence(c) for c in (t.chunk(r) for r in range(len(t)))}
    assert docs[("util.c", "bump")] == "" and all(d == "" for (p, _), d in docs.items() if p == "util.c")
    assert docs[("lib.rs", "bump")] == "Adds one."
    assert "Utilities." in {d for (p, _), d in docs.items() if p == "lib.rs"}
    assert docs[("tool.py", "bump")] == "Add one."
    assert "Tools for counting." in {d for (p, _), d in docs.items() if p == "tool.py"}


@given(ranges=st.lists(st.tuples(st.integers(1, 60), st.integers(0, 12)), min_size=1, max_size=6))
def test_merged_views_spans_are_the_ranges_they_are_made_of(ranges: list[tuple[int, int]]) -> None:
    """A merged view's spans: sorted, apart (a gap of a line at least between two), together
    exactly the lines of the views merged; one span when they meet, as any single view has."""
    views = [View("a.py", a, a + n, {i: f"line {i}" for i in range(a, a + n + 1)}) for a, n in ranges]
    merged = merge(views)
    spans = merged.spans
    assert list(spans) == sorted(spans) and all(b + 1 < c for (_, b), (c, _) in itertools.pairwise(spans))
    assert {n for a, b in spans for n in range(a, b + 1)} == {
        n for v in views for n in range(v.start, v.end + 1)
    }
    assert (spans[0][0], spans[-1][1]) == (merged.start, merged.end)
    assert merge([merged, views[0]]).spans == spans  # merging again changes nothing


def test_a_split_functions_doc_sentence_is_said_once(make_repo: Callable[[dict[str, str]], Path]) -> None:
    """A long function's first part has a header ending "Part 1 of 6.": its doc sentence, which
    the header holds before that, was printed there and again on its own line (jsoup's
    `consumeCharacterReference` under a budget)."""
    steps = "".join(f"    total += weights[{i}] * values[{i}]\n" for i in range(150))
    body = "def blend(values, weights):\n    '''Blend the colour channels of a pixel.'''\n    total = 0\n"
    repo = make_repo({".cora.toml": "max_tokens = 400\nmin_tokens = 0\n", "src/blend.py": body + steps})
    build(repo, model="none")
    b = open_bundle(repo / ".cora" / "index")
    t = b.chunks
    first = next(t.chunk(r) for r in range(len(t)) if re.search(r"Part 1 of \d+\.$", t.chunk(r).header))
    assert "Blend the colour channels of a pixel." in first.header
    out = as_cora(pack([Hit(first.id, 1.0)], BundleChunks(b, None), None))
    notes = out.split("<cora:commentary>")[1].split("</cora:commentary>")[0]
    assert notes.count("Blend the colour channels of a pixel.") == 1, notes
    assert re.search(r"Part 1 of \d+\.", notes)
