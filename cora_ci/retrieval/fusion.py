"""One ranking from two: BM25 (identifier-aware terms) and vector similarity.

The form and the weights were chosen on bench/quality.py (tuning repositories only, see
bench/RESULTS.md): candidates were reciprocal-rank fusion (RRF), a convex combination of
max-normalised scores and one of min-max-normalised scores, each with separate weights for
identifier and natural-language queries. `Fusion` holds the choice; `fuse` applies it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

Form = Literal["rrf", "max", "minmax"]


@dataclass(frozen=True)
class Fusion:
    form: Form = "minmax"
    vec_weight_ident: float = 0.0  # share of the vector side for a query that is one identifier
    vec_weight_text: float = 0.5  # ... and for natural language
    vec_weight_report: float = 0.3  # ... and for a report (query.ASKING): its evidence is its words
    rrf_k: float = 60.0

    def vector_share(self, identifier: bool, report: bool = False) -> float:
        """The vector side's share for a query of this kind."""
        if identifier:
            return self.vec_weight_ident
        return self.vec_weight_report if report else self.vec_weight_text


class Fused(NamedTuple):
    score: float  # in [0, 1]
    bm25_rank: int | None  # 1-based
    bm25_score: float | None
    vector_rank: int | None
    vector_score: float | None


def _normalised(scores: list[float], form: Form) -> list[float]:
    if not scores:
        return []
    hi, lo = max(scores), min(scores)
    if form == "max":
        return [max(s, 0.0) / hi if hi > 0 else 0.0 for s in scores]
    span = hi - lo
    return [(s - lo) / span if span > 0 else 1.0 for s in scores]


def fuse(
    lexical: list[tuple[int, float]],
    vector: list[tuple[int, float]],
    fusion: Fusion,
    identifier: bool,
    report: bool = False,
) -> dict[int, Fused]:
    """Fused score per chunk id of either list; a list a chunk is missing from contributes 0."""
    wv = fusion.vector_share(identifier, report)
    if not vector:
        wv = 0.0
    elif not lexical:
        wv = 1.0
    wl = 1.0 - wv
    score: dict[int, float] = {}
    ranks: list[dict[int, tuple[int, float]]] = [{}, {}]
    for side, (hits, w) in enumerate(((lexical, wl), (vector, wv))):
        if fusion.form == "rrf":
            parts = [w * (fusion.rrf_k + 1) / (fusion.rrf_k + r) for r in range(1, len(hits) + 1)]
        else:
            parts = [w * x for x in _normalised([s for _, s in hits], fusion.form)]
        for rank, ((cid, raw), part) in enumerate(zip(hits, parts, strict=True), 1):
            score[cid] = score.get(cid, 0.0) + part
            ranks[side].setdefault(cid, (rank, raw))
    out: dict[int, Fused] = {}
    for cid, s in score.items():
        lr, ls = ranks[0].get(cid, (None, None))
        vr, vs = ranks[1].get(cid, (None, None))
        out[cid] = Fused(s, lr, ls, vr, vs)
    return out
