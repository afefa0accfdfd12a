"""Other readings of a file whose grammar misreads valid code as written: the same bytes, rewritten
in place (no byte moves, the same rows after each rewrite), for `outline` to parse again and keep
when that leaves fewer errors. Names and chunk text are still read from the file as written.

- TypeScript without semicolons (Prettier's `semi: false`) whose interfaces hold call signatures
  (`<K extends keyof M>(key: K): M[K]`, one a line): the grammar reads a line that begins with `<`
  as continuing the line before, and hono's central `types.ts` was one error (CORA-CHK-001,
  chunked by lines). Read with a `;` in place of the last space before each such `<` (a JSX line
  begins with `<` too: hence "fewer errors").
- Swift whose type bodies hold `#if ... #else ... #endif`: the grammar reads no directive there
  and closed the type at its first one (Alamofire's `Protected` was 2 lines, its members top-level
  functions; 22 of its files had parse errors). Read with the directive lines blanked, both
  branches' declarations in turn.
- Kotlin whose primary constructor stands on the line after its class (`expect class
  InflaterSource` then `internal constructor(`, Dagger's `class Repo` then `@Inject constructor(`):
  valid Kotlin, but the grammar ends the class at the line break, so the class was one line and
  its members top-level functions (22 of okio's files). Read with the line breaks between the
  class and its constructor made spaces (a `//` comment there a `/* */` one) and as many breaks
  put back inside the constructor's parentheses, where a break means nothing: only the rows of
  the constructor's own first line move. And a property's `actual` or `expect` is blanked: the grammar
  reads it in a class parameter only as its first modifier (`internal actual val data:
  ByteArray` and `@JvmField actual val sink: Sink` were errors).
- Dart 3's abstract members (`abstract final Future<void>? abortTrigger;`, `abstract int get x;`)
  and external fields: the grammar reads neither modifier there (30 of dart-lang/http's files had
  errors); an indented `abstract` (a class's member: Dart nests no classes) and an `external`
  before `final`/`var` are blanked, and so is an unnamed `library;`.
"""

from __future__ import annotations

import re

LANGS = frozenset({"typescript", "tsx", "swift", "kotlin", "dart"})


def reread(lang: str, src: bytes) -> bytes:
    """`src` rewritten for `lang`'s grammar (the same bytes where nothing is)."""
    if lang in ("typescript", "tsx"):
        return _CALL_SIGNATURE_LINE.sub(rb"\1;<", src)
    if lang == "swift" and b"#" in src:
        return _SWIFT_CONDITION.sub(lambda m: b" " * len(m[0]), src)
    if lang == "kotlin":
        src = _KT_PLATFORM.sub(b" " * 6, src)  # both words are 6 letters
        return _kotlin_constructors(src) if b"constructor" in src else src
    if lang == "dart":
        return _DART_MODIFIER.sub(lambda m: b" " * len(m[0]), src)
    return src


_CALL_SIGNATURE_LINE = re.compile(rb"(?m)^( *) <")  # a line beginning `<T>(...)` in a type's body
_SWIFT_CONDITION = re.compile(rb"(?m)^[ \t]*#(?:if|elseif|else|endif|error|warning)\b[^\n]*")

# Dart 3's member modifiers the grammar does not read: an abstract field or getter (`abstract final
# Future<void>? abortTrigger;`, an error in 30 of dart-lang/http's files), an external field.
_DART_MODIFIER = re.compile(
    rb"(?m)(?<=^[ \t])[ \t]*(?:abstract|external(?=[ \t]+(?:final|var|const|late)\b))(?=[ \t])|^library;"
)  # and Dart 2.19's unnamed `library;`, which the grammar wants a name for
# `actual` or `expect` before a `val`/`var`: read past (nothing asks a tree for them).
_KT_PLATFORM = re.compile(rb"(?<![^\s(,])(?:actual|expect)(?=[ \t]+va[lr]\b)")
# A line that begins with a constructor: its annotations and modifiers, `constructor(`.
_KT_CONSTRUCTOR = re.compile(
    rb"(?m)^[ \t]*(?:(?:@[\w.]+(?:\([^()\n]*\))?|private|internal|protected|public|actual|expect)[ \t]+)*"
    rb"constructor[ \t]*\("
)
# The end of a class's header with nothing after its name and type parameters.
_KT_HEADER = re.compile(rb"\b(?:class|object)[ \t]+\w+(?:[ \t]*<[^\n{}()/]*>)?[ \t]*$")
_KT_BACK = 4096  # bytes of comments looked through between a class and its constructor


def _kotlin_constructors(src: bytes) -> bytes:
    out: bytearray | None = None
    for m in _KT_CONSTRUCTOR.finditer(src):
        header_end = _header_before(src, m.start())
        if header_end is None:
            continue
        gap = _joined(src[header_end : m.start()])
        if gap is None:
            continue
        joined, breaks = gap
        spots = _spaces_inside(src, m.end(), breaks) if breaks else []
        if spots is None:
            continue
        out = bytearray(src) if out is None else out
        out[header_end : m.start()] = joined
        for at in spots:
            out[at] = 0x0A
    return src if out is None else bytes(out)


def _header_before(src: bytes, line_start: int) -> int | None:
    """Where a class header ends before the line at `line_start`, past blank lines and comments
    (None: what comes before is no class header)."""
    p = line_start
    floor = max(0, line_start - _KT_BACK)
    while p > floor:
        q = p
        while q > floor and src[q - 1] in b" \t\r\n":
            q -= 1
        if src[q - 2 : q] == b"*/":
            p = src.rfind(b"/*", floor, q - 2)
            if p < 0:
                return None
            continue
        start = src.rfind(b"\n", 0, q) + 1
        line = src[start:q]
        if line.lstrip().startswith(b"//"):
            p = start
            continue
        header = _KT_HEADER.search(line)
        if header is None or b"//" in line[: header.start()]:  # a header inside a `//` comment: none
            return None
        return q
    return None


def _joined(gap: bytes) -> tuple[bytes, int] | None:
    """The blank lines and comments between a class and its constructor on one line: each line
    break outside a block comment a space, each `//` comment a block comment of its length, and
    the breaks put back inside those comments where they fit (not over a `/` or `*`, which could
    open or close one). Returns the new bytes and the count of breaks left to put back (None: a
    `//` comment too short to turn or holding comment marks)."""
    out = bytearray(gap)
    breaks = 0
    inside: list[int] = []  # comment bytes a break may take
    i = 0
    while i < len(gap):
        if gap.startswith(b"/*", i):
            end = gap.find(b"*/", i + 2)
            end = len(gap) if end < 0 else end
            inside.extend(j for j in range(i + 2, end) if gap[j] not in b"/*\n")
            i = end + 2
        elif gap.startswith(b"//", i):
            end = gap.find(b"\n", i)
            end = len(gap) if end < 0 else end
            words = gap[i + 2 : end - 2]  # a nested `/*` opens a comment in Kotlin: none made
            if end - i < 4 or b"/*" in words or b"*/" in gap[i:end] or words.endswith(b"/"):
                return None
            out[i:end] = b"/*" + words + b"*/"
            inside.extend(j for j in range(i + 2, end - 2) if out[j] not in b"/*")
            i = end
        else:
            if gap[i] == 0x0A:
                out[i] = 0x20
                breaks += 1
            i += 1
    for j in inside[:breaks]:
        out[j] = 0x0A
    return bytes(out), max(0, breaks - len(inside))


def _spaces_inside(src: bytes, after_paren: int, count: int) -> list[int] | None:
    """`count` blanks inside the parentheses opened just before `after_paren` where a line break
    may stand: in the run of blanks after `(`, `,`, `:` or a break (not inside a string or a
    comment, where a break would end it or mean something)."""
    spots: list[int] = []
    depth = 1
    prev = ord("(")
    i = after_paren
    end = min(len(src), after_paren + _KT_BACK)
    while i < end and len(spots) < count:
        c = src[i]
        if c in b"\"'" or src.startswith((b"//", b"/*"), i):
            return None  # a default value's string, a comment: stop before guessing where it ends
        if c in b" \t" and prev in b"(,:\n \t":
            spots.append(i)
            prev = 0x0A
        else:
            depth += (c == 0x28) - (c == 0x29)
            if depth == 0:
                break
            prev = c
        i += 1
    return spots if len(spots) == count else None
