"""Hits to an answer within a token budget: best chunks verbatim, the rest cut to signatures.

Packing starts from every hit cut to its signature (dropping the lowest-ranked while even that is
over budget), then, best first, gives each hit its full text and its parent type's skeleton, or
just its full text, if the answer still fits. Hits with `full` (boosts) are always verbatim. All
views of one file that overlap are merged into one result, so a line is never printed twice and
a member that is a hit appears in full inside its type's skeleton.

The budget counts the code each result shows (its lines and `. . .` markers) with the embedding
model's tokenizer, the unit of a chunk's `tokens`; metadata and commentary around it are not
counted. Only `full` hits may exceed it, and only by themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, Protocol

from cora_ci.chunking.model import Chunk
from cora_ci.chunking.tokens import default_counter
from cora_ci.rebind.bind import Bound, Stale
from cora_ci.rebind.view import View, merge, signature
from cora_ci.retrieval.types import Hit

Mode = Literal["sig", "full", "full+parent"]


class ChunkSource(Protocol):
    def chunk(self, chunk_id: int) -> Chunk | None: ...

    def bind(self, chunk: Chunk) -> Bound: ...


@dataclass
class Result:
    """One block of the answer: a hit, with whatever overlapped it merged in."""

    view: View
    chunk: Chunk  # the best hit of the block: its symbol, anchor and kind name the result
    hit: Hit
    elided: bool  # the best hit was cut to its signature for the budget
    stale: Stale
    parent: Chunk | None  # the type whose skeleton frames the hit, when it was merged in
    members: list[int] = field(default_factory=list)  # chunk ids of all hits merged here

    @property
    def text(self) -> str:
        return self.view.text()

    @cached_property
    def tokens(self) -> int:
        """Tokens of the code shown, as the budget counts them (loads the tokenizer on first use)."""
        return view_tokens(self.view)


def view_tokens(view: View) -> int:
    return sum(default_counter().count_lines([t for _, t in view.rendered()]))


@dataclass
class _Item:
    rank: int
    hit: Hit
    chunk: Chunk
    bound: Bound
    parent: Chunk | None
    parent_bound: Bound | None
    mode: Mode | None = None
    _sig: View | None = None

    def views(self) -> list[tuple[View, bool]]:
        """The views this item adds in its mode, each with whether it is in current coordinates."""
        current = self.bound.stale != "missing"
        if self.mode is None:
            return []
        if self.mode == "sig":
            if self._sig is None:
                self._sig = signature(self.bound.view, self.chunk.symbol)
            return [(self._sig, current)]
        out = [(self.bound.view, current)]
        if self.mode == "full+parent" and self.parent_bound is not None:
            out.append((self.parent_bound.view, self.parent_bound.stale != "missing"))
        return out


def pack(hits: list[Hit], source: ChunkSource | Sequence[ChunkSource], budget: int | None) -> list[Result]:
    """The answer for `hits` (best first) within `budget` tokens (None: everything verbatim); with
    several bundles, `source` has one source per bundle and each hit's `origin` says which."""
    items = _items(hits, source if isinstance(source, Sequence) else [source])
    counter = _Counter()
    forced = [i for i in items if i.hit.full]
    for i in forced:
        i.mode = "full"
    rest = [i for i in items if not i.hit.full]
    if budget is None:
        for i in rest:
            i.mode = "full+parent" if i.parent_bound is not None else "full"
        return _results(items)
    for i in rest:
        i.mode = "sig"
    cost = counter.cost(items)
    for i in reversed(rest):  # even signatures are too many: drop the lowest-ranked
        if cost <= budget:
            break
        i.mode = None
        cost = counter.cost(items)
    for i in rest:
        if i.mode is None:
            continue
        for mode in ("full+parent", "full") if i.parent_bound is not None else ("full",):
            i.mode = mode
            if counter.cost(items) <= budget:
                break
            i.mode = "sig"
    return _results(items)


def _items(hits: list[Hit], sources: Sequence[ChunkSource]) -> list[_Item]:
    seen: set[tuple[int, int]] = set()
    out: list[_Item] = []
    for rank, h in enumerate(hits):
        if (h.origin, h.chunk_id) in seen:
            continue
        seen.add((h.origin, h.chunk_id))
        source = sources[h.origin]
        chunk = source.chunk(h.chunk_id)
        if chunk is None:
            continue
        bound = source.bind(chunk)
        parent = source.chunk(chunk.parent) if chunk.parent is not None else None
        # the parent type's skeleton frames a hit that is where the skeleton is: not a missing one
        framed = parent is not None and parent.kind == "type" and bool(parent.elided)
        parent = parent if framed and bound.stale != "missing" else None
        parent_bound = source.bind(parent) if parent is not None else None
        if parent_bound is not None and parent_bound.stale == "missing":
            parent, parent_bound = None, None
        out.append(_Item(rank, h, chunk, bound, parent, parent_bound))
    return out


def _groups(items: list[_Item]) -> list[tuple[View, list[tuple[_Item, View]]]]:
    """Merged views, each with the item views it is made of; views of one file that overlap merge
    (never across the indexed/current line numbering of a `missing` result, nor across bundles)."""
    pieces: list[tuple[tuple[int, str, bool], View, _Item]] = []
    for it in items:
        for view, current in it.views():
            pieces.append(((it.hit.origin, view.path, current), view, it))
    pieces.sort(key=lambda p: (p[0], p[1].start, p[1].end))
    out: list[tuple[View, list[tuple[_Item, View]]]] = []
    group: list[tuple[_Item, View]] = []
    key: tuple[int, str, bool] | None = None
    end = 0
    for k, view, it in pieces:
        if group and k == key and view.start <= end:
            group.append((it, view))
            end = max(end, view.end)
            continue
        if group:
            out.append((merge([v for _, v in group]), group))
        group, key, end = [(it, view)], k, view.end
    if group:
        out.append((merge([v for _, v in group]), group))
    return out


class _Counter:
    """Tokens of merged views, remembered by the views they merge: packing re-costs the answer
    once per decision, and most groups are unchanged from one decision to the next."""

    def __init__(self) -> None:
        self._groups: dict[tuple[int, ...], int] = {}

    def cost(self, items: list[_Item]) -> int:
        total = 0
        for view, members in _groups(items):
            key = tuple(id(v) for _, v in members)
            if key not in self._groups:
                self._groups[key] = view_tokens(view)
            total += self._groups[key]
        return total


def _results(items: list[_Item]) -> list[Result]:
    ranked: list[tuple[int, Result]] = []
    for view, members in _groups(items):
        own = [it for it, v in members if v is not (it.parent_bound.view if it.parent_bound else None)]
        best = min(own or [it for it, _ in members], key=lambda it: it.rank)
        pb = best.parent_bound
        framed = best.mode == "full+parent" and pb is not None and any(v is pb.view for _, v in members)
        stale: Stale = best.bound.stale
        if stale is None and any(it.bound.stale == "moved" for it, _ in members):
            stale = "moved"
        ids = list(dict.fromkeys(it.chunk.id for it, _ in sorted(members, key=lambda m: m[0].rank)))
        elided = best.mode == "sig" and best.views()[0][0] is not best.bound.view  # cut, not short
        result = Result(view, best.chunk, best.hit, elided, stale, best.parent if framed else None, ids)
        ranked.append((best.rank, result))
    return [r for _, r in sorted(ranked, key=lambda t: t[0])]
