"""The reference graph as a query computes on it: numpy CSR arrays with each edge's source, and
the edges by target (who references a node), made once per open bundle (`Catalog.graph`,
`Catalog.incoming`)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt


class GraphArrays(NamedTuple):
    """The reference graph as numpy CSR, plus each edge's source (to find who references a chunk)."""

    ids: npt.NDArray[np.uint64]  # sorted
    indptr: npt.NDArray[np.int64]
    indices: npt.NDArray[np.int64]
    weights: npt.NDArray[np.float64]
    sources: npt.NDArray[np.int64]  # edge e runs sources[e] -> indices[e]

    def nodes(self, chunk_ids: list[int]) -> npt.NDArray[np.int64]:
        """Node indexes of the chunk ids present in the graph (others dropped)."""
        if not len(self.ids) or not chunk_ids:
            return np.zeros(0, dtype=np.int64)
        q = np.asarray(chunk_ids, dtype=np.uint64)
        pos = np.minimum(np.searchsorted(self.ids, q), len(self.ids) - 1)
        found: npt.NDArray[np.int64] = pos[self.ids[pos] == q].astype(np.int64)
        return found


class Incoming(NamedTuple):
    """The graph's edges by target (its transposed CSR, without weights): who references a node,
    in time that follows the node's references rather than the graph's edges."""

    indptr: npt.NDArray[np.int64]
    sources: npt.NDArray[np.int64]

    @classmethod
    def of(cls, g: GraphArrays) -> Incoming:
        """~6 ms at 200k edges (a sort of the edge targets), what a dozen queries' passes over
        every edge cost (`Catalog.incoming` says when it is made)."""
        indptr = np.zeros(len(g.ids) + 1, dtype=np.int64)
        np.cumsum(np.bincount(g.indices, minlength=len(g.ids)), out=indptr[1:])
        order = np.argsort(g.indices)  # the order within a target is of no use: `expand._grow` takes a set
        return cls(indptr, g.sources[order])
