"""The vector part of a bundle: a usearch HNSW index, keys = chunk ids, int8 storage, cosine metric.

Vectors are added by one thread in ascending id order: usearch then writes the same bytes for the
same vectors (the manifest records their checksum). Readers map the file (`view=True`) instead of
loading it, so opening a large bundle costs next to nothing and writes nothing.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from usearch.index import Index

from cora_ci.errors import CoraError

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
    normalised and quantised again, one step of drift per update.

    A removed vector leaves a free slot that a later addition reuses. When more than
    `MAX_FREE_SHARE` of the live count would stay free, the index is written anew from its live
    vectors as stored, exactly as a full build writes them (usearch corrupts its heap loading an
    index with many free slots; bench/RESULTS.md)."""
    index = Index.restore(str(old), view=False)
    if index is None:
        raise ValueError(f"{old} is not a usearch index")
    if remove:
        index.remove(np.asarray(sorted(remove), dtype=np.uint64))
    _add(index, batches)
    index.save(str(path))
    slots, live = slot_counts(path)
    if slots - live > MAX_FREE_SHARE * live:
        keys = np.sort(np.asarray(index.keys, dtype=np.uint64))
        stored = np.asarray(index.get(keys, dtype=DTYPE), dtype=np.int8).reshape(len(keys), -1)
        write_vectors(path, keys, stored)


def slot_counts(path: Path) -> tuple[int, int]:
    """(slots, live vectors) of a usearch file, from its header: slots less live are free."""
    with path.open("rb") as f:
        head = f.read(8)
        slots, dim = np.frombuffer(head, "<u4", 2).tolist() if len(head) == 8 else (0, 0)
        f.seek(8 + slots * dim + _COUNTS)
        live = f.read(8)
    return slots, int(np.frombuffer(live, "<u8")[0]) if len(live) == 8 else 0


# usearch 2.25.3 aborts ("free(): corrupted unsorted chunks") loading an index whose free slots
# reach ~45% of its live vectors (a third of all slots; measured from 2,000 to 30,000 vectors).
# Writers keep them under MAX_FREE_SHARE; readers refuse files past MAX_FREE_READ.
MAX_FREE_SHARE = 0.125
MAX_FREE_READ = 0.3
_HEAD = 64  # usearch's dense index header, after the vectors
_COUNTS = 17  # where in it three u64 follow: vectors present, deleted (free slots), dimensions
_HNSW = 40  # five u64: size, connectivity, base connectivity, max level, entry slot
_MAGIC = b"usearch"
_KINDS = bytes([99, 23, 14, 15])  # metric cos, scalar i8, key u64, slot u32
_BATCH = 8192  # nodes checked at once (bounds the index arrays)
_FREE = np.uint64(2**64 - 1)  # the key of a removed vector's slot


def check_layout(path: Path, dim: int, ids: npt.NDArray[np.uint64]) -> None:
    """The file is the usearch index a build writes for these chunk `ids` at `dim` dimensions:
    header, sizes, every node's key, level and neighbour lists (counts within capacity, neighbours
    among the nodes). usearch is C++ and trusts what it maps: a file whose checksum is right but
    whose content is hostile (a fork's CI) must not reach it (ValueError naming what is wrong).
    An updated index keeps the slots of removed vectors (key `_FREE`), counted as deleted."""
    buf = np.memmap(path, dtype=np.uint8, mode="r") if os.path.getsize(path) else np.zeros(0, np.uint8)
    n = len(ids)
    need(len(buf) >= 8, "shorter than its header")
    slots, cols = (int(x) for x in buf[:8].view("<u4"))
    need(slots >= n and cols == dim, f"{slots} vectors of {cols} dimensions, expected {n} of {dim}")
    at = 8 + slots * dim
    need(len(buf) >= at + _HEAD + _HNSW, "truncated header")
    head = bytes(buf[at : at + _HEAD])
    need(head[:7] == _MAGIC and head[7:9] == b"\x02\x00" and head[13:17] == _KINDS, "not an i8 cosine index")
    present, deleted, dims = np.frombuffer(head, "<u8", 3, _COUNTS).tolist()
    need((present, deleted, dims) == (n, slots - n, dim), "header counts differ from the manifest")
    need(
        deleted <= MAX_FREE_READ * present,
        f"{deleted} free slots for {present} vectors: too many to load safely",
    )
    size, conn, base_conn, top, entry = np.frombuffer(
        bytes(buf[at + _HEAD : at + _HEAD + _HNSW]), "<u8"
    ).tolist()
    need(size == slots and 1 <= conn <= 1024 and conn <= base_conn <= 2048, "bad graph header")
    at += _HEAD + _HNSW
    if slots == 0:
        need(len(buf) == at, "trailing bytes")
        return
    need(top < 64 and entry < slots and len(buf) >= at + 2 * slots, "bad graph header")
    levels = buf[at : at + 2 * slots].copy().view("<i2").astype(np.int64)
    need(
        bool(levels.min() >= 0) and int(levels.max()) == top and int(levels[entry]) == top, "bad node levels"
    )
    sizes = 14 + 4 * base_conn + levels * (4 + 4 * conn)
    starts = at + 2 * slots + np.concatenate([[0], np.cumsum(sizes)[:-1]])
    need(
        len(buf) == int(starts[-1] + sizes[-1]),
        f"{len(buf)} bytes, the layout needs {int(starts[-1] + sizes[-1])}",
    )
    keys = _gather(buf, starts, 8, "<u8")
    live = keys != _FREE
    need(int((~live).sum()) == slots - n, "free slots differ from the deleted count")
    need(np.array_equal(np.sort(keys[live]), np.sort(ids)), "keys differ from the manifest's chunk ids")
    need(np.array_equal(_gather(buf, starts + 8, 2, "<i2"), levels), "node levels differ")
    _check_lists(buf, starts + 10, base_conn, slots)
    upper = np.repeat(starts + 14 + 4 * base_conn, levels)
    step = np.arange(len(upper)) - np.repeat(np.cumsum(levels) - levels, levels)
    _check_lists(buf, upper + step * (4 + 4 * conn), conn, slots)


def zero_vectors(path: Path, dim: int) -> int:
    """How many stored vectors are all zeros (`verify`, after `check_layout`): an embedding is a
    unit vector, so a zero one was never written by a build, and its cosine is undefined."""
    buf = np.memmap(path, dtype=np.uint8, mode="r") if os.path.getsize(path) else np.zeros(0, np.uint8)
    slots = int(buf[:4].view("<u4")[0]) if len(buf) >= 8 else 0
    rows = max(1, (16 << 20) // max(dim, 1))  # 16 MB at a time
    zeros = 0
    for i in range(0, slots, rows):
        block = buf[8 + i * dim : 8 + min(slots, i + rows) * dim].reshape(-1, dim)
        zeros += int((~block.any(axis=1)).sum())
    return zeros


def need(ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(what)


def _gather(buf: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64], width: int, dtype: str) -> Any:
    """The values of `dtype` (`width` bytes, unaligned) at each of `offsets`."""
    return buf[offsets[:, None] + np.arange(width)].copy().view(dtype).ravel()


def _check_lists(buf: npt.NDArray[np.uint8], offsets: Any, capacity: int, n: int) -> None:
    """Neighbour lists at `offsets` (a u32 count, then `capacity` u32 slots): counts within
    capacity, the slots in use below `n`."""
    for i in range(0, len(offsets), _BATCH):
        offs = np.asarray(offsets[i : i + _BATCH], dtype=np.int64)
        counts = _gather(buf, offs, 4, "<u4").astype(np.int64)
        need(bool(np.all(counts <= capacity)), "a neighbour list is over its capacity")
        slots = _gather(buf, (offs[:, None] + 4 + 4 * np.arange(capacity)).ravel(), 4, "<u4")
        used = np.arange(capacity)[None, :] < counts[:, None]
        need(bool(np.all(slots.reshape(len(offs), capacity)[used] < n)), "a neighbour is not a node")


class VectorIndex:
    """A read-only, memory-mapped view of a bundle's vectors. With `dim` and `ids` (the manifest's),
    the file's layout is checked first (`check_layout`); `name` is the file as errors name it."""

    def __init__(self, path: Path, dim: int | None = None, ids: npt.NDArray[np.uint64] | None = None,
                 name: Path | None = None) -> None:  # fmt: skip
        self._name = name or path
        try:
            if dim is not None and ids is not None:
                check_layout(path, dim, ids)
            index = Index.restore(str(path), view=True)
        except (ValueError, RuntimeError, OSError) as e:
            raise CoraError("CORA-BND-004", f"{self._name}: unreadable vector index: {e}") from None
        if index is None:
            raise CoraError("CORA-BND-004", f"{self._name}: not a usearch index")
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
        try:
            m = self._index.search(query, min(k, len(self._index)))
            got = list(zip(m.keys.tolist(), m.distances.tolist(), strict=True))
        except (ValueError, RuntimeError) as e:
            raise CoraError("CORA-BND-004", f"{self._name}: unreadable vector index: {e}") from None
        return [(key, 1.0 - dist) for key, dist in got if math.isfinite(dist)]  # a zero vector: NaN

    def get(self, ids: list[int]) -> npt.NDArray[np.float32]:
        """Stored vectors (decoded from int8) of the given chunk ids."""
        got: npt.NDArray[np.float32] = self._get(ids, "f32", np.float32)
        return got

    def get_stored(self, ids: list[int]) -> npt.NDArray[np.int8]:
        """The vectors of the given chunk ids exactly as stored (int8), to copy into another index."""
        got: npt.NDArray[np.int8] = self._get(ids, DTYPE, np.int8)
        return got

    def _get(self, ids: list[int], dtype: str, out: Any) -> Any:
        """One row per id; an id the index lacks is CORA-BND-004, not a row of None."""
        try:
            got = self._index.get(np.asarray(ids, dtype=np.uint64), dtype=dtype)
            return np.asarray(got, dtype=out).reshape(len(ids), self.ndim)
        except (ValueError, TypeError, RuntimeError) as e:
            raise CoraError("CORA-BND-004", f"{self._name}: vectors of the chunks unreadable: {e}") from None
