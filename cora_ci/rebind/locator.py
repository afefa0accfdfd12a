"""Find a symbol by its anchor in the current text of a file, with the chunker's own rules.

The anchor (`Outer.Inner.member`, `save(int)`, `f#2`) is matched by walking the tree-sitter tree
with the outline's classification (`_Extractor`) and `assign_anchors`' disambiguation, descending
only into the containers on the anchor's path, so a located symbol is exactly the one a fresh
index of the file would anchor there.

Parsing is the cost (5-8 ms for a 2,000-line file), so the locator first parses a *window*: each
place where the symbol's name occurs as a word, with its indented block and the headers of the
blocks around it, parsed apart (tree-sitter's `included_ranges`, which keeps file coordinates).
The window's answer is used only when nothing it left out could change it (`_trusted`: clean
parses, no attached comment or deeper code cut off at either end, no syntax error near a namesake
of an overloaded symbol); any doubt, and any "not found", takes a full parse. So the window is a
shortcut to the same answer, never a different one.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import tree_sitter

from cora_ci.chunking.outline import NESTING, Sym, _Extractor, last_row, parser_for

Node = Any
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_LEAD = tuple(p.encode() for p in ("#", "//", "/*", "*", "@", "[", "--", ";"))  # comments, attributes
_COMMENT = tuple(p.encode() for p in ("//", "/*", "--", "* ", "*\t", "*/"))
# `#` starts a comment in most languages, but a private member (JavaScript) or a preprocessor line
# (C) in these; for them it is code.
_HASH_IS_CODE = frozenset({"javascript", "typescript", "tsx", "java", "c", "cpp", "csharp", "go", "rust",
                           "kotlin", "swift", "scala", "dart", "objc"})  # fmt: skip
# Where a name written `.name(` is always a method call, never a definition (unlike C#'s
# `void IFoo.Bar()`, Kotlin's `fun String.bar()` or Ruby's `def self.bar()`), so such rows can
# hold no definition of it: a deleted method whose calls remain is "gone" without a parse.
_CALLS_NEVER_DEFINE = frozenset({"python", "javascript", "typescript", "tsx", "java", "go", "rust"})
_CLOSERS = (b"}", b"end")
_CONTINUE = (b")", b"]", b"else", b"elif", b"except", b"finally", b"catch")
_OPERATORS = (b"and ", b"or ", b"+", b"-", b"*", b"/", b"%", b"|", b"&", b".", b"?", b":", b"=", b">", b"<")
_OPEN_EXPR = (b"(", b"[", b",", b"\\", b" and", b" or", b"+", b"-", b"|", b"&", b"=", b"?")
_MAX_HEADER_ROWS = 8
_MAX_PLACES = 40  # a name used in more places than that is cheaper to find with one full parse
_CSHARP_FILE_NS = re.compile(rb"^namespace\s+[\w.]+\s*;", re.MULTILINE)
_BLANK, _COMMENT_ROW = -1, -2
_SUFFIXES = re.compile(r"\([^()]*\)|#\d+")  # overloads' parameters and `#n`


@dataclass
class Located:
    """A symbol found in the current text: its outline record (rows 0-based) and its node."""

    sym: Sym
    anchor: str  # the qualified part, as assign_anchors gives it
    how: str  # "window" or "full": which parse found it (the benchmark reports the share)
    node: Node
    extractor: _Extractor
    nrows: int

    def members(self) -> list[Sym]:
        """Its direct members as the outline lists them: what a type's skeleton is made of."""
        body = self.extractor.body_of(self.node)
        if body is None:
            return []
        in_type = self.sym.kind == "type"  # else a function: its nested functions and classes
        found = self.extractor.scan(body, in_type, shallow=not in_type)
        return [
            _sym(self.extractor, o, n, i, self.nrows) for o, n, i in found if in_type or i[0] != "namespace"
        ]


@dataclass
class _Found:
    qual: str
    sym: Sym
    node: Node
    keep: set[int] = field(default_factory=set)  # the rows of the window it was found in
    tree: Any = None  # keeps the window's tree alive with its nodes


class _Levels:
    """`_Text.levels` computed row by row on first use."""

    def __init__(self, text: _Text) -> None:
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
            return _BLANK
        if body.startswith(self._text.comments) or body.rstrip() == b"*":  # not `**kwargs`
            return _COMMENT_ROW
        lead = raw[: len(raw) - len(body)]
        return len(lead.expandtabs(8)) if b"\t" in lead else len(lead)


class _Text:
    """Rows of the source bytes: offsets, and (on first use) each row's indentation."""

    def __init__(self, src: bytes, lang: str) -> None:
        self.src = src
        self.comments = _COMMENT if lang in _HASH_IS_CODE else (b"#", *_COMMENT)
        self.starts = [0, *(m.end() for m in re.finditer(b"\n", src))]
        if self.starts[-1] == len(src) and len(self.starts) > 1:
            self.starts.pop()
        self.rows = len(self.starts)

    @cached_property
    def levels(self) -> _Levels:
        """Indentation of each row (tabs to 8), or _BLANK, or _COMMENT_ROW for comment-only rows,
        worked out for the rows asked about only (a window looks at a few hundred of 2,000)."""
        return _Levels(self)

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
        return len(line[: len(line) - len(line.lstrip(b" \t"))].expandtabs(8)) if level == _COMMENT_ROW else 0

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


def locate(lang: str, src: bytes, qual: str, name: str, sep: str = ".") -> Located | None:
    """The symbol anchored `qual` (the part after `path::`) in `src`, or None if it is gone.

    `src` is the file as the chunker sees it: decoded lines joined with `\\n`, UTF-8. `name` is the
    symbol's own name (the chunk's `symbol`): the rows holding its longest word make the window.
    """
    text = _Text(src, lang)
    ex = _Extractor(lang, src)
    words = sorted(_WORD.findall(name), key=len)  # `#run`, `[_load]`, `<Point as Display>`: a word of it
    if words:
        rows = text.places(words[-1], skip_calls=lang in _CALLS_NEVER_DEFINE)
        if not rows:
            return None  # the name no longer occurs but in calls: nothing can define it
        found = _window(lang, ex, text, rows, qual, sep)
        if found is not None:
            return Located(found.sym, found.qual, "window", found.node, ex, text.rows)
    tree = parser_for(lang).parse(src)
    found = _pick(_candidates(ex, tree.root_node, qual, sep, text.rows), qual)[0]
    return Located(found.sym, found.qual, "full", found.node, ex, text.rows) if found is not None else None


# ---- the window ------------------------------------------------------------------------------


def _window(lang: str, ex: _Extractor, text: _Text, rows: list[int], qual: str, sep: str) -> _Found | None:
    """Parse each place the name occurs apart (its block and the headers around it), so a
    fragment that does not parse (a docstring's words, half an expression) cannot spill into the
    next one; a definition's own block holds any use of the name inside it."""
    places = [r for r in rows if not _partial(text, r)]  # a use in an expression or a clause
    if len(places) > _MAX_PLACES or not _any_inside(text, places, qual, sep):
        return None
    parser = tree_sitter.Parser(parser_for(lang).language)
    extra: set[int] = set()
    if lang == "csharp":
        extra = {text.row_of(m.start()) for m in _CSHARP_FILE_NS.finditer(text.src)}
    covered: set[int] = set()
    cands: dict[int, _Found] = {}
    errors: list[tuple[Node, int]] = []
    budget = text.rows // 2  # beyond that a full parse is as cheap and simpler
    for r in places:
        if r in covered:
            continue  # inside a block already parsed
        a, b = _block(text, r)
        covered.update(range(a, b + 1))
        keep = {*range(a, b + 1), *_headers(text, a), *extra}
        budget -= len(keep)
        if budget < 0:
            return None
        parser.included_ranges = _ranges(text, sorted(keep))
        tree = parser.parse(text.src)
        if tree.root_node.has_error:
            errors.append((tree.root_node, r))
        for f in _candidates(ex, tree.root_node, qual, sep, text.rows):
            f.keep, f.tree = keep, tree
            old = cands.get(f.sym.def_start)
            if old is None or f.sym.end > old.sym.end:
                cands[f.sym.def_start] = f
    found, group = _pick(list(cands.values()), qual)
    return found if found is not None and _trusted(text, found, group, errors) else None


def _any_inside(text: _Text, places: list[int], qual: str, sep: str) -> bool:
    """Whether any place could lie in the anchor's container: its row or the headers above it name
    the container (`class Mailbox`, `func (m *Mailbox) Remove`, `Mailbox.remove = ...`). When none
    does, the window could only find namesakes in other containers (the usual case for a deleted
    method), so the full parse is taken at once. It only chooses the way, never the answer."""
    base = _SUFFIXES.sub("", qual)  # in `f(a.B).inner`, `a` is no container
    container = base.rsplit(sep, 1)[0] if sep in base else ""
    words = sorted(_WORD.findall(container.rsplit(sep, 1)[-1]), key=len)
    if not words:
        return True  # a top-level symbol: every place may be it
    word = re.compile(rb"(?<![\w$])" + re.escape(words[-1].encode()) + rb"(?![\w$])")
    return any(word.search(text.line(h)) for r in places for h in (r, *_headers(text, r)))


def _trusted(text: _Text, found: _Found, group: list[_Found], errors: list[tuple[Node, int]]) -> bool:
    """Whether the window's answer is the full parse's: nothing the window cut off could change
    the symbol's extent or its anchor. Any doubt sends the caller to a full parse."""
    if any(f.node.has_error for f in group):
        return False
    if not found.keep.issuperset(range(found.sym.def_start, found.sym.end + 1)):
        return False  # pieces parsed together that the file keeps apart (a header missed above)
    above = found.sym.start - 1
    line = text.stripped(above) if above >= 0 else b""
    level = text.indent(found.sym.def_start)
    attachable = line.startswith((*_LEAD, b")", b"]")) or (bool(line) and text.indent(above) > level)
    if attachable and (above not in found.keep or line.startswith(_LEAD)):
        # a comment or decorator (or the tail of one) just above that it did not take: outside
        # the window, or cut off from it there (a comment first in a block goes to its header)
        return False
    below = found.sym.end + 1
    if below < text.rows and text.levels[below] == _COMMENT_ROW and below not in found.keep:
        return False  # a comment just below, outside the window, that the symbol might hold
    while below < text.rows and text.levels[below] == _BLANK:
        below += 1
    deeper = below < text.rows and text.indent(below) > level
    if deeper and below not in found.keep:
        return False  # the code goes on, deeper, beyond the window: the symbol was cut short
    # An overload suffix (`f(int)`, `f#2`) depends on every namesake: a syntax error at a row
    # naming the symbol might hide one, so only a clean window is trusted then.
    overloaded = len(group) > 1 or found.qual != group[0].qual
    return not (overloaded and any(_error_inside(root, r) for root, r in errors))


def _code_above(text: _Text, row: int) -> int:
    """The nearest row above `row` holding code (not blank, not only a comment), or -1."""
    r = row - 1
    while r >= 0 and text.levels[r] < 0:
        r -= 1
    return r


def _partial(text: _Text, row: int) -> bool:
    """Row `row` continues a statement or clause begun above it."""
    if text.levels[row] < 0 or text.stripped(row).startswith(_CONTINUE + _CLOSERS + _OPERATORS):
        return True
    above = _code_above(text, row)
    return above >= 0 and text.stripped(above).endswith(_OPEN_EXPR)


def _block(text: _Text, row: int) -> tuple[int, int]:
    """Rows of the statement starting on `row`: attribute, decorator and comment rows just above
    it (a multi-line decorator too), and every following row indented deeper; a closing `}` or a
    clause (`else:`) at its own level belongs to it."""
    levels = text.levels
    level = text.indent(row)
    start = j = row
    while j > 0 and j > start - _MAX_HEADER_ROWS:
        j -= 1
        if levels[j] == _BLANK:
            break
        s = text.stripped(j)
        if text.indent(j) == level and s.startswith(_LEAD):
            start = j
        elif not (text.indent(j) > level or s.startswith((b")", b"]"))):
            break
    end = row
    for j in range(row + 1, text.rows):
        lv = levels[j]
        if lv == _BLANK:
            continue
        if lv == _COMMENT_ROW:  # inside if indented deeper; a dedented comment ends nothing
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


def _headers(text: _Text, row: int) -> list[int]:
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
        while bottom + 1 < row and bottom - r < _MAX_HEADER_ROWS and not _opens(text.stripped(bottom)):
            bottom += 1
        if not _opens(text.stripped(bottom)) or not text.stripped(bottom):
            # opens no block (the end of a multi-line string at column 0): not a header
            r = levels.up(r - 1, level)
            continue
        level = lv
        top = r
        for _ in range(_MAX_HEADER_ROWS):
            if top == 0 or not _continues(text, top):
                break
            top -= 1
        out.extend(range(top, bottom + 1))
        r = levels.up(top - 1, level)
    return out


def _continues(text: _Text, row: int) -> bool:
    """Row `row` continues a statement begun above it."""
    if text.stripped(row).startswith((b"{", b")", b"]", b"}", b":", b",")):
        return True
    above = _code_above(text, row)
    return above >= 0 and text.stripped(above).endswith((b"(", b",", b"[", b"\\"))


def _opens(line: bytes) -> bool:
    return line.endswith((b"{", b":", b"=>", b"where", b"do", b"then")) or not line


def _ranges(text: _Text, rows: list[int]) -> list[tree_sitter.Range]:
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


def _error_inside(root: Node, row: int) -> bool:
    """A syntax error spans `row`."""
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_error:
            if n.start_point[0] <= row <= last_row(n):
                return True
            continue
        if n.has_error:
            stack.extend(n.children)
    return False


# ---- the targeted walk -------------------------------------------------------------------------


def _sym(ex: _Extractor, outer: Node, n: Node, info: tuple[str, str, str], nrows: int) -> Sym:
    """A symbol's outline record as `_Extractor.build` makes it, minus what locating never reads
    (signature and doc text; parameters are added for namesakes)."""
    kind, label, name = info
    body = ex.body_of(n)
    start, head, _ = ex.expand_up(outer)
    sym = Sym(kind=kind, label=label, name=name, start=start, end=last_row(outer), def_start=n.start_point[0],
              head_start=head, sig_end=ex.sig_end(n, body), qual_prefix=ex._receiver(n))  # fmt: skip
    if n.type in ex.spec.file_namespaces:
        sym.end = nrows - 1
    return sym


def _candidates(ex: _Extractor, root: Node, qual: str, sep: str, nrows: int) -> list[_Found]:
    """Symbols whose qualified name is `qual` without its overload suffix, found by descending only
    into the containers on its path; a record is built only for those."""
    cands: list[_Found] = []
    work: list[tuple[Node, bool, tuple[str, ...], bool]] = [(root, False, (), False)]
    while work:
        container, in_type, prefix, shallow = work.pop()
        ns = prefix
        for outer, n, info in ex.scan(container, in_type, shallow):
            kind, name = info[0], info[2]
            if n.type in ex.spec.file_namespaces:
                ns = (*prefix, name)  # what follows a `namespace X;` lies inside it
                continue
            q = (*ns, *ex._receiver(n), name)
            joined = sep.join(q)
            if qual == joined or qual.startswith((joined + "(", joined + "#")):
                sym = _sym(ex, outer, n, info, nrows)
                sym.params = ex.params(n)
                cands.append(_Found(joined, sym, n))
            if shallow and kind == "namespace":
                continue  # as the outline has it: an object literal in a function is its code
            nests = kind in ("type", "namespace") or (kind == "method" and info[1] in NESTING)
            if nests and qual.startswith(joined + sep):
                body = ex.body_of(n)
                if body is not None:
                    work.append((body, kind == "type", q, kind == "method"))
    return cands


def _pick(cands: list[_Found], qual: str) -> tuple[_Found | None, list[_Found]]:
    """`assign_anchors`' disambiguation among namesakes: parameters if they differ, then `#n`."""
    by_base: dict[str, list[_Found]] = {}
    for f in cands:
        by_base.setdefault(f.qual, []).append(f)
    for base, group in by_base.items():
        group.sort(key=lambda f: (f.sym.start, f.sym.def_start))
        seen: dict[str, int] = {}
        for f in group:
            full = base + f.sym.params if len(group) > 1 and f.sym.params else base
            seen[full] = seen.get(full, 0) + 1
            if seen[full] > 1:
                full = f"{full}#{seen[full]}"
            if full == qual:
                return _Found(full, f.sym, f.node, f.keep, f.tree), group
    return None, cands
