"""The vector part of a bundle: a usearch HNSW index, keys = chunk ids, int8 storage, cosine metric.

Vectors are added by one thread in ascending id order: usearch then writes the same bytes for the
same vectors (the manifest records their checksum). Readers map the file (`view=True`) instead of
loading it, so opening a large bundle costs next to nothing and writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from usearch.index import Index

DTYPE = "i8"
METRIC = "cos"
# Fewer links per node than usearch's default 16 keep the file smaller (~470 vs ~530 bytes a
# vector; the bundle size target is 1.5x the source); wider beams when building and searching
# keep recall up.
CONNECTIVITY = 8
EXPANSION_ADD = 128
EXPANSION_SEARCH = 128


Batch = tuple[npt.NDArray[np.uint64], npt.NDArray[Any]]  # ids, vectors (float32, or int8 as stored)


def _add(index: Index, batches: list[Batch]) -> None:
    """Add each batch in id order, by one thread (the same order gives the same graph)."""
    for ids, vectors in batches:
        if len(ids):
            order = np.argsort(ids, kind="stable")
            index.add(ids[order], vectors[order], threads=1)


def write_vectors(path: Path, ids: npt.NDArray[np.uint64], vectors: npt.NDArray[Any]) -> None:
    """A new index of `vectors`: float32 (quantised by usearch) or int8 copied as stored (a merge),
    which give the same file for the same stored vectors."""
    dim = vectors.shape[1] if vectors.ndim == 2 else 0
    index = Index(ndim=max(dim, 1), metric=METRIC, dtype=DTYPE, connectivity=CONNECTIVITY,
                  expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)  # fmt: skip
    _add(index, [(ids, vectors)])
    index.save(str(path))


def update_vectors(old: Path, path: Path, remove: list[int], batches: list[Batch]) -> None:
    """Write to `path` the index at `old` without the `remove` ids and with `batches` added: the
    other vectors and their graph links stay as they are, so the cost follows the change, not the
    index. An int8 batch (vectors copied as stored) is kept exactly: a float copy would be
    normalised and quantised again, one step of drift per update."""
    index = Index.restore(str(old), view=False)
    if index is None:
        raise ValueError(f"{old} is not a usearch index")
    if remove:
        index.remove(np.asarray(sorted(remove), dtype=np.uint64))
    _add(index, batches)
    index.save(str(path))


class VectorIndex:
    """A read-only, memory-mapped view of a bundle's vectors."""

    def __init__(self, path: Path) -> None:
        index = Index.restore(str(path), view=True)
        if index is None:
            raise ValueError(f"{path} is not a usearch index")
        setattr(index, "expansion_search", EXPANSION_SEARCH)  # noqa: B010 - usearch types it read-only; it is not
        self._index: Index = index

    @property
    def size(self) -> int:
        return len(self._index)

    @property
    def ndim(self) -> int:
        n: int = self._index.ndim
        return n

    def search(self, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """Nearest chunks by cosine: (chunk id, similarity), best first."""
        if k <= 0 or len(self._index) == 0:
            return []
        m = self._index.search(query, min(k, len(self._index)))
        return [(int(key), 1.0 - float(dist)) for key, dist in zip(m.keys, m.distances, strict=True)]

    def get(self, ids: list[int]) -> npt.NDArray[np.float32]:
        """Stored vectors (decoded from int8) of the given chunk ids."""
        got = self._index.get(np.asarray(ids, dtype=np.uint64), dtype="f32")
        return np.asarray(got, dtype=np.float32).reshape(len(ids), self.ndim)

    def get_stored(self, ids: list[int]) -> npt.NDArray[np.int8]:
        """The vectors of the given chunk ids exactly as stored (int8), to copy into another index."""
        got = self._index.get(np.asarray(ids, dtype=np.uint64), dtype=DTYPE)
        return np.asarray(got, dtype=np.int8).reshape(len(ids), self.ndim)
