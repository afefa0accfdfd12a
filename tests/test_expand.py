"""The graph's edges by target (`Incoming`) only save time: expansion gives the same scores."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cora_ci.retrieval.expand import graph_scores
from cora_ci.retrieval.graph_arrays import GraphArrays, Incoming


def _graph(n: int, edges: list[tuple[int, int, float]]) -> GraphArrays:
    edges = sorted(edges)
    src = np.array([s for s, _, _ in edges], dtype=np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return GraphArrays(
        ids=np.arange(100, 100 + 7 * n, 7, dtype=np.uint64),
        indptr=indptr,
        indices=np.array([d for _, d, _ in edges], dtype=np.int64),
        weights=np.array([w for _, _, w in edges], dtype=np.float64),
        sources=src,
    )


@st.composite
def graphs(draw: st.DrawFn) -> tuple[GraphArrays, dict[int, float]]:
    n = draw(st.integers(1, 40))
    node = st.integers(0, n - 1)
    edges = draw(st.lists(st.tuples(node, node, st.floats(0.1, 3.0)), max_size=120))
    g = _graph(n, edges)
    seeds = draw(st.dictionaries(node, st.floats(0.0, 2.0), min_size=1, max_size=6))
    return g, {int(g.ids[i]): s for i, s in seeds.items()}


@given(graphs(), st.integers(1, 4), st.sampled_from([0.0, 0.5, 1.0]))
@settings(max_examples=300, deadline=None)
def test_expansion_is_the_same_with_the_edges_by_target(
    case: tuple[GraphArrays, dict[int, float]], hops: int, reverse: float
) -> None:
    g, seeds = case
    assert graph_scores(g, seeds, reverse, hops, Incoming.of(g)) == graph_scores(g, seeds, reverse, hops)


def test_the_edges_by_target_name_every_referrer() -> None:
    g = _graph(4, [(0, 2, 1.0), (1, 2, 1.0), (3, 2, 1.0), (2, 0, 1.0), (1, 1, 1.0)])
    inc = Incoming.of(g)
    assert inc.indptr.tolist() == [0, 1, 2, 5, 5]
    assert sorted(inc.sources[inc.indptr[2] : inc.indptr[3]].tolist()) == [0, 1, 3]
    assert inc.sources[inc.indptr[1] : inc.indptr[2]].tolist() == [1]
