"""Symbols that have no chunk of their own: the members of a small type kept whole in one chunk.

The chunker keeps a type that fits its budget in one chunk, so `Point.x` of a four-line class has
no chunk and no anchor in the bundle. `outline` still lists it and `show` still finds it: the
file is parsed again (the working tree's, else the indexed text put back together from its
chunks, which hold every non-blank line) and its symbols get the anchors the chunker's own
`assign_anchors` gives them, the ones a chunk of theirs would have had.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from cora_ci.chunking.model import Chunk
from cora_ci.rebind.bind import Stale
from cora_ci.rebind.view import View, from_chunk, merge

if TYPE_CHECKING:  # the parser is imported where a file is parsed: a query renders without it
    from cora_ci.chunking.extractor import Sym


@dataclass(frozen=True)
class Inner:
    """A symbol found by parsing: its anchor, declaration, depth and 1-based lines."""

    anchor: str
    sym: Sym
    depth: int
    start: int
    end: int
    lines: tuple[str, ...]  # its text, line by line
    stale: Stale

    @property
    def signature(self) -> str:
        return self.lines[self.sym.def_start - self.sym.start].strip() if self.lines else self.sym.signature


def wanted(chunks: list[Chunk]) -> bool:
    """Whether a file's chunks leave symbols out: a parsed file with a type kept whole."""
    return any(
        c.strategy == "structural" and c.kind == "type" and not c.children and c.end_line > c.start_line
        for c in chunks
    )


def inner_symbols(
    chunks: list[Chunk], current: list[str] | None, unchanged: bool, gone: bool
) -> dict[str, Inner]:
    """Every symbol of the file by anchor, from the working tree's lines `current` when the file
    is there (`unchanged`: its blob is the indexed one), else from the indexed text; a symbol
    gone from the working tree (all of them when the file is `gone`) keeps its indexed lines,
    `missing`."""
    indexed = indexed_lines(chunks)
    lang = chunks[0].lang
    path = chunks[0].path
    if current is None or unchanged:
        return _parse(path, lang, current if current is not None else indexed, "missing" if gone else None)
    now = _parse(path, lang, current, "moved")
    before = _parse(path, lang, indexed, None)
    out: dict[str, Inner] = {}
    for anchor, old in before.items():
        new = now.get(anchor)
        if new is None:
            out[anchor] = Inner(anchor, old.sym, old.depth, old.start, old.end, old.lines, "missing")
        elif (new.start, new.end, new.lines) == (old.start, old.end, old.lines):
            out[anchor] = old
        else:
            out[anchor] = new
    return out | {a: s for a, s in now.items() if a not in out}


def indexed_lines(chunks: list[Chunk]) -> list[str]:
    """The indexed file: every chunk's verbatim lines, blank where none holds a line."""
    view: View = merge([from_chunk(c) for c in chunks])
    return [view.shown.get(n, "") for n in range(1, view.end + 1)]


def _parse(path: str, lang: str, lines: list[str], stale: Stale) -> dict[str, Inner]:
    return dict(_parsed(path, lang, "\n".join(lines), stale))


@lru_cache(maxsize=32)
def _parsed(path: str, lang: str, text: str, stale: Stale) -> dict[str, Inner]:
    """The file's symbols by anchor, remembered: a session's `show`, `related` and `outline` of one
    file parse it once, and every parse leaves ~1.1 times its source in the tree-sitter binding
    (`outline._reader`), which a long-lived MCP server would pile up call after call."""
    from cora_ci.chunking.assemble import assign_anchors
    from cora_ci.chunking.outline import SlowParse, outline

    lines = text.split("\n")
    try:
        syms = outline(lang, text.encode("utf-8"), lines).symbols
    except SlowParse:
        return {}  # a file the chunker cuts into lines (CORA-CHK-015) has no nested symbols either
    anchors = assign_anchors(path, syms)
    out: dict[str, Inner] = {}
    stack = [(s, 0) for s in reversed(syms)]
    while stack:
        s, depth = stack.pop()
        if s.kind != "namespace":  # no chunk has a namespace's anchor either
            own = tuple(lines[s.start : s.end + 1])
            out[anchors[id(s)]] = Inner(anchors[id(s)], s, depth, s.start + 1, s.end + 1, own, stale)
        stack.extend((c, depth + 1) for c in reversed(s.children))  # a namespace counts, as in hierarchies
    return out
