"""C and C++ read past the macros that stand alone on a line and open or close a scope.

tree-sitter parses C-family code without its preprocessor, so a macro that expands to a scope's
brace or to nothing and stands alone on a line (`FMT_BEGIN_NAMESPACE`, `FMT_END_EXPORT`,
`ABSL_NAMESPACE_BEGIN`, `G_BEGIN_DECLS`, `Q_OBJECT`) is read as the type of what follows:
`FMT_END_EXPORT` and the `namespace detail {` after it became one function named `namespace`
whose body, 830 lines of fmt's `base.h`, held template functions the walk did not see as
definitions (`parse_format_specs` had no chunk of its own). Such lines are blanked, byte for byte
so rows and offsets stay, when what follows cannot be typed by them (a namespace, a template, a
class, another such line, a directive, a scope's end), and the blanked text is parsed instead only
when its outline reads more (fewer bytes of error rows left unread, then fewer errors: fmt's
`format.h` blanked has 68 small errors where as written it had one, from line 470 to its end): a
file that parses is never touched, nor one the blanking makes worse. Names and chunk text are
still read from the file as written.

In C (`blank_macros`) more macros are read past the same way: the export and attribute macros in
front of a declaration (`UV_EXTERN int uv_run(`, `CURL_EXTERN CURLcode curl_easy_init(`), which
the grammar reads as a first type; a macro around a whole declaration (`UV_UNUSED(static int
f(...)) {`), read as the function; a header's `extern "C" {` and its `}`, each alone in an
`#ifdef __cplusplus` (a brace the grammar cannot close across two conditional blocks); a macro of
fields alone in a struct, or of declarations standing apart. libuv's `uv.h`, its whole API, was
one parse error. In both, the outline decides which reading is kept (`outline._read`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# A line that is one upper-case name, perhaps called (`FMT_VISIBILITY("hidden")`), and a comment.
_ALONE = re.compile(  # each run of blanks read once (three side by side took cubic time on a line of them)
    rb"^[ \t]*(?P<name>[A-Z_][A-Z0-9_]{2,})[ \t]*+(?:\([^\n]*\)[ \t]*+)?"
    rb"(?:(?://[^\n]*|/\*[^\n]*?\*/)[ \t]*+)?\r?$",
    re.M,
)
# The start of a function's declaration: a type (perhaps qualified, a pointer) and a name called.
_DECL = (
    rb"(?:(?:const|static|inline|extern|unsigned|signed|struct|enum|union|virtual|explicit|constexpr)[ \t]+)*"
    rb"[A-Za-z_][\w:<>,]*(?:[ \t]*[*&]+[ \t]*|[ \t]+)\(?[A-Za-z_~][\w:]*\)?[ \t]*\("
)
# Blanks and comments between, each comment to its first end, read once (a pattern that could take
# a comment on to a later `*/` matched a field across code, and took quadratic time on a long one).
_COMMENTS = rb"\s*+(?:(?://[^\n]*+|/\*.*?\*/)\s*+)*+"
# What may follow it: nothing a macro could be the type or an attribute of, or the file's end.
_NEXT = re.compile(
    _COMMENTS
    + rb"(?:(?:namespace|template|class|struct|union|enum|typedef|extern|using|static_assert|public|private"
    rb"|protected)\b|[#}@]|\Z|[A-Z_][A-Z0-9_]{2,}[ \t]*(?:\([^\n]*\))?[ \t]*(?://[^\n]*)?\r?(?:\n|\Z))",
    re.S,
)
# A field or variable declared (`uv_loop_t* loop;`, `char buf[64];`): what a macro of fields,
# alone in a struct (`UV_HANDLE_FIELDS`), comes before; an attribute macro does not stand so.
_FIELD = re.compile(
    _COMMENTS + rb"(?:(?:const|volatile|unsigned|signed|struct|enum|union)[ \t]+)*"
    rb"[A-Za-z_]\w*(?:[ \t]*\*+[ \t]*|[ \t]+)[A-Za-z_]\w*[ \t]*(?:\[[^\]\n]*\][ \t]*)*;",
    re.S,
)
# A declaration after a blank line (and comments: libuv's `RB_GENERATE_STATIC(...)`, then a
# function's doc comment): a macro of declarations stands apart from what follows
# (`UV_PRIVATE_REQ_TYPES`), an attribute macro sits on the line above its function.
_APART = re.compile(rb"[ \t]*+\r?\n(?:[ \t]*+\r?\n)++" + _COMMENTS + _DECL, re.S)
# Upper-case names in front of a declaration's type on its line (`UV_EXTERN int uv_run(`,
# `FMT_NODISCARD FMT_INLINE auto format(`); a type named in capitals is followed by its name
# (`HANDLE CreateFileW(`, `FILE *fopen(`), which `_DECL` does not take for a second type.
# ... or in front of a template (fmt's `FMT_EXPORT template <...>`).
_PREFIX = re.compile(rb"^[ \t]*(?P<m>(?:[A-Z_][A-Z0-9_]{2,}(?:\([^()\n]*\))?[ \t]+)+)(?=" + _DECL
                     + rb"|template\b)", re.M)  # fmt: skip
# Upper-case names in front of a constructor (fmt's `FMT_CONSTEXPR size_padding(int n, ...) : size(n)`):
# read as its type, and the initializer list after it as an error that ran to the file's end. A
# constructor has no type, so only where the name is one the file declares a class or struct.
_CTOR_PREFIX = re.compile(
    rb"^[ \t]*(?P<m>(?:[A-Z_][A-Z0-9_]{2,}(?:\([^()\n]*\))?[ \t]+)+)(?P<name>[A-Za-z_]\w*)[ \t]*\(", re.M
)
_OUT_OF_LINE_CTOR = re.compile(
    rb"^[ \t]*(?P<m>(?:[A-Z_][A-Z0-9_]{2,}(?:\([^()\n]*\))?[ \t]+)+)"
    rb"(?=(?:[A-Za-z_]\w*::)*(?P<n>[A-Za-z_]\w*)::~?(?P=n)[ \t]*\()",
    re.M,
)
# A macro between `if` and its condition, standing for `constexpr` where the language has it (fmt's
# `if FMT_CONSTEXPR20 (need_copy<T>::value) {`): the grammar reads no `if` there, and the class
# around it ended at that method, the rest of its members read as functions of the file. Not a
# directive's `#if MACRO (x)`.
_IF_MACRO = re.compile(rb"^[^#\n]*?\bif[ \t]+(?P<m>[A-Z_][A-Z0-9_]{2,})[ \t]*\(", re.M)
_CLASS_NAME = re.compile(rb"\b(?:class|struct)[ \t]+(?:[A-Z_][A-Z0-9_]{2,}[ \t]+)?(?P<name>[A-Za-z_]\w*)")
# A macro around a whole declaration (`UV_UNUSED(static int uv__stat(const char* p)) {`, libuv's
# `HEAP_EXPORT(void heap_init(struct heap* heap));`): the grammar reads the macro as the function.
_WRAPPED = re.compile(rb"^[ \t]*(?P<m>[A-Z_][A-Z0-9_]{2,}[ \t]*\()(?=[ \t]*" + _DECL + rb")", re.M)
_WRAPPED_SPAN = 4096  # bytes a wrapped declaration's closing parenthesis is looked for in
_AFTER_WRAPPED = re.compile(rb"\s*[{;]")
# `extern "C" {` or its `}` alone in an `#ifdef __cplusplus` (or `#if defined(__cplusplus)`).
_EXTERN_C = re.compile(
    rb"^[ \t]*#[ \t]*if(?:def[ \t]+__cplusplus|[ \t]+defined[ \t]*\(?[ \t]*__cplusplus[ \t]*\)?)[ \t]*(?://[^\n]*)?\r?\n"
    rb"(?P<m>[ \t]*(?:extern[ \t]+\"C\"[ \t]*\{|\})[ \t]*(?://[^\n]*|/\*[^\n]*?\*/)?[ \t]*)"
    rb"(?=\r?\n[ \t]*#[ \t]*endif)",
    re.M,
)
# A class's export or visibility macro between its keyword and its name (googletest's `class
# GTEST_API_ [[nodiscard]] TestPartResult {`, Qt's `class Q_CORE_EXPORT QObject : public ...`):
# the grammar takes the macro for the class's name and the rest for a function definition, with
# no error to say so. Blanked where a class body follows the name, in every C-family file.
_CLASS_EXPORT = re.compile(
    rb"\b(?:class|struct|union)[ \t]+(?P<m>[A-Z_][A-Z0-9_]{2,}(?:\([^()\n]*\))?)[ \t]+"
    rb"(?=(?:\[\[[^\]\n]*\]\][ \t]*|alignas\([^()\n]*\)[ \t]*)*[A-Za-z_]\w*(?:<[^;{}\n]*>)?\s*"
    rb"(?:final\s*)?(?::[^;{}]*)?\{)"
)
# Annotation macros after a function's parameters (leveldb's `void Lock() EXCLUSIVE_LOCK_FUNCTION() {`
# and `Status Write(...)\n EXCLUSIVE_LOCKS_REQUIRED(mutex_);`, spdlog's `swap(logger &o) SPDLOG_NOEXCEPT {`):
# read as the function's name or a second declaration, with no error. Blanked where a body, `;`, an
# initializer list, `= 0`/`= default`, `override`, `final` or a trailing return type follows.
_TRAILING = re.compile(
    rb"\)[ \t]*(?:const[ \t]*)?(?:noexcept[ \t]*)?(?:\r?\n[ \t]+)?"  # on its line, or the next, indented
    rb"(?P<m>(?:[A-Z_][A-Z0-9_]{2,}\b(?:[ \t]*\([^()\n]*\))?\s*){1,8}?)(?=[;{:=]|override\b|final\b|->)"
)
_CONTROL = re.compile(rb"(?:if|while|for|switch|return|else|do|case|throw)\b|[\w.>)\]]+\s*[-+*/%&|^]?=[^=]")
# A declaration's macro before a name in parentheses (Lua's `LUA_API int (lua_gettop) (lua_State
# *L);`, the parentheses keeping the name from macro expansion): read, with no error, as a function
# `int` returning a function. Blanked wherever it stands so, at a line's start.
_PAREN_NAMED = re.compile(
    rb"^[ \t]*(?P<m>[A-Z_][A-Z0-9_]{2,})[ \t]+"
    rb"(?=(?:[A-Za-z_]\w*[ \t*]+)+\([ \t]*[A-Za-z_]\w*[ \t]*\)[ \t]*\()",
    re.M,
)
# A short `#if` ... `#endif` (no `#else`) inside a declaration: fmt's `__attribute__((no_sanitize(
# "undefined")))` for one compiler, between a template's parameters and its function. The grammar
# reads no directive there, and fmt's `format.h` was one error from that line to its end (its
# number formatting a function named `FMT_BEGIN_EXPORT`). The directive lines are blanked, the code
# between kept; only where the code before goes on (its last line ends in no `;`, brace or comment).
_MID_IF = re.compile(
    rb"^(?P<open>[ \t]*#[ \t]*if[^\n]*)\n(?:[ \t]*[^#\s][^\n]*\n){1,4}(?P<close>[ \t]*#[ \t]*endif\b[^\n]*)$",
    re.M,
)
_CONTINUES = frozenset(b",(=+-*/|&?:\\[<")  # a line ending so goes on: `RED,` then `BLUE`
_SPACE = frozenset(b" \t\r\n")


def blank_macros(src: bytes, lang: str) -> bytes:
    """`src` with the macros the grammar cannot read past blanked (the same length, line ends
    kept); `src` itself when there is none. C++ (`cpp`, `cuda`): a declaration's leading macros
    (googletest's `GTEST_API_ std::string FormatTimeInMillisAsSeconds(` was a function named
    `std::string FormatTimeInMillisAsSeconds`) and the stand-alone scope macros (`blank_alone`).
    C and Objective-C: also a macro around a whole declaration, `extern "C"` braces alone in an
    `#ifdef __cplusplus`, and a stand-alone macro of fields or of declarations (in C++, with its
    templates and trailing return types, these made some of fmt's and googletest's functions
    lose their bodies: bench/RESULTS.md, 2026-11-29)."""
    src = _blank(src, _mid_if(src)) if b"#" in src else src
    if lang in ("cpp", "cuda"):
        return blank_alone(_blank(_blank_all(_blank_all(src, _IF_MACRO), _PREFIX), _constructors(src)))
    blanked = _unwrap(_blank_all(_blank_all(src, _PREFIX), _EXTERN_C))
    return _blank_lines(blanked, _C_FOLLOWS, c=True)


def blank_exports(src: bytes) -> bytes:
    """`src` with the macros blanked that the grammar misreads without an error, so before any
    parse: a class's export macro (`_CLASS_EXPORT`) and a declaration's macro before a name in
    parentheses (`_PAREN_NAMED`); `src` itself when there is none."""
    out = _blank_all(src, _CLASS_EXPORT) if b"class" in src or b"struct" in src else src
    out = _blank(out, _trailing(out))
    return _blank_all(out, _PAREN_NAMED) if b") (" in out or b")(" in out else out


def _trailing(src: bytes) -> Iterator[tuple[int, int]]:
    """The annotation macros after a declaration's parameters (`_TRAILING`), not after a cast
    (`(int) ARRAY_SIZE(x)`), a call or a condition in a body (`if (x) CHECK(y);`, `s = f(a)
    FOO;`): the parentheses follow a name, and the statement they end begins with no control
    word and assigns nothing."""
    for m in _TRAILING.finditer(src):
        opened = _opening(src, m.start())
        name = _name_before(src, opened) if opened is not None else b""
        if not name or name in _NOT_NAMES:
            continue
        lo = max(0, m.start() - _WRAPPED_SPAN)  # a statement's start, looked for so far back at most
        start = max(
            src.rfind(b";", lo, m.start()), src.rfind(b"{", lo, m.start()), src.rfind(b"}", lo, m.start())
        )
        head = src[max(start + 1, lo) : m.start()].lstrip()
        while head.startswith((b"//", b"#")):  # comments and directives before it
            head = head[head.find(b"\n") + 1 :].lstrip() if b"\n" in head else b""
        if head and not _CONTROL.match(head):
            yield m.span("m")


def _blank(src: bytes, spans: Iterator[tuple[int, int]]) -> bytes:
    """`src` with every byte of each span but its line ends made a space, so rows and offsets
    stay; `src` itself when there is no span."""
    out: bytearray | None = None
    for start, end in spans:
        if out is None:
            out = bytearray(src)
        out[start:end] = re.sub(rb"[^\r\n]", b" ", src[start:end])
    return src if out is None else bytes(out)


def _blank_all(src: bytes, pattern: re.Pattern[bytes]) -> bytes:
    """`src` with each match's group `m` blanked."""
    return _blank(src, (m.span("m") for m in pattern.finditer(src)))


def _constructors(src: bytes) -> Iterator[tuple[int, int]]:
    """The macros in front of each constructor of a class or struct the file declares, and of
    one defined out of line (spdlog's `SPDLOG_INLINE logger::logger(const logger &other)`)."""
    classes = {m["name"] for m in _CLASS_NAME.finditer(src)}
    for m in _CTOR_PREFIX.finditer(src):
        if m["name"] in classes:
            yield m.span("m")
    for m in _OUT_OF_LINE_CTOR.finditer(src):
        yield m.span("m")


_NOT_NAMES = frozenset({b"if", b"while", b"for", b"switch", b"return", b"sizeof", b"catch", b"decltype"})


def _name_before(src: bytes, at: int) -> bytes:
    """The name just before `at` (template arguments aside: `f<T>(`), b"" when none is there."""
    end = at
    while end > 0 and src[end - 1] in _SPACE:
        end -= 1
    if end > 0 and src[end - 1] == 62:  # `>`: a template's arguments
        opened = src.rfind(b"<", max(0, end - 256), end)
        end = opened if opened > 0 else end
        while end > 0 and src[end - 1] in _SPACE:
            end -= 1
    start = end
    while start > 0 and src[start - 1] in _WORD:
        start -= 1
    name = src[start:end]
    return name if name and not name[:1].isdigit() else b""


_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _opening(src: bytes, close: int) -> int | None:
    """The index of the `(` that the `)` at `close` closes, within `_WRAPPED_SPAN` bytes."""
    depth = 0
    for i in range(close, max(-1, close - _WRAPPED_SPAN), -1):
        c = src[i]
        if c == 41:  # )
            depth += 1
        elif c == 40:  # (
            depth -= 1
            if depth == 0:
                return i
    return None


# A header's include guard: `#ifndef NAME` then `#define NAME` first (after comments).
_GUARD = re.compile(
    _COMMENTS + rb"(?P<m>#[ \t]*ifndef[ \t]+(?P<n>\w+))[ \t]*\r?\n[ \t]*#[ \t]*define[ \t]+(?P=n)\b", re.S
)


def blank_guard(src: bytes) -> bytes:
    """`src` with the `#ifndef` line of its include guard blanked (`src` itself when it has none).
    The grammar reads the whole file as the guard's block, and an error it cannot recover from
    inside can make that block, the whole file, one error: nlohmann/json's `json.hpp` (5,259
    lines) was, its class cut short at its 660th line and later members read as the file's
    functions. Without its `#ifndef`, the grammar recovers around each of its small errors (its
    `#endif`, left alone, is one more at the end: with both blanked, the file was one error again)."""
    opened = _GUARD.match(src)
    return _blank(src, iter([opened.span("m")])) if opened is not None else src


def _mid_if(src: bytes) -> Iterator[tuple[int, int]]:
    """The directive lines of each `_MID_IF` block that the code before it goes on into."""
    for m in _MID_IF.finditer(src):
        before = src[max(0, m.start() - _WRAPPED_SPAN) : m.start()].rstrip()
        last = before[before.rfind(b"\n") + 1 :].lstrip()
        if (
            before
            and before[-1:] not in b";{}"
            and not before.endswith(b"*/")
            and not last.startswith((b"#", b"//"))
        ):
            yield m.span("open")
            yield m.span("close")


def _unwrap(src: bytes) -> bytes:
    """`src` with each macro around a whole declaration blanked, its name, its `(` and the `)` that
    closes it, where a body or a `;` follows."""
    return _blank(src, _wrapped(src))


def _wrapped(src: bytes) -> Iterator[tuple[int, int]]:
    for m in _WRAPPED.finditer(src):
        close = _closing(src, m.end("m"))
        if close is not None and _AFTER_WRAPPED.match(src, close + 1):
            yield m.span("m")
            yield close, close + 1


def _closing(src: bytes, at: int) -> int | None:
    """The index of the `)` that closes the parenthesis opened just before `at`, within
    `_WRAPPED_SPAN` bytes; None if there is none."""
    depth = 1
    for i in range(at, min(len(src), at + _WRAPPED_SPAN)):
        c = src[i]
        if c == 40:  # (
            depth += 1
        elif c == 41:  # )
            depth -= 1
            if depth == 0:
                return i
    return None


def attribute(line: bytes) -> bool:
    """The line (without its end) is a macro standing alone, as `blank_alone` may blank it, that
    does not open or close a scope (`FMT_BEGIN_NAMESPACE`, `G_END_DECLS`): an attribute of what
    follows it."""
    m = _ALONE.fullmatch(line)
    return m is not None and _SCOPE_WORD.search(m.group("name")) is None


_SCOPE_WORD = re.compile(rb"(?:^|_)(?:BEGIN|END|NAMESPACE|DECLS)(?:_|$)")


def blank_alone(src: bytes) -> bytes:
    """`src` with each stand-alone macro line that a scope, a declaration keyword or a function's
    declaration follows replaced by spaces (the same length, line ends kept); `src` itself when
    there is none."""
    return _blank_lines(src, _CPP_FOLLOWS, c=False)


# C++ also reads past an attribute macro on the line above a function (nlohmann/json's
# `JSON_HEDLEY_WARN_UNUSED_RESULT` over `static basic_json meta()`, read as its type: the member
# was named `basic_json meta` and its class's error ran on from it).
_CPP_FOLLOWS = (_NEXT, re.compile(_COMMENTS + _DECL, re.S))
_C_FOLLOWS = (_NEXT, _FIELD, _APART)


def _blank_lines(src: bytes, follows: tuple[re.Pattern[bytes], ...], c: bool) -> bytes:
    """`src` with each stand-alone macro line that one of `follows` follows blanked, unless the
    code before goes on into it (`_continued`); each line judged on `src` as it is."""
    return _blank(src, _alone(src, follows, c))


def _alone(src: bytes, follows: tuple[re.Pattern[bytes], ...], c: bool) -> Iterator[tuple[int, int]]:
    for m in _ALONE.finditer(src):
        if m.group("name").strip(b"_0123456789") == b"" or not any(p.match(src, m.end()) for p in follows):
            continue  # `___` is no name
        if not _continued(src, m.start(), c):
            yield m.span()


def _continued(src: bytes, start: int, c: bool) -> bool:
    """The code before the line at `start` goes on into it (`RED,` then `BLUE`). In C, not a
    comment's end, nor a directive but by a backslash (an X-macro's `#define XX(c) c,` above the
    `ERRNO_MAP(XX)` that expands it in an enum)."""
    i = start - 1
    while i >= 0 and src[i] in _SPACE:
        i -= 1
    if i < 0 or src[i] not in _CONTINUES or src[i - 1 : i + 1] == b"*/":
        return False
    if not c:
        return True
    line = src[src.rfind(b"\n", 0, i) + 1 : i + 1]
    return not line.lstrip().startswith(b"#") or src[i] == ord("\\")
