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


def graph_places(k: int, params: Params) -> int:
    """The places of `k` kept for chunks only the graph found: whole places of the share, so a
    short answer is all direct hits (at `-k 3`, a rounded-up 0.6 gave a caller of a caller the
    third place over the third best match)."""
    return int(k * params.graph_slots + 1e-9)


def diverse(cands: dict[int, C], k: int, skip: list[int], decay: float, reserve: int,
            floor: float = 0.0) -> list[C]:  # fmt: skip
    """The best `k`, greedily, each file's n-th pick discounted by decay**n (scores stay sorted),
    but a candidate of at least `floor` times the best score never below that share: spreading
    orders the relevant answers, and never puts a weak chunk of another file above a relevant one
    of a file already shown (sinatra, whose `base.rb` holds most of its code, answered "how are
    route handlers compiled" with its `route!` and then a module header, a logger's `require`).

    Up to `reserve` of the last places go to chunks that only the graph found, if the ranking did
    not already take that many: reference expansion adds context that no query word names.
    """
    skipped = set(skip)
    least = floor * max((c.score for key, c in cands.items() if key not in skipped), default=0.0)

    def discounted(c: C, n: int) -> float:
        got = c.score * decay**n
        return max(got, least) if c.score >= least else got

    heap = [(-c.score, -c.score, key, 0) for key, c in cands.items() if key not in skipped]
    heapq.heapify(heap)
    taken: dict[tuple[int, str], int] = {}
    out: list[C] = []
    extra: list[C] = []

    def pick(graph_only: bool, limit: int, into: list[C]) -> None:
        while heap and len(into) < limit:
            neg, raw, cid, seen = heapq.heappop(heap)
            c = cands[cid]
            if graph_only and c.source != "graph":
                continue
            n = taken.get((c.origin, c.meta.path), 0)
            if n != seen:  # the file gained picks since this entry was pushed: re-rank it
                heapq.heappush(heap, (-discounted(c, n), raw, cid, n))
                continue
            if n and decay != 1.0:
                c.explain["diversity"] = round(-neg / c.score, 6) if c.score else round(decay**n, 6)
            c.score = -neg
            taken[(c.origin, c.meta.path)] = n + 1
            into.append(c)

    pick(False, k, out)
    need = min(reserve, k) - sum(c.source == "graph" for c in out)
    if need > 0:
        pick(True, need, extra)  # scored below every pick so far: they go last, in order
        searched = [i for i, c in enumerate(out) if c.source != "graph"]
        drop = set(searched[len(searched) - len(extra) :]) if extra else set()
        out = [c for i, c in enumerate(out) if i not in drop] + extra
    return out


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
