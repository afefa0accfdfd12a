"""The stored graph's CSR arrays: an update's `csr_update` against `csr_from_edges` of the whole
new graph, on random graphs and random changes of their files."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cora_ci.graph.csr import Csr, csr_from_edges, csr_update

Edge = tuple[int, int, float]


def _arrays(edges: list[Edge]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (np.asarray([a for a, _, _ in edges], dtype=np.uint64), np.asarray([b for _, b, _ in edges], dtype=np.uint64),
            np.asarray([w for _, _, w in edges], dtype=np.float32))  # fmt: skip


def _same(a: Csr, b: Csr) -> None:
    for x, y in zip(a, b, strict=True):
        assert x.tolist() == y.tolist()


Change = tuple[list[int], list[Edge], list[int], list[int], list[Edge]]  # ids, edges, drop, fresh, new edges


@st.composite
def changes(draw: st.DrawFn) -> Change:
    """Old chunks and edges, then a change: the old chunks of the files that changed or went
    (`drop`), the changed files' chunks now (`fresh`: some of `drop` again, some new), and the new
    edges leaving `fresh`, some reaching chunks that went (dropped by both)."""
    ids = sorted(draw(st.sets(st.integers(0, 2**64 - 1), max_size=25)))
    weight = st.floats(0.25, 4, width=32)
    pairs = (
        st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids), weight), max_size=60)
        if ids
        else st.just([])
    )
    edges = draw(pairs)
    drop = sorted(draw(st.sets(st.sampled_from(ids), max_size=len(ids)))) if ids else []
    stayed = sorted(draw(st.sets(st.sampled_from(drop), max_size=len(drop)))) if drop else []
    new = sorted(draw(st.sets(st.integers(0, 2**64 - 1), max_size=6)) - set(ids))
    fresh = sorted({*stayed, *new})
    targets = ids + new
    new_edges = (draw(st.lists(st.tuples(st.sampled_from(fresh), st.sampled_from(targets), weight), max_size=20))
                 if fresh and targets else [])  # fmt: skip
    return ids, edges, drop, fresh, new_edges


@given(changes())
@settings(max_examples=400, deadline=None)
def test_an_update_of_the_graph_is_the_new_graph_built_whole(case: Change) -> None:
    ids, edges, drop, fresh, new_edges = case
    old = csr_from_edges(np.asarray(ids, dtype=np.uint64), *_arrays(edges))
    nodes = sorted((set(ids) - (set(drop) - set(fresh))) | set(fresh))
    kept = [e for e in edges if e[0] not in set(drop)]
    whole = csr_from_edges(np.asarray(nodes, dtype=np.uint64), *_arrays(kept + new_edges))
    _same(csr_update(old, np.asarray(drop, dtype=np.uint64), np.asarray(fresh, dtype=np.uint64),
                     *_arrays(new_edges)), whole)  # fmt: skip


def test_an_edge_from_a_chunk_that_keeps_its_edges_is_refused() -> None:
    old = csr_from_edges(np.asarray([1, 2, 3], dtype=np.uint64), *_arrays([(1, 2, 1.0)]))
    with pytest.raises(ValueError, match="keeps"):
        csr_update(
            old, np.zeros(0, dtype=np.uint64), np.asarray([3], dtype=np.uint64), *_arrays([(1, 3, 1.0)])
        )
