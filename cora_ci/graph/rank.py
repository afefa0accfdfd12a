"""Personalized PageRank over the reference graph: which chunks the query's top hits lean on."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from cora_ci.graph.build import Graph

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
NEGLIGIBLE = 1e-9  # scores below this are left out of the result
_TOLERANCE = 1e-12  # L1 change at which the iteration has converged


def personalized_pagerank(
    g: Graph, seeds: Mapping[int, float], alpha: float = 0.85, iters: int = 30
) -> dict[int, float]:
    """Scores (summing to ~1) of chunks reachable from the weighted `seeds` (chunk id -> weight).

    Each step follows an out-edge with probability `alpha` (in proportion to edge weight) and
    jumps back to the seed distribution otherwise; a chunk without out-edges hands its mass back
    to the seeds too, so mass never leaks and unrelated parts of the repository score nothing.
    Seeds that are not in the graph or have no positive weight are ignored.
    """
    n = len(g.ids)
    node = {cid: i for i, cid in enumerate(g.ids)}
    teleport = np.zeros(n)
    for cid, weight in seeds.items():
        if cid in node and weight > 0:
            teleport[node[cid]] += weight
    indptr = np.asarray(g.indptr, dtype=np.int64)
    dst = np.asarray(g.indices, dtype=np.int64)
    x = pagerank_arrays(indptr, dst, np.asarray(g.weights, dtype=np.float64), teleport, alpha, iters)
    return {g.ids[i]: float(x[i]) for i in np.flatnonzero(x > NEGLIGIBLE).tolist()}


def pagerank_arrays(indptr: Ints, dst: Ints, w: Floats, teleport: Floats, alpha: float = 0.85,
                    iters: int = 30) -> Floats:  # fmt: skip
    """`personalized_pagerank` on a CSR graph of nodes 0..n-1 given as arrays, `teleport` the seeds'
    weights by node: each node's score (all zero when no seed weighs anything). Query time calls
    it on a neighbourhood it has as arrays already (`retrieval.expand`), without lists between."""
    n = len(teleport)
    total = teleport.sum()
    if n == 0 or total <= 0:
        return np.zeros(n)
    teleport = teleport / total
    out_deg = np.diff(indptr)
    src = np.repeat(np.arange(n), out_deg)
    row_sum = np.bincount(src, weights=w, minlength=n)
    share = w / np.where(row_sum[src] > 0, row_sum[src], 1.0)
    dangling = row_sum <= 0
    x = teleport.copy()
    for _ in range(iters):
        spread = np.bincount(dst, weights=x[src] * share, minlength=n)
        nxt = alpha * (spread + x[dangling].sum() * teleport) + (1 - alpha) * teleport
        done = np.abs(nxt - x).sum() < _TOLERANCE
        x = nxt
        if done:
            break
    return x
