"""Anchors re-bound to the working tree: the locator agrees with the chunker, chunks follow edits.

The reference answer is always the chunker itself: a symbol located in an edited file must be
where a fresh `chunk_file` of that file puts it, with the same text.
"""

from __future__ import annotations

import os
import sysconfig
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cora_ci
from cora_ci.chunking import chunk_file
from cora_ci.chunking.model import Chunk
from cora_ci.config import Config, from_mapping
from cora_ci.files.text import decode
from cora_ci.rebind import WorkTree, bind
from cora_ci.rebind.locator import locate
from cora_ci.rebind.view import declaring, from_chunk

CFG = Config()


def _src(text: str) -> bytes:
    return "\n".join(decode(text.encode()).lines).encode()


def _anchored(chunks: list[Chunk]) -> list[tuple[Chunk, str, str]]:
    """(chunk, qualified anchor, symbol) of every structural symbol chunk, each of its anchors."""
    out = []
    for c in chunks:
        if c.strategy == "structural" and c.kind not in ("file", "module"):
            out.extend((c, a.split("::", 1)[1], s) for a, s in zip(c.anchors, c.symbols, strict=True))
    return out


PY_FILES = sorted(Path(cora_ci.__file__).parent.rglob("*.py"))
STDLIB = Path(sysconfig.get_paths()["stdlib"])
STDLIB_FILES = [
    STDLIB / n for n in ("enum.py", "mailbox.py", "pdb.py", "argparse.py") if (STDLIB / n).is_file()
]


@pytest.mark.parametrize("path", PY_FILES + STDLIB_FILES, ids=lambda p: p.name)
def test_locate_finds_every_symbol_of_real_files_where_the_chunker_puts_it(path: Path) -> None:
    data = path.read_bytes()
    lines = decode(data).lines
    shifted = ["# a comment", "", "X = 1", "", *lines]
    src = "\n".join(shifted).encode()
    fresh = chunk_file(path.name, src, CFG).chunks
    for c, qual, name in _anchored(fresh):
        loc = locate("python", src, qual, name)
        assert loc is not None, qual
        assert loc.anchor == qual
        if len(c.anchors) == 1 and "Part " not in c.header:
            assert (loc.sym.start + 1, loc.sym.end + 1) == (c.start_line, c.end_line), qual


SAMPLES = {
    "Service.cs": """\
        namespace Example.Managers
        {
            public class AgentManager
            {
                /// <summary>Adds a context test.</summary>
                public int AddTest(string name) { return name.Length; }

                public int AddTest(int n)
                {
                    return n;
                }
            }
        }
        """,
    "Scoped.cs": """\
        namespace Example.Scoped;

        public class Store
        {
            public void Save(int id)
            {
                System.Console.WriteLine(id);
            }
        }
        """,
    "app.ts": """\
        import { api } from "./api";

        export class UserView {
          constructor(private id: number) {}

          render(): string {
            return api(this.id).name;
          }
        }

        export const helpers = {
          format(x: number): string {
            return String(x);
          },
        };

        export function render(id: number): string {
          return new UserView(id).render();
        }
        """,
    "mixin.js": """\
        const _load = Symbol('load')

        module.exports = cls => class Loader extends cls {
          #cache = new Map()

          // loads everything
          async [_load] () {
            const text = `
        a template literal at column 0 ${this.#cache.size}
        `
            return this.#run(text)
          }

          #run (text) {
            return text.trim()
          }
        }
        """,
    "point.rs": """\
        use std::fmt;

        pub struct Point { x: i32, y: i32 }

        impl fmt::Display for Point {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "({}, {})", self.x, self.y)
            }
        }

        impl Point {
            pub fn new(x: i32, y: i32) -> Point {
                Point { x, y }
            }
        }
        """,
    "box.hpp": """\
        namespace lib {

        /// A value in a box.
        template <typename T,
                  typename Alloc = std::allocator<T>>
        class Box {
         public:
          // The value, converted.
          template <typename U>
          U get() const { return U(value_); }

         private:
          T value_;
        };

        template <typename T>
        auto make_box(T value) -> Box<T> {
          return Box<T>{value};
        }

        }  // namespace lib
        """,
    "db_test.cc": """\
        #include "gtest/gtest.h"

        TEST(FormatTest, InternalKeyShortestSuccessor) {
          ASSERT_EQ(1, 1);
        }

        TEST_F(DBTest, Empty) {
          ASSERT_TRUE(db_ != nullptr);
        }

        TEST_F(DBTest, Empty2) {
          ASSERT_TRUE(db_ == nullptr);
        }
        """,
    "Box.m": """\
        NS_ASSUME_NONNULL_BEGIN

        @interface Box : NSObject
        @property (nonatomic, copy) NSString *name;
        - (void)shake;
        @end

        NS_ASSUME_NONNULL_END

        @implementation Box {
          NSInteger _size;
        }

        - (void)shake {
          _size += 1;
        }

        @end
        """,
    "point.go": """\
        package geo

        type Point struct {
            X, Y int
        }

        func (p *Point) String() string {
            return fmt.Sprintf("(%d, %d)", p.X, p.Y)
        }

        func New(x, y int) *Point {
            return &Point{x, y}
        }
        """,
    "Dup.java": """\
        package demo;

        public class Dup {
            public int size(int a) {
                return a;
            }

            public int size(String s) {
                return s.length();
            }
        }
        """,
    "commented.py": """\
        class Box:
            # the first member: its comment is the header's, not the member's
            def first(self):
                return 1

            # the second member's comment is its own
            @staticmethod
            def second():
                return 2
        """,
    "dup.py": """\
        def helper(x):
            return x


        def helper(x, y):
            return x + y


        class Auth:
            @property
            def name(self):
                return "n"

            @name.setter
            def name(self, value):
                self._n = value
        """,
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_locate_handles_namespaces_overloads_receivers_and_impls(name: str) -> None:
    text = textwrap.dedent(SAMPLES[name])
    before = (
        "\n".join(["// moved", "", *text.splitlines()]) if not name.endswith(".py") else "# moved\n\n" + text
    )
    src = _src(before)
    result = chunk_file(name, src, from_mapping({"min_tokens": 0}))
    found = _anchored(result.chunks)
    assert found, name
    for c, qual, sym in found:
        loc = locate(result.lang, src, qual, sym)
        assert loc is not None and loc.anchor == qual, (name, qual)
        if len(c.anchors) == 1:
            assert (loc.sym.start + 1, loc.sym.end + 1) == (c.start_line, c.end_line), (name, qual)


def test_locate_returns_none_for_a_deleted_or_renamed_symbol() -> None:
    src = _src(
        "class Auth:\n    def login(self):\n        return 1\n\n    def logout(self):\n        return 2\n"
    )
    assert locate("python", src, "Auth.login", "login") is not None
    gone = _src("class Auth:\n    def logout(self):\n        return 2\n")
    assert locate("python", gone, "Auth.login", "login") is None
    renamed = _src("class Auth:\n    def sign_in(self):\n        login = 1\n        return login\n")
    assert locate("python", renamed, "Auth.login", "login") is None
    moved = _src("class Other:\n    def login(self):\n        return 1\n")
    assert locate("python", moved, "Auth.login", "login") is None


def test_a_method_whose_calls_remain_is_gone_and_one_defined_beside_calls_is_found() -> None:
    calls = "class Auth:\n    def logout(self):\n        self.login()\n        return other.login ( 1 )\n"
    assert locate("python", _src(calls), "Auth.login", "login") is None
    both = _src(calls + "\n    def login(self):\n        return self.login()\n")
    loc = locate("python", both, "Auth.login", "login")
    assert loc is not None and (loc.sym.start, loc.sym.end) == (5, 6)
    js = _src("class A {\n  run() { this.#go(); }\n  #go() { return a.#go(); }\n}\n")
    loc = locate("javascript", js, "A.#go", "#go")
    assert loc is not None and loc.sym.start == 2
    assert locate("javascript", _src("class A {\n  run() { this.#go(); }\n}\n"), "A.#go", "#go") is None
    # C# writes an explicit interface implementation `.Name(`: there a call-like row may define it
    cs = _src("class A : IFoo\n{\n    void IFoo.Bar() { }\n}\n")
    loc = locate("csharp", cs, "A.Bar", "Bar")
    assert loc is not None and loc.sym.start == 2


def test_namesakes_in_other_classes_send_a_gone_method_to_one_full_parse() -> None:
    from cora_ci.rebind.locator import _any_inside
    from cora_ci.rebind.rows import Text as _Text

    base = "class Base:\n    def save(self):\n        return 0\n\n\nclass Child(Base):\n    def save(self):\n        return 1\n"
    filler = "".join(f"\n\ndef f{i}(x):\n    return x + {i}\n" for i in range(20))
    text = _Text(_src(base), "python")
    assert _any_inside(text, [1, 6], "Child.save", ".")
    assert not _any_inside(text, [1], "Child.save", ".")  # only Base's: no window to try
    assert _any_inside(text, [1], "save", ".")  # a top-level name: every place may be it
    assert _any_inside(text, [6], "Child.save(a.B)#2", ".")
    gone = _src(base.replace("    def save(self):\n        return 1\n", "    pass\n") + filler)
    assert locate("python", gone, "Child.save", "save") is None
    loc = locate("python", _src(base + filler), "Child.save", "save")
    assert loc is not None and loc.how == "window" and loc.sym.start == 6
    from cora_ci.rebind.locator import _parsed

    parses = _parsed.cache_info().misses
    assert locate("python", gone, "Child.save", "save") is None  # the same file again: parsed once
    assert locate("python", gone, "Base.save", "save") is not None
    assert _parsed.cache_info().misses == parses


def test_window_and_full_parse_agree_even_when_the_window_cannot_parse() -> None:
    # a name used inside a multi-line string and in clauses: the window holds broken fragments
    src = _src(
        'DOC = """\ndef target():\n    pass\n"""\n\n'
        "def user(x):\n    if x:\n        pass\n    elif target(x):\n        return (1 +\n target())\n\n"
        "def target():\n    return 2\n"
    )
    loc = locate("python", src, "target", "target")
    assert loc is not None and (loc.sym.start, loc.sym.end) == (12, 13)


# ---- bind: chunks served from the working tree ---------------------------------------------------

AUTH = '''\
"""Authentication."""
import os


class Auth:
    """Checks credentials."""

    def login(self, user, password):
        """Log a user in."""
        return password == "secret"

    def logout(self, user):
        """Log a user out."""
        print("bye", user)
        print("bye", user)
        print("bye", user)
        print("bye", user)
        print("bye", user)
        print("bye", user)


def helper():
    return os.getcwd()


x = 1
y = 2
'''


def _chunks(path: str, text: str, **cfg: object) -> list[Chunk]:
    return chunk_file(path, text.encode(), from_mapping(cfg)).chunks


def _no_parts(path: str, qual: str) -> int | None:
    return None


def _write(tmp: Path, path: str, text: str) -> WorkTree:
    (tmp / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp / path).write_text(text)
    return WorkTree(tmp)


def _by_anchor(chunks: list[Chunk], anchor: str) -> Chunk:
    return next(c for c in chunks if anchor in c.anchors)


def test_unchanged_chunks_are_fresh_even_if_the_file_changed_elsewhere(tmp_path: Path) -> None:
    indexed = _chunks("a.py", AUTH)
    tree = _write(tmp_path, "a.py", AUTH.replace("x = 1", "x = 10"))
    login = _by_anchor(indexed, "a.py::Auth.login")
    b = bind(login, tree, CFG, _no_parts)
    assert b.stale is None and b.view.text() == login.text and b.view.start == login.start_line


def test_moved_symbol_is_served_with_current_lines_and_text(tmp_path: Path) -> None:
    indexed = _chunks("a.py", AUTH)
    edited = AUTH.replace("import os\n", "import os\nimport sys\n\nDEBUG = sys.argv\n").replace(
        'return password == "secret"', 'ok = password == "secret"\n        return ok'
    )
    tree = _write(tmp_path, "a.py", edited)
    fresh = _chunks("a.py", edited)
    for anchor in ("a.py::Auth.login", "a.py::Auth", "a.py::helper", "a.py::Auth.logout"):
        b = bind(_by_anchor(indexed, anchor), tree, CFG, _no_parts)
        want = _by_anchor(fresh, anchor)
        assert b.stale == "moved", anchor
        assert b.view.text() == want.text, anchor
        assert (b.view.start, b.view.end) == (want.start_line, want.end_line), anchor


def test_deleted_symbol_is_missing_and_keeps_its_indexed_text_not_the_current_lines(tmp_path: Path) -> None:
    indexed = _chunks("a.py", AUTH)
    edited = AUTH.replace('    def login(self, user, password):\n        """Log a user in."""\n', "").replace(
        '        return password == "secret"\n\n', ""
    )
    tree = _write(tmp_path, "a.py", edited)
    login = _by_anchor(indexed, "a.py::Auth.login")
    b = bind(login, tree, CFG, _no_parts)
    assert b.stale == "missing"
    assert b.view.text() == login.text and b.view.start == login.start_line
    current = edited.splitlines()[login.start_line - 1 : login.end_line]
    assert b.view.text() != "\n".join(current)


def test_file_gone_or_outside_the_tree_is_missing(tmp_path: Path) -> None:
    indexed = _chunks("a.py", AUTH)
    tree = WorkTree(tmp_path)
    assert bind(indexed[1], tree, CFG, _no_parts).stale == "missing"
    (tmp_path.parent / "outside.py").write_text(AUTH)
    c = indexed[1]
    c.path = "../outside.py"
    assert bind(c, tree, CFG, _no_parts).stale == "missing"


def test_a_file_grown_past_max_file_bytes_is_not_read_and_its_chunks_are_missing(tmp_path: Path) -> None:
    indexed = _by_anchor(_chunks("a.py", AUTH), "a.py::Auth.login")
    (tmp_path / "a.py").write_text(AUTH + "#" * 5000)
    size = (tmp_path / "a.py").stat().st_size
    assert WorkTree(tmp_path, max_bytes=size).file("a.py") is not None
    small = WorkTree(tmp_path, max_bytes=size - 1)
    assert small.file("a.py") is None
    assert bind(indexed, small, CFG, _no_parts).stale == "missing"


def test_a_file_read_again_is_decoded_again_only_when_its_bytes_changed(tmp_path: Path) -> None:
    """A server reads the working tree afresh on every call (`Known` keeps what earlier calls
    read): the same bytes are the same file, an edit is seen even when it keeps the file's size
    and modification time, a file grown too large is not served from before."""
    from cora_ci.rebind.bind import Known

    login = _by_anchor(_chunks("a.py", AUTH), "a.py::Auth.login")
    path = tmp_path / "a.py"
    path.write_text(AUTH)
    known = Known(most=2)
    first = WorkTree(tmp_path, known=known).file("a.py")
    assert first is not None and WorkTree(tmp_path, known=known).file("a.py") is first
    st = path.stat()
    path.write_text(AUTH.replace('"secret"', '"hunter"'))  # the same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    edited = WorkTree(tmp_path, known=known)
    assert edited.file("a.py") is not first and '"hunter"' in "\n".join(edited.file("a.py").lines)
    assert bind(login, edited, CFG, _no_parts).stale == "moved"
    assert WorkTree(tmp_path, max_bytes=st.st_size - 1, known=known).file("a.py") is None
    for name in ("b.py", "c.py"):  # the oldest is forgotten beyond `most`
        (tmp_path / name).write_text(AUTH)
        WorkTree(tmp_path, known=known).file(name)
    assert known.get("a.py") is None and known.get("c.py") is not None
    small = Known(most=10, most_bytes=2 * len(AUTH))  # and beyond `most_bytes` of files
    for name in ("a.py", "b.py", "c.py"):
        WorkTree(tmp_path, known=small).file(name)
    assert [small.get(n) is not None for n in ("a.py", "b.py", "c.py")] == [False, True, True]
    (tmp_path / "big.py").write_text(AUTH * 3)  # larger than all it may keep: not kept
    assert WorkTree(tmp_path, known=small).file("big.py") is not None and small.get("big.py") is None
    assert small.get("c.py") is not None


@given(st.lists(st.tuples(st.sampled_from("abcdefg"), st.integers(0, 40)), max_size=40))
def test_known_files_stay_within_their_count_and_bytes(puts: list[tuple[str, int]]) -> None:
    from cora_ci.rebind.bind import Current, Known

    known = Known(most=4, most_bytes=60)
    for name, size in puts:
        cur = Current(b"x" * size, ["x" * size])
        known.put(name, cur)
        kept = {n: known.get(n) for n in "abcdefg" if known.get(n) is not None}
        held = sum(len(c.data) for c in kept.values())  # type: ignore[union-attr]
        assert len(kept) <= 4 and held <= 60 and known._bytes == held
        assert kept.get(name) is cur  # the newest is kept: no file is over the budget alone


def test_no_work_tree_serves_the_index(tmp_path: Path) -> None:
    c = _chunks("a.py", AUTH)[1]
    b = bind(c, None, CFG, _no_parts)
    assert b.stale is None and b.view.text() == c.text


def test_anonymous_code_and_markdown_sections_follow_by_text_and_by_rechunking(tmp_path: Path) -> None:
    md = "# Demo\n\nIntro.\n\n## Install\n\nRun it.\n"
    code = AUTH + "print(x, y)\n"
    indexed = _chunks("README.md", md) + _chunks("a.py", code)
    tree = _write(
        tmp_path, "README.md", "# Demo\n\nIntro, longer now.\nTwo lines.\n\n## Install\n\nRun it.\n"
    )
    _write(
        tmp_path,
        "a.py",
        "import os\n\n\n" + code.split("import os\n", 1)[1].replace("(x, y)", "(x, y)  # one"),
    )
    install = _by_anchor(indexed, "README.md::Demo/Install")
    b = bind(install, tree, CFG, _no_parts)
    assert b.stale == "moved" and b.view.start == install.start_line + 1 and b.view.text() == install.text
    module = next(c for c in indexed if c.kind == "module" and "print(x, y)" in c.text)
    assert bind(module, tree, CFG, _no_parts).stale == "missing"  # its text changed: not served
    header = next(c for c in indexed if c.kind == "file" and c.path == "a.py")
    hb = bind(header, tree, CFG, _no_parts)
    assert hb.stale == "moved" and "Authentication" not in hb.view.text()


def test_parts_and_merged_siblings_are_rebound(tmp_path: Path) -> None:
    body = "\n".join(f"    total += {i}" for i in range(120))
    text = f"def big():\n    total = 0\n{body}\n    return total\n\n\nA = 1\nB = 2\n"
    cfg = from_mapping({"max_tokens": 200})
    indexed = chunk_file("b.py", text.encode(), cfg).chunks
    parts = [c for c in indexed if "b.py::big" in c.anchors]
    assert len(parts) > 2
    edited = "import os\n\n\n" + text
    tree = _write(tmp_path, "b.py", edited)
    starts = {c.id: c.start_line for c in parts}

    def part_start(path: str, qual: str) -> int | None:
        return next(starts[c.id] for c in parts if "Part 1 of" in c.header)

    fresh = chunk_file("b.py", edited.encode(), cfg).chunks
    for c in parts:
        b = bind(c, tree, cfg, part_start)
        want = next(f for f in fresh if f.id == c.id)
        assert b.stale == "moved" and b.view.text() == want.text and b.view.start == want.start_line


def test_merged_siblings_that_an_edit_regroups_are_what_a_fresh_index_gives(tmp_path: Path) -> None:
    """Which small siblings merge depends on their sizes: `Store.add`, `remove` and `clear` are one
    chunk until `clear` grows by four lines; the chunk then re-bound is `add` and `remove` (found
    by hypothesis: the first and last members' lines, re-bound before, held `clear` too)."""
    indexed = _by_anchor(_chunks("s.py", _BASE), "s.py::Store.add")
    assert indexed.anchors[-1] == "s.py::Store.clear"
    edited = _BASE.replace(
        "        self.items = []\n", "        self.items = []\n" + "        value = 3\n" * 4
    )
    want = next(c for c in _chunks("s.py", edited) if c.id == indexed.id)
    assert "s.py::Store.clear" not in want.anchors
    b = bind(indexed, _write(tmp_path, "s.py", edited), CFG, _no_parts)
    assert b.stale == "moved" and (b.view.start, b.view.end, b.view.text()) == (
        want.start_line,
        want.end_line,
        want.text,
    )


def test_a_file_chunked_again_is_chunked_once_a_call_and_once_a_session_while_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Merged siblings re-bound by chunking their changed file again: once for all of its chunks
    a call asks for, and once a server's session (`Known`) until the file's bytes change."""
    import cora_ci.chunking
    from cora_ci.rebind.bind import Known

    indexed = _chunks("s.py", _BASE)
    merged = [c for c in indexed if len(c.anchors) > 1]
    calls: list[str] = []
    real = cora_ci.chunking.chunk_file

    def counted(path: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(cora_ci.chunking, "chunk_file", counted)
    known = Known()
    _write(tmp_path, "s.py", "import os\n\n\n" + _BASE)
    for _ in range(3):  # three calls of one session
        tree = WorkTree(tmp_path, known=known)
        assert all(bind(c, tree, CFG, _no_parts).stale == "moved" for c in merged * 2)
    assert merged and calls == ["s.py"]
    (tmp_path / "s.py").write_text("import sys\n\n\n" + _BASE)
    assert bind(merged[0], WorkTree(tmp_path, known=known), CFG, _no_parts).stale == "moved"
    assert calls == ["s.py", "s.py"]


def test_a_changed_files_chunks_are_located_once_a_session_while_its_bytes_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A starlette trial: an agent's edited `routing.py` made every call ~100 ms (5 unchanged), each
    re-locating the same chunks; a session (`Known`) keeps where they were found until the file's
    bytes change, and then finds them again in the new bytes."""
    import cora_ci.rebind.locator as locator
    from cora_ci.rebind.bind import Known

    indexed = [c for c in _chunks("s.py", _BASE) if len(c.anchors) == 1 and c.kind == "method"]
    calls: list[str] = []
    real = locator.locate

    def counted(lang: str, src: bytes, qual: str, name: str) -> Any:
        calls.append(qual)
        return real(lang, src, qual, name)

    monkeypatch.setattr(locator, "locate", counted)
    known = Known()
    _write(tmp_path, "s.py", "import os\n\n\n" + _BASE)
    for _ in range(3):  # three calls of one session
        tree = WorkTree(tmp_path, known=known)
        assert all(bind(c, tree, CFG, _no_parts).view.start == c.start_line + 3 for c in indexed)
    assert indexed and len(calls) == len(indexed)
    _write(tmp_path, "s.py", "import os\nimport sys\n\n\n" + _BASE)
    tree = WorkTree(tmp_path, known=known)
    assert all(bind(c, tree, CFG, _no_parts).view.start == c.start_line + 4 for c in indexed)
    assert len(calls) == 2 * len(indexed)


# A property: whatever lines that define nothing are inserted between top-level statements or
# inside function bodies, every symbol chunk re-bound to the edited file has the text and lines a
# fresh index gives it.

_BASE = (
    AUTH
    + '''

class Store:
    """Keeps things."""

    items: list = []

    def add(self, item):
        self.items.append(item)
        return len(self.items)

    def remove(self, item):
        self.items.remove(item)
        for i in range(3):
            print(i)
        return len(self.items)

    def clear(self):
        self.items = []
        print("cleared")
        print("cleared")
        print("cleared")
        print("cleared")
'''
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    edits=st.lists(
        st.tuples(st.integers(0, 200), st.sampled_from(["", "# note", "setup(3)", "STMT"])), max_size=6
    )
)
def test_rebound_symbols_equal_a_fresh_index_of_the_edited_file(
    tmp_path: Path, edits: list[tuple[int, str]]
) -> None:
    lines = _BASE.splitlines()
    for pos, what in edits:
        at = pos % (len(lines) + 1)
        if what == "STMT":  # a statement inside the body the insertion point falls in, if any
            prev = next((ln for ln in reversed(lines[:at]) if ln.strip()), "")
            if not prev.startswith("        ") or prev.rstrip().endswith(":"):
                continue
            lines.insert(at, "        value = 3")
        elif (at < len(lines) and lines[at].startswith(" ")) or (at > 0 and lines[at - 1].startswith(" ")):
            continue  # top-level insertions only between top-level statements
        else:
            lines.insert(at, what)
    edited = "\n".join(lines) + "\n"
    indexed = _chunks("s.py", _BASE)
    fresh = {c.id: c for c in _chunks("s.py", edited)}
    tree = _write(tmp_path, "s.py", edited)
    for c in indexed:
        if c.kind in ("file", "module") or not c.anchors:
            continue
        want = fresh.get(c.id)
        b = bind(c, tree, CFG, _no_parts)
        assert want is not None
        assert b.stale in (None, "moved")
        assert b.view.text() == want.text, c.anchor
        assert (b.view.start, b.view.end) == (want.start_line, want.end_line), c.anchor


def test_from_chunk_keeps_line_numbers_and_markers() -> None:
    """Every chunk of this repository's own sources reads back as the same text, line by line."""
    for path in PY_FILES:
        data = path.read_bytes()
        lines = decode(data).lines
        for c in chunk_file(path.name, data, CFG).chunks:
            v = from_chunk(c)
            assert v.text() == c.text, (path, c.anchor)
            assert set(v.shown) == c.covered_lines(), (path, c.anchor)
            if not any(d.code == "CORA-CHK-008" for d in c.diagnostics):  # sliced lines are parts
                assert all(lines[n - 1] == t for n, t in v.shown.items()), (path, c.anchor)


_ROWS = st.lists(st.sampled_from(["", "# note", "x", "  x", "    x", "      x", "\tx", "  // c", "  *"]),
                 max_size=40)  # fmt: skip


@given(_ROWS, st.lists(st.tuples(st.integers(0, 45), st.integers(0, 9)), max_size=12))
def test_climbing_to_an_enclosing_row_matches_a_plain_scan(
    rows: list[str], asks: list[tuple[int, int]]
) -> None:
    """`up` remembers what earlier climbs passed; in any order of questions it answers as a
    row-by-row scan for the nearest code row indented less would."""
    from cora_ci.rebind.rows import Text as _Text

    text = _Text("\n".join(rows).encode(), "python")
    for row, level in asks:
        row = min(row, text.rows - 1)
        want = next((r for r in range(row, -1, -1) if 0 <= text.levels[r] < level), -1)
        assert text.levels.up(row, level) == want


def test_a_signature_ends_where_its_code_ends_a_trailing_comment_aside() -> None:
    from cora_ci.rebind.view import View, signature

    lines = ["def answer(bundle, text,", "           k) -> int:  # fmt: skip", "    x = text", "    return k"]
    cut = signature(View("a.py", 10, 13, {10 + i: t for i, t in enumerate(lines)}), "answer", "python")
    assert cut.text() == "def answer(bundle, text,\n           k) -> int:  # fmt: skip\n    . . ."
    assert (cut.start, cut.end) == (10, 13)
    hashy = ["def tag(s):", "    return '#' + s"]  # a `#` inside a string is not a comment's
    assert (
        signature(View("b.py", 1, 2, dict(enumerate(hashy, 1))), "tag", "python").text()
        == "def tag(s):\n    . . ."
    )


@pytest.mark.parametrize(
    ("lang", "lines", "declared"),
    [
        ("cpp", ["// Gets the summary.", "const char* summary() const;"], 1),
        ("java", ["/**", " * Returns the summary.", " */", "String summary() {"], 3),
        ("python", ["# summary: kept short", "def summary():"], 1),
        ("lua", ["-- summary of a result", "local function summary()"], 1),
        ("c", ["# define summary(x) (x)", "int summary_of(int);"], 0),  # the preprocessor's `#`
        ("javascript", ["#summary = '';", "// summary"], 0),  # a private field
        ("rust", ["/// The summary.", "#[inline]", "fn summary() {}"], 2),
        ("markdown", ["# summary", "The summary is short."], 0),  # a heading
        ("python", ["# summary", "# of nothing"], 0),  # only comments name it: the first
    ],
)
def test_a_symbol_is_declared_by_its_first_line_outside_a_comment(
    lang: str, lines: list[str], declared: int
) -> None:
    assert declaring(lines, "summary", lang) == declared
