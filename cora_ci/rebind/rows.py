"""The source as rows, read from the text alone (no parse): each row's indentation, and where a
statement's block, the headers of the blocks around it and a statement continued over rows begin
and end. The locator's window (`locator.py`) is made of these rows; a tree-sitter parse of them
then decides."""

from __future__ import annotations

import bisect
import re
from functools import cached_property

import tree_sitter

LEAD = tuple(p.encode() for p in ("#", "//", "/*", "*", "@", "[", "--", ";"))  # comments, attributes
_COMMENT = tuple(p.encode() for p in ("//", "/*", "--", "* ", "*\t", "*/"))
# `#` starts a comment in most languages, but a private member (JavaScript) or a preprocessor line
# (C) in these; for them it is code.
_HASH_IS_CODE = frozenset({"javascript", "typescript", "tsx", "java", "c", "cpp", "csharp", "go", "rust",
                           "kotlin", "swift", "scala", "dart", "objc"})  # fmt: skip
# A row above a definition that belongs to it, besides comments and attributes: C++'s `template <...>`
# (the outline takes its `template_declaration` as the definition's wrapper).
_LEADS = dict.fromkeys(("cpp", "cuda"), (*LEAD, b"template<", b"template <"))
_CLOSERS = (b"}", b"end")
_CONTINUE = (b")", b"]", b"else", b"elif", b"except", b"finally", b"catch")
_OPERATORS = (b"and ", b"or ", b"+", b"-", b"*", b"/", b"%", b"|", b"&", b".", b"?", b":", b"=", b">", b"<")
_OPEN_EXPR = (b"(", b"[", b",", b"\\", b" and", b" or", b"+", b"-", b"|", b"&", b"=", b"?")
_MAX_HEADER_ROWS = 8
BLANK, COMMENT_ROW = -1, -2


class Levels:
    """`Text.levels` computed row by row on first use."""

    def __init__(self, text: Text) -> None:
        self._text = text
        self._known: dict[int, int] = {}
        self._outer: dict[int, int] = {}  # code row -> the nearest code row above it indented less

    def __getitem__(self, row: int) -> int:
        level = self._known.get(row)
        if level is None:
            level = self._known[row] = self._level(self._text.line(row))
        return level

    def up(self, row: int, level: int) -> int:
        """The nearest code row at or above `row` indented less than `level`, or -1.

        Every place of a window climbs to its headers through the same class body, so each code
        row passed remembers the row that ends its climb (a previous-smaller-element stack): the
        next climb jumps over what it already knows, and a window costs its own rows, not the
        file's."""
        if level <= 0:
            return -1
        pending: list[int] = []  # rows passed whose outer row is not known yet; levels ascend
        r = row
        while r >= 0:
            lv = self[r]
            if lv < 0:
                r -= 1
                continue
            while pending and self._known[pending[-1]] > lv:
                self._outer[pending.pop()] = r
            if lv < level:
                break
            pending.append(r)
            r = self._outer.get(r, r - 1)
        for p in pending:
            self._outer[p] = -1 if r < 0 else r
        return r

    def _level(self, raw: bytes) -> int:
        body = raw.lstrip(b" \t")
        if not body.strip():
            return BLANK
        if body.startswith(self._text.comments) or body.rstrip() == b"*":  # not `**kwargs`
            return COMMENT_ROW
        lead = raw[: len(raw) - len(body)]
        return len(lead.expandtabs(8)) if b"\t" in lead else len(lead)


class Text:
    """Rows of the source bytes: offsets, and (on first use) each row's indentation."""

    def __init__(self, src: bytes, lang: str) -> None:
        self.src = src
        self.comments = _COMMENT if lang in _HASH_IS_CODE else (b"#", *_COMMENT)
        self.leads = _LEADS.get(lang, LEAD)
        self.starts = [0, *(m.end() for m in re.finditer(b"\n", src))]
        if self.starts[-1] == len(src) and len(self.starts) > 1:
            self.starts.pop()
        self.rows = len(self.starts)

    @cached_property
    def levels(self) -> Levels:
        """Indentation of each row (tabs to 8), or BLANK, or COMMENT_ROW for comment-only rows,
        worked out for the rows asked about only (a window looks at a few hundred of 2,000)."""
        return Levels(self)

    def line(self, row: int) -> bytes:
        end = self.starts[row + 1] - 1 if row + 1 < self.rows else len(self.src)
        return self.src[self.starts[row] : end]

    def stripped(self, row: int) -> bytes:
        return self.line(row).strip()

    def indent(self, row: int) -> int:
        """Indentation of any row, comment rows included (blank rows: 0)."""
        level = self.levels[row]
        if level >= 0:
            return level
        line = self.line(row)
        return len(line[: len(line) - len(line.lstrip(b" \t"))].expandtabs(8)) if level == COMMENT_ROW else 0

    def row_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def places(self, word: str, skip_calls: bool = False) -> list[int]:
        """Rows where `word` occurs as a whole word (a literal search first: it is fast in C);
        with `skip_calls`, not the rows where it occurs only as a method call (`.word(`)."""
        w = word.encode()
        rows: list[int] = []
        for m in re.finditer(re.escape(w), self.src):
            a, b = m.start(), m.end()
            before = self.src[a - 1 : a] if a else b" "
            after = self.src[b : b + 1] or b" "
            if (before.isalnum() or before in b"_$") or (after.isalnum() or after in b"_$"):
                continue
            if skip_calls and before == b"." and self.src[b : b + 40].lstrip(b" \t").startswith(b"("):
                continue
            row = self.row_of(a)
            if not rows or rows[-1] != row:
                rows.append(row)
        return rows


def code_above(text: Text, row: int) -> int:
    """The nearest row above `row` holding code (not blank, not only a comment), or -1."""
    r = row - 1
    while r >= 0 and text.levels[r] < 0:
        r -= 1
    return r


def partial(text: Text, row: int) -> bool:
    """Row `row` continues a statement or clause begun above it."""
    if text.levels[row] < 0 or text.stripped(row).startswith(_CONTINUE + _CLOSERS + _OPERATORS):
        return True
    above = code_above(text, row)
    return above >= 0 and text.stripped(above).endswith(_OPEN_EXPR)


def block(text: Text, row: int) -> tuple[int, int]:
    """Rows of the statement starting on `row`: attribute, decorator and comment rows just above
    it (a multi-line decorator too), and every following row indented deeper; a closing `}` or a
    clause (`else:`) at its own level belongs to it."""
    levels = text.levels
    level = text.indent(row)
    start = j = row
    while j > 0 and j > start - _MAX_HEADER_ROWS:
        j -= 1
        if levels[j] == BLANK:
            break
        s = text.stripped(j)
        if text.indent(j) == level and s.startswith(text.leads):
            start = j
        elif not (text.indent(j) > level or s.startswith((b")", b"]"))):
            break
    end = row
    for j in range(row + 1, text.rows):
        lv = levels[j]
        if lv == BLANK:
            continue
        if lv == COMMENT_ROW:  # inside if indented deeper; a dedented comment ends nothing
            end = j if text.indent(j) > level else end
            continue
        if lv > level:
            end = j
            continue
        s = text.stripped(j)
        if lv == level and s.startswith(_CONTINUE):
            end = j
            continue
        if lv == level and s.startswith(_CLOSERS):
            end = j
        break
    else:
        end = text.rows - 1  # the file ended inside the block
    return start, end


def headers(text: Text, row: int) -> list[int]:
    """Rows of the headers of the blocks enclosing `row`, found by indentation.

    A clause header (`elif x:`, `} else {`) stands for its statement, whose first row is taken
    instead. A header may span rows: `class A(\\n    B,\\n):` and Allman braces put a continuation
    below its first row (climbed over), `class A\\n    extends B {` a continuation above its opener
    (followed).
    """
    levels = text.levels
    out: list[int] = []
    level = text.indent(row)  # `row` may be a comment or decorator row
    r = levels.up(row - 1, level)
    while r >= 0 and level > 0:
        lv = levels[r]
        if text.stripped(r).startswith(_CONTINUE + _CLOSERS):
            level = lv + 1  # climb to the statement this clause continues
            r = levels.up(r - 1, level)
            continue
        bottom = r
        while bottom + 1 < row and bottom - r < _MAX_HEADER_ROWS and not opens(text.stripped(bottom)):
            bottom += 1
        if not opens(text.stripped(bottom)) or not text.stripped(bottom):
            # opens no block (the end of a multi-line string at column 0): not a header
            r = levels.up(r - 1, level)
            continue
        level = lv
        top = r
        for _ in range(_MAX_HEADER_ROWS):
            if top == 0 or not continues(text, top):
                break
            top -= 1
        out.extend(range(top, bottom + 1))
        r = levels.up(top - 1, level)
    return out


def continues(text: Text, row: int) -> bool:
    """Row `row` continues a statement begun above it."""
    if text.stripped(row).startswith((b"{", b")", b"]", b"}", b":", b",")):
        return True
    above = code_above(text, row)
    return above >= 0 and text.stripped(above).endswith((b"(", b",", b"[", b"\\"))


def opens(line: bytes) -> bool:
    return line.endswith((b"{", b":", b"=>", b"where", b"do", b"then")) or not line


def ranges(text: Text, rows: list[int]) -> list[tree_sitter.Range]:
    """Runs of consecutive rows as tree-sitter ranges (bytes and points of the whole file)."""
    out: list[tree_sitter.Range] = []
    i = 0
    while i < len(rows):
        j = i
        while j + 1 < len(rows) and rows[j + 1] == rows[j] + 1:
            j += 1
        a, b = rows[i], rows[j]
        start = text.starts[a]
        end = text.starts[b + 1] if b + 1 < text.rows else len(text.src)
        end_point = (b + 1, 0) if b + 1 < text.rows else (b, end - text.starts[b])
        out.append(tree_sitter.Range((a, 0), end_point, start, end))
        i = j + 1
    return out
