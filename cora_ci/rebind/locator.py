"""Find a symbol by its anchor in the current text of a file, with the chunker's own rules.

The anchor (`Outer.Inner.member`, `save(int)`, `f#2`) is matched by walking the tree-sitter tree
with the outline's classification (`_Extractor`) and `assign_anchors`' disambiguation, descending
only into the containers on the anchor's path, so a located symbol is exactly the one a fresh
index of the file would anchor there.

Parsing is the cost (~6-8 ms for a 2,000-line file), so the locator first parses a *window*: the
lines where the symbol's name occurs as a word, each extended over its indented block and the
headers of the blocks around it (tree-sitter's `included_ranges`, which keeps file coordinates).
A window result is used only if it is clean (the symbol and its namesakes parse without errors,
no error inside a window block); anything else takes a full parse, so the window is a shortcut
and never a different answer.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

import tree_sitter

from cora_ci.chunking.outline import Sym, _Extractor, last_row, parser_for

Node = Any
_WORD_NAME = re.compile(r"^[A-Za-z_$][\w$]*$")
_LEAD = ("#", "//", "/*", "*", "@", "[", "--", ";")  # comment, decorator and attribute lines
_COMMENT = ("#", "//", "/*", "*", "--")
_CLOSERS = ("}", "end")
_CONTINUE = (")", "]", "else", "elif", "except", "finally", "catch")
_LEAD_B = tuple(p.encode() for p in _LEAD)
_COMMENT_B = tuple(p.encode() for p in _COMMENT)
_CLOSERS_B = tuple(p.encode() for p in _CLOSERS)
_CONTINUE_B = tuple(p.encode() for p in _CONTINUE)
_MAX_HEADER_ROWS = 8
_OPERATORS = (b"and ", b"or ", b"+", b"-", b"*", b"/", b"%", b"|", b"&", b".", b"?", b":", b"=", b">", b"<")
_OPEN_EXPR = (b"(", b"[", b",", b"\\", b" and", b" or", b"+", b"-", b"|", b"&", b"=", b"?", b"||", b"&&")
_CSHARP_FILE_NS = re.compile(rb"^namespace\s+[\w.]+\s*;", re.MULTILINE)


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
        return [s for _, s, _ in _level(self.extractor, body, True, (), self.nrows)]


@dataclass
class _Found:
    qual: str
    sym: Sym
    node: Node
    ex: _Extractor
    keep: set[int] = field(default_factory=set)  # the rows of the window it was found in
    tree: Any = None  # keeps the window's tree alive with its nodes


class _Text:
    """Row offsets and indentation of the source bytes, computed once per file."""

    def __init__(self, src: bytes) -> None:
        self.src = src
        self.starts = [0, *(m.end() for m in re.finditer(b"\n", src))]
        if self.starts[-1] == len(src) and len(self.starts) > 1:
            self.starts.pop()
        self._indent: dict[int, int] = {}

    @property
    def rows(self) -> int:
        return len(self.starts)

    def line(self, row: int) -> bytes:
        end = self.starts[row + 1] - 1 if row + 1 < len(self.starts) else len(self.src)
        return self.src[self.starts[row] : end]

    def row_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def indent(self, row: int) -> int:
        if row not in self._indent:
            line = self.line(row)
            body = line.lstrip(b" \t")
            self._indent[row] = len(line[: len(line) - len(body)].expandtabs(8))
        return self._indent[row]

    def stripped(self, row: int) -> bytes:
        return self.line(row).strip()


def locate(lang: str, src: bytes, qual: str, name: str, sep: str = ".") -> Located | None:
    """The symbol anchored `qual` (the part after `path::`) in `src`, or None if it is gone.

    `src` is the file as the chunker sees it: decoded lines joined with `\\n`, UTF-8. `name` is the
    symbol's own name (the chunk's `symbol`), used to find the window.
    """
    text = _Text(src)
    if _WORD_NAME.match(name):
        pattern = re.compile(rb"(?<![\w$])" + re.escape(name.encode()) + rb"(?![\w$])")
        rows = sorted({text.row_of(m.start()) for m in pattern.finditer(src)})
        if not rows:
            return None  # the name no longer occurs: nothing can define it
        found = _window(lang, text, rows, qual, sep)
        if found is not None:
            return Located(found.sym, found.qual, "window", found.node, found.ex, text.rows)
    tree = parser_for(lang).parse(src)
    found = _search(lang, src, tree.root_node, qual, sep, text.rows)[0]
    if found is None:
        return None
    return Located(found.sym, found.qual, "full", found.node, found.ex, text.rows)


# ---- the window ------------------------------------------------------------------------------


def _window(lang: str, text: _Text, rows: list[int], qual: str, sep: str) -> _Found | None:
    """Parse each place the name occurs apart (its block and the headers around it), so a
    fragment that does not parse (a docstring's words, half an expression) cannot spill into the
    next one; a definition's own block holds any use of the name inside it."""
    parser = tree_sitter.Parser(parser_for(lang).language)
    extra: set[int] = set()
    if lang == "csharp":
        extra = {text.row_of(m.start()) for m in _CSHARP_FILE_NS.finditer(text.src)}
    covered: set[int] = set()
    cands: dict[int, _Found] = {}
    errors: list[tuple[Node, int]] = []
    budget = text.rows // 2  # beyond that a full parse is as cheap and simpler
    for r in rows:
        if r in covered or _partial(text, r):
            continue  # inside a block already parsed, or a use in an expression or clause
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
        for f in _candidates(lang, text.src, tree.root_node, qual, sep, text.rows):
            f.keep = keep
            f.tree = tree
            old = cands.get(f.sym.def_start)
            if old is None or f.sym.end > old.sym.end:
                cands[f.sym.def_start] = f
    found, group = _pick(list(cands.values()), qual)
    if found is None or any(f.node.has_error for f in group):
        return None
    above = found.sym.start - 1
    if above >= 0 and text.stripped(above) and above not in found.keep:
        return None  # a decorator or doc comment above may belong to it: the window did not see it
    # An overload suffix (`f(int)`, `f#2`) depends on every namesake: a syntax error at a row
    # naming the symbol might hide one, so only a clean window is trusted then.
    overloaded = len(group) > 1 or found.qual != group[0].qual
    if overloaded and any(_error_inside(root, [(r, r)]) for root, r in errors):
        return None
    return found


def _partial(text: _Text, row: int) -> bool:
    """Row `row` continues a statement or clause begun above it."""
    if text.stripped(row).startswith(_CONTINUE_B + _CLOSERS_B + _OPERATORS):
        return True
    above = row - 1
    while above >= 0 and not text.stripped(above):
        above -= 1
    return above >= 0 and text.stripped(above).endswith(_OPEN_EXPR)


def _block(text: _Text, row: int) -> tuple[int, int]:
    """Rows of the statement starting on or around `row`: leading comments and attributes above
    it, and every following row indented deeper (a closing `}` at its own level ends it)."""
    level = text.indent(row)
    start = j = row
    while j > 0 and j > start - _MAX_HEADER_ROWS:  # multi-line decorators and attributes
        j -= 1
        s = text.stripped(j)
        if not s:
            break
        if text.indent(j) == level and s.startswith(_LEAD_B):
            start = j
        elif not (text.indent(j) > level or s.startswith((b")", b"]"))):
            break
    end = row
    for j in range(row + 1, text.rows):
        s = text.stripped(j)
        if not s or s.startswith(_COMMENT_B):
            continue
        ind = text.indent(j)
        if ind > level:
            end = j
            continue
        if ind == level and s.startswith(_CONTINUE_B):
            end = j
            continue
        if ind == level and s.startswith(_CLOSERS_B):
            end = j
        break
    else:
        # the file ended inside the block: include the trailing rows
        end = max(end, text.rows - 1)
    return start, end


def _headers(text: _Text, row: int) -> list[int]:
    """Rows of the headers of the blocks enclosing `row`, found by indentation.

    A header may span rows: `class A(\n    B,\n):` and Allman braces put a continuation below its
    first row (climbed over), `class A\n    extends B {` a continuation above its opener (followed).
    """
    out: list[int] = []
    level = text.indent(row)
    r = row - 1
    while r >= 0 and level > 0:
        s = text.stripped(r)
        if not s or s.startswith(_COMMENT_B) or text.indent(r) >= level:
            r -= 1
            continue
        if s.startswith(_CONTINUE_B + _CLOSERS_B):  # `elif x:`, `} else {`: climb to its `if`
            level = text.indent(r) + 1
            r -= 1
            continue
        level = text.indent(r)
        top = r
        for _ in range(_MAX_HEADER_ROWS):
            if top == 0 or not _continues(text, top):
                break
            top -= 1
        bottom = r
        while bottom + 1 < row and bottom - r < _MAX_HEADER_ROWS and not _opens(text.stripped(bottom)):
            bottom += 1
        out.extend(range(top, bottom + 1))
        r = top - 1
    return out


def _continues(text: _Text, row: int) -> bool:
    """Row `row` continues a statement begun above it."""
    if text.stripped(row).startswith((b"{", b")", b"]", b"}", b":", b",")):
        return True
    above = row - 1
    while above >= 0 and not text.stripped(above):
        above -= 1
    return above >= 0 and text.stripped(above).endswith((b"(", b",", b"[", b"\\"))


def _opens(line: bytes) -> bool:
    return line.endswith((b"{", b":", b"=>", b"where", b"do", b"then")) or not line


def _ranges(text: _Text, rows: list[int]) -> list[tree_sitter.Range]:
    out: list[tree_sitter.Range] = []
    i = 0
    while i < len(rows):
        j = i
        while j + 1 < len(rows) and rows[j + 1] == rows[j] + 1:
            j += 1
        a, b = rows[i], rows[j]
        start = text.starts[a]
        end = text.starts[b + 1] if b + 1 < len(text.starts) else len(text.src)
        end_point = (b + 1, 0) if b + 1 < len(text.starts) else (b, end - text.starts[b])
        out.append(tree_sitter.Range((a, 0), end_point, start, end))
        i = j + 1
    return out


def _error_inside(root: Node, blocks: list[tuple[int, int]]) -> bool:
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_error:
            first, last = n.start_point[0], last_row(n)
            if any(first <= b and a <= last for a, b in blocks):
                return True
            continue
        if n.has_error:
            stack.extend(n.children)
    return False


# ---- the targeted walk -------------------------------------------------------------------------


def _level(
    ex: _Extractor, container: Node, in_type: bool, prefix: tuple[str, ...], nrows: int
) -> list[tuple[tuple[str, ...], Sym, Node]]:
    """The symbols directly below `container`, built as `_Extractor.build` builds them."""
    out: list[tuple[tuple[str, ...], Sym, Node]] = []
    ns: tuple[str, ...] = prefix
    for outer, n, (kind, label, name) in ex.scan(container, in_type):
        body = ex.body_of(n)
        start, head, doc = ex.expand_up(outer)
        sym = Sym(
            kind=kind, label=label, name=name, start=start, end=last_row(outer),
            def_start=n.start_point[0], head_start=head, sig_end=ex.sig_end(n, body),
            signature=ex.signature(n, body), params=ex.params(n), doc=ex.docstring(body) or doc,
            qual_prefix=ex._receiver(n),
        )  # fmt: skip
        if n.type in ex.spec.file_namespaces:
            sym.end = nrows - 1
            out.append(((*prefix, name), sym, n))
            ns = (*prefix, name)  # what follows a `namespace X;` lies inside it
            continue
        out.append(((*ns, *sym.qual_prefix, name), sym, n))
    return out


def _search(
    lang: str, src: bytes, root: Node, qual: str, sep: str, nrows: int
) -> tuple[_Found | None, list[_Found]]:
    """The symbol anchored `qual`, and the symbols sharing its base name (its namesakes)."""
    return _pick(_candidates(lang, src, root, qual, sep, nrows), qual)


def _candidates(lang: str, src: bytes, root: Node, qual: str, sep: str, nrows: int) -> list[_Found]:
    """Symbols whose qualified name is `qual` without its overload suffix, found by descending only
    into the containers on its path."""
    ex = _Extractor(lang, src)
    cands: list[_Found] = []
    work: list[tuple[Node, bool, tuple[str, ...]]] = [(root, False, ())]
    while work:
        container, in_type, prefix = work.pop()
        for q, sym, node in _level(ex, container, in_type, prefix, nrows):
            joined = sep.join(q)
            if qual == joined or qual.startswith((joined + "(", joined + "#")):
                cands.append(_Found(joined, sym, node, ex))
            if not qual.startswith(joined + sep):
                continue
            if sym.kind == "namespace" and node.type in ex.spec.file_namespaces:
                continue  # its members were listed at this level already
            body = ex.body_of(node)
            if sym.kind in ("type", "namespace") and body is not None:
                work.append((body, sym.kind == "type", q))
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
                return _Found(full, f.sym, f.node, f.ex, f.keep), group
    return None, cands
