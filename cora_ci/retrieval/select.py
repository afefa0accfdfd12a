"""The last step of a ranking: which `k` candidates are picked, and what boosts pin.

Picks are greedy by score, each file's n-th pick discounted (a top ten is not one file), with a
few places kept for what only the reference graph found; `path:` and `symbol:` boosts pin whole
files and definitions, whatever the ranking says.
"""

from __future__ import annotations

import heapq
from typing import Any, Protocol, TypeVar

from cora_ci.retrieval.catalog import Catalog, Meta
from cora_ci.retrieval.features import definition_level
from cora_ci.retrieval.params import Params
from cora_ci.retrieval.query import split_qualified
from cora_ci.retrieval.types import Boost


class Picked(Protocol):
    """A candidate as picking sees it (search's and search_many's alike)."""

    score: float
    explain: dict[str, Any]

    @property
    def meta(self) -> Meta: ...
    @property
    def source(self) -> str: ...  # "graph": only reference expansion found it
    @property
    def origin(self) -> int: ...  # which bundle


C = TypeVar("C", bound=Picked)


def graph_places(k: int, params: Params) -> frozenset[int]:
    """The places (1-based) of a `k`-long answer kept for chunks only the graph found: every
    `1 / graph_slots`-th place after the first `graph_after`, the same places whatever `k` is, so
    an answer asked again with a larger `-k` (an agent paging) keeps its first places, and a short
    answer is all direct hits."""
    if params.graph_slots <= 0:
        return frozenset()
    period = max(1, round(1 / params.graph_slots))
    return frozenset(p for p in range(params.graph_after + 1, k + 1) if p % period == 0)


def diverse(cands: dict[int, C], k: int, skip: list[int], decay: float, places: frozenset[int] = frozenset(),
            floor: float = 0.0, pointed: float | None = None) -> list[C]:  # fmt: skip
    """The best `k`, greedily, each file's n-th pick discounted by decay**n (scores stay sorted),
    but a candidate of at least `floor` times the best score never below that share: spreading
    orders the relevant answers, and never puts a weak chunk of another file above a relevant one
    of a file already shown (sinatra, whose `base.rb` holds most of its code, answered "how are
    route handlers compiled" with its `route!` and then a module header, a logger's `require`).

    A build's output or a vendored file (demoted as such) whose symbol is one already picked is a
    copy of it and adds nothing: it stands after the rest (`COPY`; axios' "how does axios pick the
    adapter" answered its `getAdapter` and then the same function in three `dist/` bundles).

    The `places` (`graph_places`) go to the best chunks that only the graph found, while there
    are any: reference expansion adds context that no query word names. Each pick depends only
    on the picks before it, so the first `k` of a longer answer are this answer.

    A chunk a report's clue names more strongly than `pointed` (more than any file is named: the
    frame's own chunk, the code that emits a quoted message) is not discounted: a split
    method's second part holding the frame's line was fourth behind its file's private
    constructor and header, a message's emitter below its file's imports.
    """
    skipped = set(skip)
    least = floor * max((c.score for key, c in cands.items() if key not in skipped), default=0.0)
    names: set[str] = set()  # the symbols picked

    def discounted(c: C, n: int, copy: bool) -> float:
        if pointed is not None and (c.explain.get("evidence") or 0.0) > pointed:
            return c.score
        if copy:
            return c.score * decay**n * COPY
        got = c.score * decay**n
        return max(got, least) if c.score >= least else got

    def copied(c: C) -> bool:
        return c.explain.get("demoted") in _COPIES and any(n[-1] in names for n in c.meta.names if n)

    heap = [(-c.score, -c.score, key, (0, False)) for key, c in cands.items() if key not in skipped]
    heapq.heapify(heap)
    taken: dict[tuple[int, str], int] = {}
    graph_left = any(c.source == "graph" for key, c in cands.items() if key not in skipped)

    def take(graph_only: bool) -> C | None:
        """The best candidate left (graph-only: the best of those), None when there is none."""
        passed = []
        got = None
        while heap:
            entry = heapq.heappop(heap)
            neg, raw, cid, seen = entry
            c = cands[cid]
            if graph_only and c.source != "graph":
                passed.append(entry)
                continue
            state = (taken.get((c.origin, c.meta.path), 0), copied(c))
            if state != seen:  # its file gained picks, or its name was picked: re-rank it
                heapq.heappush(heap, (-discounted(c, *state), raw, cid, state))
                continue
            if ((state[0] and decay != 1.0) or state[1]) and -neg != c.score:
                c.explain["diversity"] = round(-neg / c.score, 6) if c.score else round(decay ** state[0], 6)
            c.score = -neg
            taken[(c.origin, c.meta.path)] = state[0] + 1
            names.update(n[-1] for n in c.meta.names if n)
            got = c
            break
        for entry in passed:
            heapq.heappush(heap, entry)
        return got

    out: list[C] = []
    while len(out) < k:
        c = None
        if graph_left and len(out) + 1 in places:
            c = take(True)
            graph_left = c is not None
        if c is None:
            c = take(False)
        if c is None:
            break
        out.append(c)
    return out


COPY = 0.25  # a build's output or a vendored copy of a symbol already picked: after the rest
_COPIES = frozenset({"generated", "vendored"})


def pinned_ids(cat: Catalog, boosts: tuple[Boost, ...]) -> list[int]:
    """Chunk ids that `path:` and `symbol:` boosts include in full, in directive and file order."""
    out: dict[int, None] = {}
    for b in boosts:
        if b.kind == "path":
            for row in cat.file_rows(b.value):
                out.setdefault(cat.row_meta(row).id, None)
        elif b.kind == "symbol":
            for cid in definitions(cat, b.value):
                out.setdefault(cid, None)
                for d in cat.descendants(cid):
                    out.setdefault(d, None)
    return list(out)


def definitions(cat: Catalog, symbol: str) -> list[int]:
    """Chunks defining `symbol` (bare or qualified), found through the BM25 name field."""
    if "::" in symbol:  # an anchor: `src/auth.py::Auth.login`
        path = symbol.split("::", 1)[0]
        return [m.id for m in map(cat.row_meta, cat.file_rows(path)) if symbol in m.anchors]
    ident = split_qualified(symbol)
    if not ident:
        return []
    hits = cat.bundle.lexical.search(symbol, 200)
    found = []
    for cid, _ in hits:
        m = cat.meta(cid)
        if m is not None and definition_level(ident, m) >= 3:
            found.append(m)
    found.sort(key=lambda m: (m.path, m.start_line))
    return [m.id for m in found]
