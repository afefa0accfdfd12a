"""C and C++ read past the macros that stand alone on a line and open or close a scope.

tree-sitter parses C-family code without its preprocessor, so a macro that expands to a scope's
brace or to nothing and stands alone on a line (`FMT_BEGIN_NAMESPACE`, `FMT_END_EXPORT`,
`ABSL_NAMESPACE_BEGIN`, `G_BEGIN_DECLS`, `Q_OBJECT`) is read as the type of what follows:
`FMT_END_EXPORT` and the `namespace detail {` after it became one function named `namespace`
whose body, 830 lines of fmt's `base.h`, held template functions the walk did not see as
definitions (`parse_format_specs` had no chunk of its own). Such lines are blanked, byte for byte
so rows and offsets stay, when what follows cannot be typed by them (a namespace, a template, a
class, another such line, a directive, a scope's end), and the blanked text is parsed instead only
when it has fewer parse errors: a file that parses is never touched, nor one the blanking makes
worse. Names and chunk text are still read from the file as written.
"""

from __future__ import annotations

import re

# A line that is one upper-case name, perhaps called (`FMT_VISIBILITY("hidden")`), and a comment.
_ALONE = re.compile(
    rb"^[ \t]*(?P<name>[A-Z_][A-Z0-9_]{2,})[ \t]*(?:\([^\n]*\))?[ \t]*"
    rb"(?://[^\n]*|/\*[^\n]*?\*/)?[ \t]*\r?$",
    re.M,
)
# What may follow it: nothing a macro could be the type or an attribute of, or the file's end.
_NEXT = re.compile(
    rb"\s*(?:(?://[^\n]*|/\*.*?\*/)\s*)*"  # comments between
    rb"(?:(?:namespace|template|class|struct|union|enum|typedef|extern|using|static_assert|public|private"
    rb"|protected)\b|[#}@]|\Z|[A-Z_][A-Z0-9_]{2,}[ \t]*(?:\([^\n]*\))?[ \t]*(?://[^\n]*)?\r?(?:\n|\Z))",
    re.S,
)
_CONTINUES = frozenset(b",(=+-*/|&?:\\[<")  # a line ending so goes on: `RED,` then `BLUE`
_SPACE = frozenset(b" \t\r\n")


def blank_alone(src: bytes) -> bytes:
    """`src` with each stand-alone macro line that a scope or a declaration keyword follows replaced
    by spaces (the same length, line ends kept); `src` itself when there is none."""
    out: bytearray | None = None
    for m in _ALONE.finditer(src):
        if m.group("name").strip(b"_0123456789") == b"" or not _NEXT.match(src, m.end()):
            continue  # `___` is no name
        i = m.start() - 1
        while i >= 0 and src[i] in _SPACE:
            i -= 1
        if i >= 0 and src[i] in _CONTINUES:
            continue
        if out is None:
            out = bytearray(src)
        out[m.start() : m.end()] = re.sub(rb"[^\r\n]", b" ", m.group(0))
    return src if out is None else bytes(out)
