"""Reference expansion: personalized PageRank seeded by the top hits (Cora spec sections 3 and 7.5).

Run on the neighbourhood of the seeds only (two hops, capped), so its cost does not grow with the
repository: on a 50k-chunk graph the whole-graph iteration alone would take longer than a query's
budget. Edges run both ways: a seed's callees (what it depends on) at full weight, its callers (what
depends on it) at `reverse` of it. Graph scores are PageRank mass, kept for the chunks
among the non-seeds; the seeds themselves are already the best hits and get none.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cora_ci.graph import Graph, personalized_pagerank
from cora_ci.retrieval.catalog import GraphArrays

MAX_NODES = 3000  # neighbourhood cap: hubs can reach much of a repository in two hops
ALPHA = 0.85


def _neighbours(g: GraphArrays, nodes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    if not len(nodes):
        return nodes
    outs = [g.indices[g.indptr[i] : g.indptr[i + 1]] for i in nodes.tolist()]
    ins = [g.t_indices[g.t_indptr[i] : g.t_indptr[i + 1]] for i in nodes.tolist()]
    return np.unique(np.concatenate([nodes, *outs, *ins]))


def graph_scores(g: GraphArrays, seeds: dict[int, float], reverse: float, hops: int = 2) -> dict[int, float]:
    """Chunk id -> PageRank mass of the non-seed chunks in the neighbourhood of `seeds`."""
    seed_nodes = g.nodes(list(seeds))
    if not len(seed_nodes):
        return {}
    nodes = seed_nodes
    for _ in range(hops):
        grown = _neighbours(g, nodes)
        if len(grown) > MAX_NODES:
            break
        nodes = grown
    local = {int(n): i for i, n in enumerate(nodes.tolist())}
    rows: list[list[tuple[int, float]]] = [[] for _ in nodes]
    for i, n in enumerate(nodes.tolist()):
        a, b = int(g.indptr[n]), int(g.indptr[n + 1])
        for j, w in zip(g.indices[a:b].tolist(), g.weights[a:b].tolist(), strict=True):
            k = local.get(j)
            if k is not None:
                rows[i].append((k, w))
                if reverse > 0:
                    rows[k].append((i, w * reverse))
    indptr, indices, weights = [0], [], []
    for r in rows:
        merged: dict[int, float] = {}
        for k, w in r:
            merged[k] = merged.get(k, 0.0) + w
        for k in sorted(merged):
            indices.append(k)
            weights.append(merged[k])
        indptr.append(len(indices))
    ids = [int(g.ids[n]) for n in nodes.tolist()]
    sub = Graph(ids=list(range(len(ids))), indptr=indptr, indices=indices, weights=weights)
    local_seeds = {local[int(n)]: seeds[ids[local[int(n)]]] for n in seed_nodes.tolist()}
    ranks = personalized_pagerank(sub, local_seeds, alpha=ALPHA)
    return {ids[i]: mass for i, mass in ranks.items() if i not in local_seeds}
