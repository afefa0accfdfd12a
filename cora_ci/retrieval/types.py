"""The contract between retrieval (ranking) and rendering (budget, formats, anchors).

Retrieval returns `Hit`s, best first; rendering turns them into `<cora:chunk>` / json / text within
a token budget. Both sides import these types and nothing else of each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from cora_ci.boosts import Boost

__all__ = ["Boost", "Filters", "Hit"]


@dataclass(frozen=True)
class Filters:
    """`--lang`, `--kind`, `--path GLOB`, `--exclude GLOB` (repeatable; empty = no filter)."""

    langs: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()


@dataclass
class Hit:
    """One ranked chunk. `full`: a boost demands it verbatim, whatever the budget. `relation`:
    how it relates to the symbol asked about (`related`), None for a search hit.

    `explain` keys (None when absent): bm25_rank, bm25_score, vector_rank, vector_score, fused,
    graph (PageRank contribution), boost (multiplier or bonus), and any ranking feature applied.
    """

    chunk_id: int
    score: float
    source: Literal["search", "graph", "boost"] = "search"
    full: bool = False
    explain: dict[str, float | int | str | None] = field(default_factory=dict)
    relation: str | None = None
    origin: int = 0  # which bundle, in an answer from several (their order as given)
