"""C and C++ read past the macros alone on a line that open or close a scope (`chunking/macros.py`),
and C past its export macros and `extern "C"` braces: what they hid is chunked, found, followed by
the graph and re-bound, and nothing else changes."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import cora, first_result, run_chunk, uncovered
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cora_ci.chunking.macros import blank_alone, blank_exports, blank_guard, blank_macros
from cora_ci.chunking.outline import _read, _walk, parse, parser_for
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


# libuv's uv.h in little: an export macro before every prototype, `extern "C" {` and its `}` each
# alone in an `#ifdef __cplusplus`, an X-macro expanded in an enum below its `#define`, macros of
# fields alone in a struct, and a macro of declarations standing apart. The whole header, its API,
# was one parse error: chunked by lines (CORA-CHK-001), none of its types found.
UV_H = """\
#ifndef UV_H
#define UV_H
#ifdef __cplusplus
extern "C" {
#endif

#define UV_EXTERN __attribute__((visibility("default")))

#define UV_ERRNO_MAP(XX) XX(E2BIG, "argument list too long") XX(EOF, "end of file")

typedef enum {
#define XX(code, _) UV_ ## code = UV__ ## code,
  UV_ERRNO_MAP(XX)
#undef XX
  UV_ERRNO_MAX = UV__EOF - 1
} uv_errno_t;

typedef enum {
  UV_RUN_DEFAULT = 0,
  UV_RUN_ONCE,
  UV_RUN_NOWAIT
} uv_run_mode;

/* Platform-specific request types. */
UV_PRIVATE_REQ_TYPES


UV_EXTERN unsigned int uv_version(void);
UV_EXTERN const char* uv_version_string(void);
UV_EXTERN int uv_loop_init(uv_loop_t* loop);
UV_EXTERN int uv_run(uv_loop_t*, uv_run_mode mode);

/* The abstract base class of all handles. */
struct uv_handle_s {
  UV_HANDLE_FIELDS
};

struct uv_stream_s {
  UV_HANDLE_FIELDS
  UV_STREAM_FIELDS
  uv_loop_t* loop;
};

UV_EXTERN size_t uv_stream_get_write_queue_size(const uv_stream_t* stream);

struct uv_loop_s {
  /* User data - use this for whatever. */
  void* data;
  unsigned int active_handles;
  UV_LOOP_PRIVATE_FIELDS
};

#ifdef __cplusplus
}
#endif
#endif /* UV_H */
"""


def test_a_c_header_behind_export_macros_is_chunked_by_its_declarations() -> None:
    r = run_chunk("include/uv.h", UV_H, min_tokens=0)
    assert not any(d.code == "CORA-CHK-001" for d in r.diagnostics)
    types = [s for c in r.chunks if c.kind == "type" for s in c.symbols]
    assert types == ["uv_errno_t", "uv_run_mode", "uv_handle_s", "uv_stream_s", "uv_loop_s"]
    loop = next(c for c in r.chunks if c.symbols == ["uv_loop_s"])
    assert "  UV_LOOP_PRIVATE_FIELDS\n};" in loop.text  # the text as written
    assert any("UV_EXTERN int uv_run(uv_loop_t*, uv_run_mode mode);" in c.text for c in r.chunks)
    assert uncovered(r, UV_H.encode()) == []
    plain = _walk("c", UV_H.encode(), parser_for("c").parse(UV_H.encode()), UV_H.split("\n"))
    assert plain.unread > len(UV_H) // 3  # unread bytes: the outline of the header as it parses


def test_a_c_function_a_macro_wraps_whole_is_named_and_chunked_as_written() -> None:
    """libuv's `UV_UNUSED(static int uv__stat(...)) {`: the grammar read the macro as the function
    (named `UV_UNUSED`, one line, its body apart); the macro's `(` and `)` are read past."""
    src = (
        "#define UV_UNUSED(declaration) __attribute__((unused)) declaration\n\n"
        "UV_UNUSED(static void uv__update_time(uv_loop_t* loop)) {\n"
        "  loop->time = uv__hrtime(UV_CLOCK_FAST) / 1000000;\n"
        "}\n\n"
        "UV_UNUSED(static int uv__stat(const char* path, struct stat* s)) {\n"
        "  int rc = stat(path, s);\n"
        "  return rc;\n"
        "}\n"
    )
    r = run_chunk("src/unix/internal.h", src, min_tokens=0)
    found = [(c.symbols, c.start_line, c.end_line) for c in r.chunks if c.kind == "method"]
    assert found == [
        (["UV_UNUSED"], 1, 1),
        (["uv__update_time"], 3, 5),
        (["uv__stat"], 7, 10),
    ]  # the macro too
    assert r.chunks[-1].text.startswith("UV_UNUSED(static int uv__stat(")
    assert uncovered(r, src.encode()) == []


def test_c_export_macros_are_blanked_and_types_named_in_capitals_are_not() -> None:
    for src, gone in [
        ("UV_EXTERN int uv_run(uv_loop_t*, uv_run_mode mode);\n", "UV_EXTERN"),
        ("CURL_EXTERN CURLcode curl_easy_perform(CURL *curl);\n", "CURL_EXTERN"),
        ("LUA_API int (lua_gettop) (lua_State *L);\n", "LUA_API"),
        ("SQLITE_API SQLITE_EXPERIMENTAL const char *sqlite3_sql(sqlite3_stmt *pStmt);\n", "SQLITE_"),
        (
            '#ifdef __cplusplus\nextern "C" {\n#endif\nint f(void);\n#ifdef __cplusplus\n}\n#endif\n',
            'extern "C"',
        ),
        ("struct s {\n  S_FIELDS\n  int x;\n};\n", "S_FIELDS"),
        ("HEAP_EXPORT(void heap_init(struct heap* heap));\n", "HEAP_EXPORT"),
    ]:
        out = blank_macros(src.encode(), "c")
        assert len(out) == len(src) and gone.encode() not in out, src
    for src in [
        "HANDLE CreateFileW(LPCWSTR name);\n",  # the type, then the name
        "FILE *fopen(const char *path, const char *mode);\n",
        "BOOL\nfoo(void) { return TRUE; }\n",  # a type on the line above its function
        'extern "C" {\nint f(void);\n}\n',  # a C++ file's own, not split over two #ifdefs
    ]:
        assert blank_macros(src.encode(), "c") == src.encode(), src
    for src in ["PyAPI_FUNC(PyObject *) PyObject_Repr(PyObject *);\n", "CHECK(f(x) == 1);\n", "FOO(a, b);\n"]:
        assert blank_macros(src.encode(), "c") == src.encode(), src  # a type or a call, not a declaration
    cpp = b"FMT_API auto vformat(string_view fmt) -> std::string;\n"
    assert blank_macros(cpp, "cpp") == b" " * 8 + cpp[8:]  # a leading macro, in C++ too
    wrapped = b"FMT_UNUSED(static int f(int x)) {\n  return x;\n}\n"
    assert blank_macros(wrapped, "cpp") == wrapped  # C's other rules lost fmt's bodies in C++


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
        ("FMT_INLINE\nstatic int f(void) { return 1; }\n", ["FMT_INLINE"]),  # an attribute of what follows
        ("/* a box */\nLIB_TPL_DECLARATION\nclass Box;\n", ["LIB_TPL"]),  # after a comment's end
    ]:
        out = blank_alone(src.encode())
        assert len(out) == len(src.encode()) and out.count(b"\n") == src.count("\n")
        assert not any(g.encode() in out for g in gone), src


def test_a_file_that_parses_or_that_blanking_makes_worse_is_read_as_written() -> None:
    clean = b"namespace lib {\nint add(int a, int b) { return a + b; }\n}\n"
    assert parse("cpp", clean).root_node.text == clean
    # stray closing braces: blanking the macro after them leaves one more error, and the tree
    # chosen is the one whose outline reads more (the unread bytes of its error rows, then errors)
    worse = b"};\n}\nint x;\nQ_OBJECT"
    assert blank_alone(worse) != worse
    plain = _loss(worse, parser_for("cpp").parse(worse), "cpp")
    blanked = _loss(worse, parser_for("cpp").parse(blank_alone(worse)), "cpp")
    assert blanked[1] > plain[1] and _loss(worse, parse("cpp", worse), "cpp") == min(plain, blanked)
    assert parse("python", b"FOO\nimport x\n").root_node.text == b"FOO\nimport x\n"


LINES = st.sampled_from([
    "#ifndef LIB_H_", "#define LIB_H_", "FMT_BEGIN_NAMESPACE", "FMT_END_EXPORT", "Q_OBJECT", 'FMT_VISIBILITY("hidden")', "namespace detail {",
    "}", "};", "template <typename T>", "int f(T x) { return x; }", "enum e { A,", "  B", "};",
    "#define X 1", "#if FOO", "#endif", "class C {", " public:", "  int g();", "", "// BAR", "int v = W +",
    "  ZED", "  ;", "static int h(void)", "{", "  return 0;",
])  # fmt: skip


C_LINES = st.sampled_from([
    "UV_EXTERN int uv_run(uv_loop_t* loop);", "UV_HANDLE_FIELDS", "struct s {", "  int x;", "};", "}",
    "#ifdef __cplusplus", 'extern "C" {', "#endif", "typedef enum {", "#define XX(c) c,", "  MAP(XX)",
    "  A = 1", "} e;", "", "/* a comment */", "DECLS", "static int h(void)", "{", "  return 0;",
])  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(LINES, max_size=30), st.sampled_from(["c", "cpp"]))
def test_blanking_keeps_every_byte_place_and_never_parses_worse(lines: list[str], lang: str) -> None:
    _never_worse("\n".join(lines).encode(), lang)


@settings(max_examples=200, deadline=None)
@given(st.lists(C_LINES, max_size=30))
def test_blanking_c_macros_keeps_every_byte_place_and_never_reads_less(lines: list[str]) -> None:
    _never_worse("\n".join(lines).encode(), "c")


def _loss(src: bytes, tree: Any, lang: str = "c") -> tuple[int, int]:
    """A C or C++ tree's outline: the bytes it leaves unread, then its errors."""
    walk = _walk(lang, src, tree, src.decode().split("\n"))
    return walk.unread, walk.errors


def _never_worse(src: bytes, lang: str) -> None:
    """Blanking keeps each byte's place and blanks whole lines or names; the tree chosen reads no
    less than the file as it parses (the outline's unread bytes, then its errors)."""
    out = blank_macros(src, lang)
    assert len(out) == len(src)
    assert [i for i, b in enumerate(out) if b == 10] == [i for i, b in enumerate(src) if b == 10]
    for a, b in zip(src.split(b"\n"), out.split(b"\n"), strict=True):
        assert all(y in (x, 32) for x, y in zip(a, b, strict=True))  # bytes kept or made spaces
    plain = parser_for(lang).parse(src)
    chosen = parse(lang, src)
    assert _loss(src, chosen, lang) <= _loss(src, plain, lang)
    assert _read(lang, src, None).tree.root_node.text == chosen.root_node.text


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


def test_a_c_library_behind_export_macros_answers_with_its_header_types_and_its_definitions(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path
) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    core = (
        '#include "uv.h"\n\n'
        "int uv_run(uv_loop_t* loop, uv_run_mode mode) {\n"
        "  while (loop->active_handles > 0 && mode != UV_RUN_NOWAIT)\n"
        "    uv__io_poll(loop);\n"
        "  return 0;\n"
        "}\n"
    )
    main = '#include "uv.h"\n\nint main(void) {\n  return uv_run(uv_default_loop(), UV_RUN_DEFAULT);\n}\n'
    repo = make_repo({"include/uv.h": UV_H, "src/unix/core.c": core, "app/main.c": main})
    out = cora("index", "--model", "none", "-q", cwd=repo, **env)
    assert out.returncode == 0, out.stderr
    info = cora("info", "--diagnostics", cwd=repo, **env)
    assert "CORA-CHK-001" not in info.stdout, info.stdout
    hit = first_result(repo, "uv_loop_s", env)
    assert (hit["anchor"], hit["kind"]) == ("include/uv.h::uv_loop_s", "type")
    assert str(hit["text"]).startswith("struct uv_loop_s {")
    out = cora("query", "uv_run", "--format", "json", "-k", "3", cwd=repo, **env)
    hits = [(r["path"], r["symbol"]) for r in json.loads(out.stdout)["results"]]
    assert hits[:2] == [("src/unix/core.c", "uv_run"), ("include/uv.h", "uv_run")]  # then its prototype
    outline = json.loads(cora("outline", "include/uv.h", "--format", "json", cwd=repo, **env).stdout)
    declared = {s["symbol"]: (s["declared"], s["signature"]) for s in outline["symbols"]}
    assert declared["uv_run"] == ("declaration", "UV_EXTERN int uv_run(uv_loop_t*, uv_run_mode mode);")
    related = cora("related", "src/unix/core.c::uv_run", "--format", "json", cwd=repo, **env)
    callers = [(r["path"], r["relation"]) for r in json.loads(related.stdout)["results"]]
    assert ("app/main.c", "caller") in callers  # a call resolves to the definition, not the prototype


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=' \t\u2003/*;{}ab"', max_size=24))
@example("int f(); // a /* b */")  # the first `//` before a block comment that ends the line
@example("int f(); /* a // b */")  # a block comment that ends the line, holding a `//`
@example("int f(); /* a */ int g();")  # a block comment that does not end the line: kept
@example("int f(); /*/")
@example("int f(int a);" + " " * 2_000 + "x")  # spaces the old expression read on from, each
def test_a_declarations_trailing_comment_is_cut_where_the_old_expression_cut_it(line: str) -> None:
    """`definitions._code_of` (one pass) cuts a line where the regular expression it replaced
    did, which read on from every space (0.56 s a line of 20,000 spaces)."""
    import re

    from cora_ci.retrieval.definitions import _code_of

    old = re.compile(r"\s*(?://.*|/\*.*?\*/\s*)$")
    assert _code_of(line) == old.sub("", line).rstrip()


def test_a_cpp_declaration_behind_an_export_macro_is_named_by_its_own_name() -> None:
    """googletest's `GTEST_API_ std::string FormatTimeInMillisAsSeconds(TimeInMillis ms);` was a
    symbol named `std::string FormatTimeInMillisAsSeconds` (and `GTEST_API_ AssertionResult
    AssertionFailure();` one named `AssertionResult AssertionFailure`): a leading macro is read
    past in C++ as in C, where the file does not parse as written."""
    src = (
        "namespace testing {\nnamespace internal {\n\n"
        "GTEST_API_ std::string FormatTimeInMillisAsSeconds(TimeInMillis ms);\n\n"
        "GTEST_API_ AssertionResult AssertionFailure();\n\n"
        "GTEST_API_ std::string JoinAsKeyValueTuple(const std::vector<const char*>& names) {\n"
        '  return names.empty() ? "" : names[0];\n}\n\n'
        "}  // namespace internal\n}  // namespace testing\n"
    )
    r = run_chunk("src/gtest-internal-inl.h", src, min_tokens=0)
    names = sorted(s for c in r.chunks if c.kind == "method" for s in c.symbols)
    assert names == ["AssertionFailure", "FormatTimeInMillisAsSeconds", "JoinAsKeyValueTuple"]
    body = next(c for c in r.chunks if c.symbols == ["JoinAsKeyValueTuple"])
    assert body.text.startswith("GTEST_API_ std::string JoinAsKeyValueTuple(") and body.end_line == 10


def test_c_functions_declared_without_a_body_are_symbols_and_forward_declarations_are_not() -> None:
    r = run_chunk(
        "src/api.c",
        """\
        #include "api.h"

        static int helper(int x);
        int api_run(api_loop_t* loop, int mode);
        void (*on_close)(int);
        extern int counter;
        typedef int (*api_cb)(int);

        static int helper(int x) {
          int local(int);
          return x + 1;
        }

        LUA_API int   (lua_gettop) (lua_State *L);
        DEFINE_HOOK(on_close);
        """,
        min_tokens=0,
    )
    labels = {a.split("::")[1]: c.hierarchy[-1] for c in r.chunks for a in c.anchors if "::" in a}
    assert labels == {
        "api_run": "declaration:api_run",
        "helper": "function:helper",
        "lua_gettop": "declaration:lua_gettop",  # a name in parentheses, kept from macro expansion
        "api_cb": "typedef:api_cb",  # a function pointer's type, named (revision 76)
    }  # a macro's call read as a declaration (`DEFINE_HOOK(on_close);`) declares nothing


def test_a_cpp_class_behind_an_export_macro_is_a_type_with_its_declared_members() -> None:
    """googletest's `class GTEST_API_ [[nodiscard]] TestPartResultArray {` parsed, without an
    error, as a function named after the class; Qt writes `class Q_CORE_EXPORT QObject : ...`."""
    r = run_chunk(
        "include/part.hpp",
        """\
        namespace testing {
        class GTEST_API_ [[nodiscard]] TestPartResultArray {
         public:
          TestPartResultArray() = default;

          // Appends the given TestPartResult to the array.
          void Append(const TestPartResult& result);

          // Returns the number of TestPartResult objects in the array.
          int size() const;

         private:
          std::vector<TestPartResult> array_;
          int count_ GUARDED_BY(mutex_);
          MOCK_METHOD(void, Report, (int code), (override));
        };

        class Q_CORE_EXPORT QObject
            : public QObjectBase {
         public:
          virtual ~QObject();
          QObject* parent() const { return parent_; }
        };
        }  // namespace testing
        """,
        min_tokens=0,
    )
    kinds = {a.split("::")[1]: (c.kind, c.hierarchy[-1]) for c in r.chunks for a in c.anchors if "::" in a}
    assert kinds == {
        "testing.TestPartResultArray": ("type", "class:TestPartResultArray"),
        "testing.TestPartResultArray.TestPartResultArray": ("method", "method:TestPartResultArray"),
        "testing.TestPartResultArray.Append": ("method", "declaration:Append"),
        "testing.TestPartResultArray.size": ("method", "declaration:size"),
        "testing.QObject": ("type", "class:QObject"),
        "testing.QObject.~QObject": ("method", "declaration:~QObject"),
        "testing.QObject.parent": ("method", "method:parent"),
    }
    part = next(c for c in r.chunks if c.symbols == ["TestPartResultArray"] and c.kind == "type")
    assert part.text.startswith("class GTEST_API_ [[nodiscard]] TestPartResultArray {")  # as written


FMT_FORMAT_H = """\
FMT_BEGIN_NAMESPACE
namespace detail {
template <typename OutputIt,
          FMT_ENABLE_IF(is_back_insert_iterator<OutputIt>::value)>
#if FMT_CLANG_VERSION >= 307 && !FMT_ICC_VERSION
__attribute__((no_sanitize("undefined")))
#endif
FMT_CONSTEXPR20 inline auto reserve(OutputIt it, size_t n) -> typename OutputIt::value_type* {
  auto& c = get_container(it);
  return &c[n];
}

struct size_padding {
  unsigned size;
  unsigned padding;

  FMT_CONSTEXPR size_padding(int num_digits, unsigned prefix)
      : size((prefix >> 24) + to_unsigned(num_digits)), padding(0) {
    if (size > 0) padding = 1;
  }
};

FMT_EXPORT template <typename Char, size_t N>
constexpr auto compile_string_to_view(const Char (&s)[N]) -> basic_string_view<Char> {
  return {s, N - 1};
}

template <typename Char, typename OutputIt>
auto do_write_float(OutputIt out, Char c) -> OutputIt {
  *out++ = c;
  return out;
}
}  // namespace detail
FMT_END_NAMESPACE
"""


def test_fmts_directives_inside_a_declaration_and_macros_before_constructors_are_read_past() -> None:
    """An fmt trial: a `#if` around an attribute between a template's parameters and its function,
    a macro before a constructor with an initializer list and one before `template` each made the
    rest of `format.h` one error (its float formatting a function named `FMT_BEGIN_EXPORT`); the
    blanked tree has more, smaller errors, and the outline that reads more is the one kept."""
    r = run_chunk("include/fmt/format.h", FMT_FORMAT_H, min_tokens=0)
    anchors = {a for c in r.chunks for a in c.anchors}
    for name in ("reserve", "size_padding", "size_padding.size_padding", "compile_string_to_view",
                 "do_write_float"):  # fmt: skip
        assert f"include/fmt/format.h::detail.{name}" in anchors, sorted(anchors)


def test_a_macro_standing_for_constexpr_between_if_and_its_condition_is_read_past() -> None:
    """fmt's `args.h`: `if FMT_CONSTEXPR20 (need_copy<T>::value) {` (`if constexpr` where the
    language has it) is no `if` to the grammar; the class around it ended at that method, so the
    reading as written (one function named `namespace` holding the file) read no less, and
    `dynamic_format_arg_store` was named `FMT_EXPORT`. A directive's `#if MACRO (x)` is left alone."""
    src = """\
#ifndef FMT_ARGS_H_
#define FMT_ARGS_H_

FMT_BEGIN_NAMESPACE
namespace detail {
template <typename T> struct node {
  virtual ~node() = default;
};
}  // namespace detail

FMT_EXPORT template <typename Context> class dynamic_format_arg_store {
 public:
  template <typename T> void push_back(const T& arg) {
    if FMT_CONSTEXPR20 (need_copy<T>::value) {
      emplace_arg(arg);
    } else {
      emplace_arg(arg);
    }
  }

  void clear() { data_.clear(); }
};

FMT_END_NAMESPACE

#endif  // FMT_ARGS_H_
"""
    r = run_chunk("include/fmt/args.h", src, min_tokens=0)
    found = {a: (c.start_line, c.end_line) for c in r.chunks for a in c.anchors}
    name = "include/fmt/args.h::dynamic_format_arg_store"
    assert found[name] == (11, 22), sorted(found)
    assert found[f"{name}.push_back"] == (13, 19) and found[f"{name}.clear"] == (21, 21)
    assert found["include/fmt/args.h::detail.node"] == (6, 8)
    assert b"#if FMT_HAS_FEATURE (x)" in blank_macros(b"#if FMT_HAS_FEATURE (x)\n#endif\n", "cpp")


def test_annotation_macros_after_parameters_and_before_an_out_of_line_constructor_are_read_past() -> None:
    """leveldb's `void Lock() EXCLUSIVE_LOCK_FUNCTION() { ... }` was a function named after the
    macro, googletest's `... RegisterOwner(const void* o)\n GTEST_LOCK_EXCLUDED_(g_gmock_mutex) {`
    a body named `g_gmock_mutex`, spdlog's `SPDLOG_INLINE logger::logger(const logger &o)` no
    symbol; a cast before a macro's call (`(int) ARRAY_SIZE(w);`) and a condition are no
    declaration. A long name in capitals is read in one pass (a regex had backtracked for minutes)."""
    src = (
        "namespace port {\n"
        "class Mutex {\n public:\n  void Lock() EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }\n"
        "  Status Write(int n)\n      EXCLUSIVE_LOCKS_REQUIRED(mutex_);\n};\n\n"
        "SPDLOG_INLINE logger::logger(const logger &other) : name_(other.name_) {}\n\n"
        "void logger::swap(logger &other) SPDLOG_NOEXCEPT {\n  int n = (int) ARRAY_SIZE(words);\n"
        "  if (n) CHECK_OK(n);\n}\n"
        "void f() " + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" * 4 + " x\n}\n"
    )
    r = run_chunk("src/port.h", src, min_tokens=0)
    anchors = {a for c in r.chunks for a in c.anchors}
    for name in ("port.Mutex.Lock", "port.Mutex.Write", "port.logger::logger", "port.logger::swap"):
        assert f"src/port.h::{name}" in anchors, sorted(anchors)
    out = blank_exports(src.encode())
    assert b"ARRAY_SIZE(words)" in out and b"CHECK_OK(n)" in out and b"EXCLUSIVE_LOCK_FUNCTION" not in out


def test_a_class_behind_a_template_macro_and_members_behind_attribute_macros_are_read_past() -> None:
    """nlohmann/json's `json.hpp`: the class behind `NLOHMANN_BASIC_JSON_TPL_DECLARATION` (a doc
    comment's `*/` above it was taken for code going on into the line) was a function named after
    the macro, and a member behind an attribute macro on the line above it (`JSON_HEDLEY_WARN_UNUSED_RESULT`)
    was named `basic_json meta`. googletest's two sanitizer attributes stay with their function
    and the comment above them; a scope's macro does not join what follows it."""
    src = """\
        /*!
        @brief namespace for the library
        */
        LIB_JSON_NAMESPACE_BEGIN

        /*!
        @brief a class to store JSON values
        */
        LIB_BASIC_JSON_TPL_DECLARATION
        class basic_json
        {
          public:
            /// @brief returns version information on the library
            LIB_WARN_UNUSED_RESULT
            static basic_json meta()
            {
                basic_json result;
                return result;
            }

            // Make sure AddressSanitizer does not tamper with the stack here.
            LIB_ATTRIBUTE_NO_SANITIZE_ADDRESS_
            LIB_ATTRIBUTE_NO_SANITIZE_HWADDRESS_
            static bool stack_grows_down() {
                int dummy = 0;
                return dummy > 0;
            }
        };

        LIB_JSON_NAMESPACE_END
    """
    r = run_chunk("include/json.hpp", src, min_tokens=0)
    found = {a: (c.start_line, c.end_line) for c in r.chunks for a in c.anchors}
    assert found["include/json.hpp::basic_json"] == (6, 28)  # its doc and its template's macro
    assert found["include/json.hpp::basic_json.meta"] == (13, 19)
    assert found["include/json.hpp::basic_json.stack_grows_down"] == (21, 27)
    assert uncovered(r, textwrap.dedent(src).encode()) == []  # every line in a chunk


def test_an_include_guards_opening_alone_is_blanked() -> None:
    """`blank_guard`: the `#ifndef` of a guard that opens the file (after comments), its `#define`
    after it; nothing in a file without one, or whose first code is something else."""
    guarded = b"// lib.h\n/* licence */\n#ifndef LIB_H_\n#define LIB_H_\nint f(void);\n#endif  // LIB_H_\n"
    out = blank_guard(guarded)
    assert out == guarded.replace(b"#ifndef LIB_H_", b" " * 14)
    for src in (b"#pragma once\nint f(void);\n", b"int x;\n#ifndef LIB_H_\n#define LIB_H_\n#endif\n",
                b"#ifndef LIB_H_\n#define OTHER_H_\n#endif\n"):  # fmt: skip
        assert blank_guard(src) is src
