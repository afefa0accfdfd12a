"""Find a symbol by its anchor in the current text of a file, with the chunker's own rules.

The anchor (`Outer.Inner.member`, `save(int)`, `f#2`) is matched by walking the tree-sitter tree
with the outline's walk and classification (`Extractor`, `symbols.Classifier`) and
`assign_anchors`' disambiguation, descending only into the containers on the anchor's path, so
a located symbol is exactly the one a fresh index of the file would anchor there.

Parsing is the cost (5-8 ms for a 2,000-line file), so the locator first parses a *window*: each
place where the symbol's name occurs as a word, with its indented block and the headers of the
blocks around it, parsed apart (tree-sitter's `included_ranges`, which keeps file coordinates).
The window's answer is used only when nothing it left out could change it (`_trusted`: clean
parses, no attached comment or deeper code cut off at either end, no syntax error near a namesake
of an overloaded symbol); any doubt, and any "not found", takes a full parse. So the window is a
shortcut to the same answer, never a different one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import tree_sitter

from cora_ci.chunking import macros
from cora_ci.chunking.extractor import NESTING, Extractor, Sym, last_row
from cora_ci.chunking.outline import SlowParse, parse, parser_for
from cora_ci.files.langs import C_LANGS
from cora_ci.rebind.rows import BLANK, COMMENT_ROW, Text, block, headers, partial, ranges

Node = Any
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
# Where a name written `.name(` is always a method call, never a definition (unlike C#'s
# `void IFoo.Bar()`, Kotlin's `fun String.bar()` or Ruby's `def self.bar()`), so such rows can
# hold no definition of it: a deleted method whose calls remain is "gone" without a parse.
_CALLS_NEVER_DEFINE = frozenset({"python", "javascript", "typescript", "tsx", "java", "go", "rust"})
_MAX_PLACES = 40  # a name used in more places than that is cheaper to find with one full parse
_CSHARP_FILE_NS = re.compile(rb"^namespace\s+[\w.]+\s*;", re.MULTILINE)
_SUFFIXES = re.compile(r"\([^()]*\)|#\d+")  # overloads' parameters and `#n`


@dataclass
class Located:
    """A symbol found in the current text: its outline record (rows 0-based) and its node."""

    sym: Sym
    anchor: str  # the qualified part, as assign_anchors gives it
    how: str  # "window" or "full": which parse found it (the benchmark reports the share)
    node: Node
    extractor: Extractor
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


def locate(lang: str, src: bytes, qual: str, name: str, sep: str = ".") -> Located | None:
    """The symbol anchored `qual` (the part after `path::`) in `src`, or None if it is gone.

    `src` is the file as the chunker sees it: decoded lines joined with `\\n`, UTF-8. `name` is the
    symbol's own name (the chunk's `symbol`): the rows holding its longest word make the window.
    """
    text = Text(src, lang)
    ex = Extractor(lang, src)
    words = sorted(_WORD.findall(name), key=len)  # `#run`, `[_load]`, `<Point as Display>`: a word of it
    if words:
        rows = text.places(words[-1], skip_calls=lang in _CALLS_NEVER_DEFINE)
        if not rows:
            return None  # the name no longer occurs but in calls: nothing can define it
        found = _window(lang, ex, text, rows, qual, sep)
        if found is not None:
            return Located(found.sym, found.qual, "window", found.node, ex, text.rows)
    try:
        tree = _parsed(lang, src)
    except SlowParse:
        return None  # not found: the chunk is served as indexed
    found = _pick(_candidates(ex, tree.root_node, qual, sep, text.rows), qual)[0]
    return Located(found.sym, found.qual, "full", found.node, ex, text.rows) if found is not None else None


@lru_cache(maxsize=16)
def _parsed(lang: str, src: bytes) -> Any:
    """A changed file's whole tree, remembered: a session re-binds the same files query after
    query, and every parse leaves ~1.1 times its source in the tree-sitter binding
    (`outline._reader`)."""
    return parse(lang, src)


# ---- the window ------------------------------------------------------------------------------


def _window(lang: str, ex: Extractor, text: Text, rows: list[int], qual: str, sep: str) -> _Found | None:
    """Parse each place the name occurs apart (its block and the headers around it), so a
    fragment that does not parse (a docstring's words, half an expression) cannot spill into the
    next one; a definition's own block holds any use of the name inside it."""
    places = [r for r in rows if not partial(text, r)]  # a use in an expression or a clause
    if len(places) > _MAX_PLACES or not _any_inside(text, places, qual, sep):
        return None
    parser = tree_sitter.Parser(parser_for(lang).language)
    src = macros.blank_exports(text.src) if lang in C_LANGS else text.src  # as `parse` reads it
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
        a, b = block(text, r)
        covered.update(range(a, b + 1))
        keep = {*range(a, b + 1), *headers(text, a), *extra}
        budget -= len(keep)
        if budget < 0:
            return None
        parser.included_ranges = ranges(text, sorted(keep))
        tree = parser.parse(src)
        if tree.root_node.has_error:
            errors.append((tree.root_node, r))
        for f in _candidates(ex, tree.root_node, qual, sep, text.rows):
            f.keep, f.tree = keep, tree
            old = cands.get(f.sym.def_start)
            if old is None or f.sym.end > old.sym.end:
                cands[f.sym.def_start] = f
    found, group = _pick(list(cands.values()), qual)
    return found if found is not None and _trusted(text, found, group, errors) else None


def _any_inside(text: Text, places: list[int], qual: str, sep: str) -> bool:
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
    return any(word.search(text.line(h)) for r in places for h in (r, *headers(text, r)))


def _trusted(text: Text, found: _Found, group: list[_Found], errors: list[tuple[Node, int]]) -> bool:
    """Whether the window's answer is the full parse's: nothing the window cut off could change
    the symbol's extent or its anchor. Any doubt sends the caller to a full parse."""
    if any(f.node.has_error for f in group):
        return False
    if not found.keep.issuperset(range(found.sym.def_start, found.sym.end + 1)):
        return False  # pieces parsed together that the file keeps apart (a header missed above)
    above = found.sym.start - 1
    line = text.stripped(above) if above >= 0 else b""
    level = text.indent(found.sym.def_start)
    attachable = line.startswith((*text.leads, b")", b"]")) or (bool(line) and text.indent(above) > level)
    if attachable and (above not in found.keep or line.startswith(text.leads)):
        # a comment or decorator (or the tail of one) just above that it did not take: outside
        # the window, or cut off from it there (a comment first in a block goes to its header)
        return False
    below = found.sym.end + 1
    if below < text.rows and text.levels[below] == COMMENT_ROW and below not in found.keep:
        return False  # a comment just below, outside the window, that the symbol might hold
    while below < text.rows and text.levels[below] == BLANK:
        below += 1
    deeper = below < text.rows and text.indent(below) > level
    if deeper and below not in found.keep:
        return False  # the code goes on, deeper, beyond the window: the symbol was cut short
    # An overload suffix (`f(int)`, `f#2`) depends on every namesake: a syntax error at a row
    # naming the symbol might hide one, so only a clean window is trusted then.
    overloaded = len(group) > 1 or found.qual != group[0].qual
    return not (overloaded and any(_error_inside(root, r) for root, r in errors))


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


def _sym(ex: Extractor, outer: Node, n: Node, info: tuple[str, str, str], nrows: int) -> Sym:
    """A symbol's outline record as `Extractor.build` makes it, minus what locating never reads
    (signature and doc text; parameters are added for namesakes)."""
    kind, label, name = info
    body = ex.body_of(n)
    start, head, _, end = ex.extent(outer, n)
    sym = Sym(kind=kind, label=label, name=name, start=start, end=end, def_start=n.start_point[0],
              head_start=head, sig_end=ex.sig_end(n, body), qual_prefix=ex.receiver(n))  # fmt: skip
    if n.type in ex.spec.file_namespaces:
        sym.end = nrows - 1
    return sym


def _candidates(ex: Extractor, root: Node, qual: str, sep: str, nrows: int) -> list[_Found]:
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
            q = (*ns, *ex.receiver(n), name)
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
