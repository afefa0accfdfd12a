"""C and C++ read past the macros alone on a line that open or close a scope (`chunking/macros.py`):
what they hid is chunked, found, followed by the graph and re-bound, and nothing else changes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import cora, first_result, run_chunk, uncovered
from hypothesis import given, settings
from hypothesis import strategies as st

from cora_ci.chunking.macros import blank_alone
from cora_ci.chunking.outline import _errors, parse, parser_for
from cora_ci.rebind.locator import locate

# fmt's base.h in little: `FMT_END_EXPORT` and the `namespace detail {` after it parsed as one
# function named `namespace`, whose body hid the template functions.
BASE_H = """\
#ifndef FMT_BASE_H_
#define FMT_BASE_H_

#include <stddef.h>

FMT_BEGIN_NAMESPACE
FMT_BEGIN_EXPORT

template <typename Char> class basic_string_view {
 public:
  constexpr auto size() const noexcept -> size_t { return size_; }

 private:
  size_t size_;
};

FMT_END_EXPORT

namespace detail {

enum class state { start, align, sign,
  width
};

// Parses the width of a replacement field.
template <typename Char>
FMT_CONSTEXPR auto parse_width(const Char* begin, const Char* end) -> const Char* {
  return begin == end ? end : begin + 1;
}

template <typename Char>
FMT_CONSTEXPR auto parse_precision(const Char* begin, const Char* end) -> const Char* {
  ++begin;
  return parse_width(begin, end);
}

}  // namespace detail

FMT_END_NAMESPACE
#endif  // FMT_BASE_H_
"""


def _defs(source: str) -> list[tuple[str, list[str], int, int]]:
    r = run_chunk("include/fmt/base.h", source, min_tokens=0)
    return [(c.kind, c.symbols, c.start_line, c.end_line) for c in r.chunks if c.kind in ("method", "type")]


def test_definitions_behind_a_scope_macro_are_chunked_with_the_text_as_written() -> None:
    """As if the macro lines were empty, but their text kept."""
    found = _defs(BASE_H)
    assert [s for _, syms, _, _ in found for s in syms] == [
        "basic_string_view", "size", "state", "parse_width", "parse_precision",
    ]  # fmt: skip
    macros = {"FMT_BEGIN_NAMESPACE", "FMT_BEGIN_EXPORT", "FMT_END_EXPORT", "FMT_END_NAMESPACE"}
    empty = "\n".join("" if line in macros else line for line in BASE_H.split("\n"))
    assert found == _defs(empty)
    r = run_chunk("include/fmt/base.h", BASE_H, min_tokens=0)
    width = next(c for c in r.chunks if c.symbols == ["parse_width"])
    assert "FMT_CONSTEXPR auto parse_width(" in width.text
    assert uncovered(r, BASE_H.encode()) == []
    assert any("FMT_END_EXPORT" in c.text for c in r.chunks)  # the macros are read, not lost


def test_only_a_line_that_no_declaration_follows_is_blanked() -> None:
    kept = [
        "enum color {\n  RED,\n  BLUE\n};\n",  # an enumerator alone: the line before goes on
        "FMT_INLINE\nstatic int f(void) { return 1; }\n",  # an attribute of what follows
        "#define TWICE(x) \\\n  DOUBLE(x)\nint y;\n",  # a macro's continued body
        "int x = FOO +\n  BAR\n  ;\n",
        "TEST(Suite, Name)\n{\n  EXPECT_TRUE(1);\n}\n",  # a test defined by a macro, brace below
    ]
    for src in kept:
        assert blank_alone(src.encode()) == src.encode(), src
    for src, gone in [
        ("G_BEGIN_DECLS\n\ntypedef struct _Box Box;\n\nG_END_DECLS\n", ["G_BEGIN_DECLS", "G_END_DECLS"]),
        ("class Box : public QObject {\n  Q_OBJECT\n public:\n  Box();\n};\n", ["Q_OBJECT"]),
        ("FMT_END_EXPORT\r\n\r\nnamespace detail {\r\n}\r\n", ["FMT_END_EXPORT"]),
        ("ABSL_NAMESPACE_BEGIN\r\nLIB_EXPORT\r\n/* a box */\r\nclass Box;\r\n", ["ABSL_", "LIB_EXPORT"]),
        ('FMT_VISIBILITY("hidden")  // an ld warning\ntemplate <typename T> void f();\n', ["FMT_VISIBILITY"]),
    ]:
        out = blank_alone(src.encode())
        assert len(out) == len(src.encode()) and out.count(b"\n") == src.count("\n")
        assert not any(g.encode() in out for g in gone), src


def test_a_file_that_parses_or_that_blanking_makes_worse_is_read_as_written() -> None:
    clean = b"namespace lib {\nint add(int a, int b) { return a + b; }\n}\n"
    assert parse("cpp", clean).root_node.text == clean
    # stray closing braces: blanking the macro after them leaves one more error, not one fewer
    worse = b"};\n}\nQ_OBJECT"
    assert blank_alone(worse) != worse
    plain = _errors(parser_for("cpp").parse(worse).root_node)[1]
    assert _errors(parser_for("cpp").parse(blank_alone(worse)).root_node)[1] > plain
    assert parse("cpp", worse).root_node.text == worse
    assert parse("python", b"FOO\nimport x\n").root_node.text == b"FOO\nimport x\n"


LINES = st.sampled_from([
    "FMT_BEGIN_NAMESPACE", "FMT_END_EXPORT", "Q_OBJECT", 'FMT_VISIBILITY("hidden")', "namespace detail {",
    "}", "};", "template <typename T>", "int f(T x) { return x; }", "enum e { A,", "  B", "};",
    "#define X 1", "#if FOO", "#endif", "class C {", " public:", "  int g();", "", "// BAR", "int v = W +",
    "  ZED", "  ;", "static int h(void)", "{", "  return 0;",
])  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(LINES, max_size=30), st.sampled_from(["c", "cpp"]))
def test_blanking_keeps_every_byte_place_and_never_parses_worse(lines: list[str], lang: str) -> None:
    src = "\n".join(lines).encode()
    out = blank_alone(src)
    assert len(out) == len(src)
    assert [i for i, b in enumerate(out) if b == 10] == [i for i, b in enumerate(src) if b == 10]
    for a, b in zip(src.split(b"\n"), out.split(b"\n"), strict=True):
        assert b in (a, b" " * len(a))  # a line is kept or blanked whole
    assert _errors(parse(lang, src).root_node)[1] <= _errors(parser_for(lang).parse(src).root_node)[1]


def test_a_definition_behind_a_scope_macro_is_located_where_the_chunker_puts_it() -> None:
    src = ("// moved\n\n" + BASE_H).encode()
    r = run_chunk("include/fmt/base.h", src, min_tokens=0)
    for c in r.chunks:
        if c.kind not in ("method", "type"):
            continue
        loc = locate("cpp", src, c.anchors[0].split("::", 1)[1], c.symbols[0])
        assert loc is not None and (loc.sym.start + 1, loc.sym.end + 1) == (c.start_line, c.end_line), (
            c.anchor
        )


def test_a_function_behind_a_scope_macro_is_found_by_name_and_followed_after_an_edit(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    main = '#include "fmt/base.h"\nint main() { return *fmt::detail::parse_precision("1", "2"); }\n'
    repo = make_repo({"include/fmt/base.h": BASE_H, "src/main.cc": main})
    out = cora("index", "--model", "none", "-q", cwd=repo, **env)
    assert out.returncode == 0, out.stderr
    _, _, start, end = next(d for d in _defs(BASE_H) if d[1] == ["parse_width"])
    hit = first_result(repo, "parse_width", env)
    assert (hit["anchor"], hit["start_line"], hit["end_line"]) == (
        "include/fmt/base.h::detail.parse_width",
        start,
        end,
    )
    (repo / "include/fmt/base.h").write_text(BASE_H.replace("FMT_END_EXPORT\n", "FMT_END_EXPORT\n\n\n"))
    hit = first_result(repo, "parse_width", env)
    assert (hit["stale"], hit["start_line"], hit["end_line"]) == ("moved", start + 2, end + 2)
    assert "FMT_CONSTEXPR auto parse_width(" in str(hit["text"])
