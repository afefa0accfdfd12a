"""The vector part of a bundle: 4-bit codes of the chunk vectors, searched through a binary HNSW.

Each unit vector `v` (d dimensions) is scaled to `x = v * sqrt(d)`, whose components are close to
a standard normal, and every component is quantised to 16 levels (the Lloyd-Max quantiser of the
normal distribution): 4 bits, the first of them the sign. `vectors.usearch` is a usearch HNSW over
the sign bits alone (hamming metric, keys = chunk ids), which finds `RESCORE` times the asked
number of candidates; `vectors.codes` holds the other three bits of every code (bit planes, rows
sorted by chunk id), and the candidates are ranked by the cosine of the query and their decoded
codes. Measured on bench/quality.py's eight repositories, this ranks as the int8 HNSW it replaced
(format 3) while taking 285 bytes a chunk instead of 469 (bench/RESULTS.md, issue 19).

Codes are what an update copies between bundles (a reused vector is never quantised twice) and
what a merge concatenates. Vectors are added by one thread in ascending id order, so the same
vectors give the same bytes. Readers map both files (`view=True`) and check their layout first.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from usearch.index import Index

from cora_ci.errors import CoraError

DTYPE = "b1"
METRIC = "hamming"
CONNECTIVITY = 8  # ~133 bytes a sign vector with its links; 16 would cost ~196 for no measured gain
EXPANSION_ADD = 128
EXPANSION_SEARCH = 128
RESCORE = 2  # candidates from the sign bits per result ranked by the codes (x2 and x4 measured alike)
VECTORS, CODES = "vectors.usearch", "vectors.codes"
# Lloyd-Max quantiser of N(0, 1) with 16 levels: the decision thresholds and the levels.
THRESHOLDS = np.array([-2.401, -1.844, -1.437, -1.099, -0.7996, -0.5224, -0.2582, 0.0, 0.2582, 0.5224, 0.7996,
                       1.099, 1.437, 1.844, 2.401], dtype=np.float32)  # fmt: skip
LEVELS = np.array([-2.733, -2.069, -1.618, -1.256, -0.9424, -0.6568, -0.3881, -0.1284, 0.1284, 0.3881, 0.6568,
                   0.9424, 1.256, 1.618, 2.069, 2.733], dtype=np.float32)  # fmt: skip
_CODES_MAGIC = b"cora-q4\0"
_CODES_HEAD = 24  # magic, n (u64), dim (u32), bit planes (u32)
_PLANES = 3


Batch = tuple[npt.NDArray[np.uint64], npt.NDArray[Any]]  # ids, vectors (float32) or codes (uint8, as stored)


def quantise(vectors: npt.NDArray[Any]) -> npt.NDArray[np.uint8]:
    """4-bit codes (0-15, one per component) of float vectors; codes (uint8) pass through."""
    if vectors.dtype == np.uint8:
        return vectors
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    x = v / np.where(norms > 0, norms, 1) * np.float32(np.sqrt(v.shape[1]))
    return np.searchsorted(THRESHOLDS, x, side="right").astype(np.uint8)


def decode(codes: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """Unit vectors of codes."""
    v = LEVELS[codes]
    return v / np.linalg.norm(v, axis=1, keepdims=True)  # type: ignore[no-any-return]


def _signs(codes: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    return np.packbits(codes >= 8, axis=1)


def _planes(codes: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    return np.concatenate([np.packbits((codes >> b) & 1, axis=1) for b in (2, 1, 0)], axis=1)


def _join(signs: npt.NDArray[np.uint8], planes: npt.NDArray[np.uint8], dim: int) -> npt.NDArray[np.uint8]:
    """Codes from their sign bits and low bit planes (both packed, one row per vector)."""
    width = planes.shape[1] // _PLANES
    codes: npt.NDArray[np.uint8] = np.unpackbits(signs, axis=1, count=dim) << np.uint8(3)
    for i, b in enumerate((2, 1, 0)):
        codes |= np.unpackbits(planes[:, i * width : (i + 1) * width], axis=1, count=dim) << np.uint8(b)
    return codes


def _sign_rows(index: Index, keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint8]:
    """The packed sign bits stored for `keys`, one row each (usearch gives a tuple for several)."""
    got: Any = index.get(keys)
    return (
        np.stack(list(got) if isinstance(got, tuple) else [got])
        .reshape(len(keys), -1)
        .astype(np.uint8, copy=False)
    )


def _new_index(dim: int) -> Index:
    return Index(ndim=max(dim, 8), metric=METRIC, dtype=DTYPE, connectivity=CONNECTIVITY,
                 expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)  # fmt: skip


def _add(index: Index, ids: npt.NDArray[np.uint64], codes: npt.NDArray[np.uint8]) -> None:
    """Add the sign bits in id order, by one thread (the same order gives the same graph)."""
    if len(ids):
        order = np.argsort(ids, kind="stable")
        index.add(ids[order], _signs(codes[order]), threads=1)


def write_vectors(directory: Path, ids: npt.NDArray[np.uint64], vectors: npt.NDArray[Any]) -> None:
    """New vector files in `directory` for `vectors`: float32 (quantised here) or codes copied as
    stored (a merge), which give the same files for the same codes."""
    dim = vectors.shape[1] if vectors.ndim == 2 else 0
    codes = quantise(vectors) if len(ids) else np.zeros((0, dim), dtype=np.uint8)
    index = _new_index(dim)
    _add(index, ids, codes)
    index.save(str(directory / VECTORS))
    _write_codes(directory / CODES, ids, codes, dim)


def update_vectors(old: Path, directory: Path, remove: list[int], batches: list[Batch]) -> None:
    """Vector files in `directory` from those in `old` without the `remove` ids and with `batches`
    added: the other vectors and their graph links stay as they are, so the HNSW's cost follows
    the change. Codes (a vector copied as stored) are kept exactly: never quantised twice.

    A removed vector leaves a free slot that a later addition reuses. When more than
    `MAX_FREE_SHARE` of the live count would stay free, the HNSW is written anew from the live
    codes, exactly as a full build writes it (usearch corrupts its heap loading an index with many
    free slots; bench/RESULTS.md)."""
    index = Index.restore(str(old / VECTORS), view=False)
    if index is None:
        raise ValueError(f"{old / VECTORS} is not a usearch index")
    keys, planes, dim = _read_codes(old / CODES)
    gone = np.asarray(sorted(remove), dtype=np.uint64)
    if len(gone):
        index.remove(gone)
        keep = ~np.isin(keys, gone)
        keys, planes = keys[keep], planes[keep]
    new = [(ids, quantise(v)) for ids, v in batches if len(ids)]
    for ids, codes in new:
        _add(index, ids, codes)
    index.save(str(directory / VECTORS))
    all_keys = np.concatenate([keys, *(ids for ids, _ in new)])
    all_planes = np.concatenate([planes, *(_planes(c) for _, c in new)])
    order = np.argsort(all_keys, kind="stable")
    _write_planes(directory / CODES, all_keys[order], all_planes[order], dim)
    slots, live = slot_counts(directory / VECTORS)
    if slots - live > MAX_FREE_SHARE * live:
        keys = all_keys[order]
        write_vectors(directory, keys, _join(_sign_rows(index, keys), all_planes[order], dim))


def _write_codes(path: Path, ids: npt.NDArray[np.uint64], codes: npt.NDArray[np.uint8], dim: int) -> None:
    order = np.argsort(ids, kind="stable")
    _write_planes(path, ids[order], _planes(codes[order]) if len(ids) else np.zeros((0, 0), np.uint8), dim)


def _write_planes(path: Path, keys: npt.NDArray[np.uint64], planes: npt.NDArray[np.uint8], dim: int) -> None:
    head = _CODES_MAGIC + np.array([len(keys)], "<u8").tobytes() + np.array([dim, _PLANES], "<u4").tobytes()
    with path.open("wb") as f:
        f.write(head)
        f.write(keys.astype("<u8").tobytes())
        f.write(np.ascontiguousarray(planes).tobytes())


def _read_codes(path: Path) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint8], int]:
    """Keys (ascending chunk ids), packed low bit planes (one row per key) and the dimension of a
    codes file, mapped; ValueError if its layout is not `_write_planes`'."""
    size = os.path.getsize(path)
    buf = np.memmap(path, dtype=np.uint8, mode="r") if size else np.zeros(0, np.uint8)
    need(len(buf) >= _CODES_HEAD and bytes(buf[:8]) == _CODES_MAGIC, "not a codes file")
    (n,) = np.frombuffer(bytes(buf[8:16]), "<u8").tolist()
    dim, planes = np.frombuffer(bytes(buf[16:24]), "<u4").tolist()
    width = _PLANES * -(-dim // 8)
    need(planes == _PLANES and 0 < dim <= 65536 and n <= len(buf), "bad codes header")
    need(len(buf) == _CODES_HEAD + n * (8 + width), f"{len(buf)} bytes, the layout needs more or fewer")
    keys = buf[_CODES_HEAD : _CODES_HEAD + 8 * n].view("<u8").astype(np.uint64, copy=False)
    rows = buf[_CODES_HEAD + 8 * n :].reshape(n, width)
    return keys, rows, dim


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
_KINDS = bytes([98, 1, 14, 15])  # metric hamming, scalar b1, key u64, slot u32
_BATCH = 8192  # nodes checked at once (bounds the index arrays)
_FREE = np.uint64(2**64 - 1)  # the key of a removed vector's slot


def check_layout(directory: Path, dim: int, ids: npt.NDArray[np.uint64]) -> None:
    """The vector files in `directory` are those a build writes for these chunk `ids` at `dim`
    dimensions: the codes file holds exactly their keys, and the usearch index is checked for its
    header, sizes, every node's key, level and neighbour lists (counts within capacity, neighbours
    among the nodes). usearch is C++ and trusts what it maps: a file whose checksum is right but
    whose content is hostile (a fork's CI) must not reach it (ValueError naming what is wrong).
    An updated index keeps the slots of removed vectors (key `_FREE`), counted as deleted."""
    try:
        keys, _, have = _read_codes(directory / CODES)
    except ValueError as e:
        raise ValueError(f"{CODES}: {e}") from None
    need(
        have == dim and np.array_equal(keys, np.sort(ids)),
        f"{CODES}: keys differ from the manifest's chunk ids",
    )
    try:
        _check_index(directory / VECTORS, dim, ids)
    except ValueError as e:
        raise ValueError(f"{VECTORS}: {e}") from None


def _check_index(path: Path, dim: int, ids: npt.NDArray[np.uint64]) -> None:
    """The usearch file is the index a build writes for these chunk `ids` at `dim` dimensions:
    header, sizes, every node's key, level and neighbour lists (counts within capacity, neighbours
    among the nodes). usearch is C++ and trusts what it maps: a file whose checksum is right but
    whose content is hostile (a fork's CI) must not reach it (ValueError naming what is wrong).
    An updated index keeps the slots of removed vectors (key `_FREE`), counted as deleted."""
    buf = np.memmap(path, dtype=np.uint8, mode="r") if os.path.getsize(path) else np.zeros(0, np.uint8)
    n = len(ids)
    need(len(buf) >= 8, "shorter than its header")
    slots, cols = (int(x) for x in buf[:8].view("<u4"))
    width = -(-dim // 8)  # bytes of a sign vector
    need(slots >= n and cols == width, f"{slots} vectors of {cols} bytes, expected {n} of {width}")
    at = 8 + slots * width
    need(len(buf) >= at + _HEAD + _HNSW, "truncated header")
    head = bytes(buf[at : at + _HEAD])
    need(
        head[:7] == _MAGIC and head[7:9] == b"\x02\x00" and head[13:17] == _KINDS,
        "not a binary hamming index",
    )
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
    """A read-only, memory-mapped view of the vector files in `directory`. With `dim` and `ids` (the
    manifest's), their layout is checked first (`check_layout`); `name` is the directory as errors
    name it."""

    def __init__(self, directory: Path, dim: int | None = None, ids: npt.NDArray[np.uint64] | None = None,
                 name: Path | None = None) -> None:  # fmt: skip
        self._name = name or directory
        try:
            if dim is not None and ids is not None:
                check_layout(directory, dim, ids)
            self._keys, self._planes, self._dim = _read_codes(directory / CODES)
            index = Index.restore(str(directory / VECTORS), view=True)
        except (ValueError, RuntimeError, OSError) as e:
            raise CoraError("CORA-BND-004", f"{self._name}: unreadable vector index: {e}") from None
        if index is None or len(index) != len(self._keys):
            raise CoraError("CORA-BND-004", f"{self._name / VECTORS}: not the usearch index of {CODES}")
        setattr(index, "expansion_search", EXPANSION_SEARCH)  # noqa: B010 - usearch types it read-only; it is not
        self._index: Index = index

    @property
    def size(self) -> int:
        return len(self._keys)

    @property
    def ndim(self) -> int:
        return self._dim

    def search(self, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """Nearest chunks by cosine with their decoded codes: (chunk id, similarity), best first.
        The sign bits' HNSW proposes `RESCORE * k` candidates; ties go to the lower id."""
        n = len(self._keys)
        if k <= 0 or n == 0:
            return []
        q = np.asarray(query, dtype=np.float32).ravel()
        try:
            found = self._index.search(np.packbits(q >= 0), min(RESCORE * k, n))
        except (ValueError, RuntimeError) as e:
            raise CoraError("CORA-BND-004", f"{self._name}: unreadable vector index: {e}") from None
        keys = np.asarray(found.keys, dtype=np.uint64)
        scores = self._decoded(keys) @ (q / max(float(np.linalg.norm(q)), 1e-12))
        order = np.lexsort((keys, -scores))[:k]
        return [(int(keys[i]), float(scores[i])) for i in order]

    def get(self, ids: list[int]) -> npt.NDArray[np.float32]:
        """The vectors of the given chunk ids, decoded from their codes (unit length)."""
        return self._decoded(np.asarray(ids, dtype=np.uint64))

    def get_stored(self, ids: list[int]) -> npt.NDArray[np.uint8]:
        """The codes of the given chunk ids exactly as stored, to copy into another bundle's files."""
        keys = np.asarray(ids, dtype=np.uint64)
        if not len(keys):
            return np.zeros((0, self._dim), dtype=np.uint8)
        rows = np.searchsorted(self._keys, keys)
        if np.any(rows >= len(self._keys)) or not np.array_equal(
            self._keys[np.minimum(rows, len(self._keys) - 1)], keys
        ):
            raise CoraError("CORA-BND-004", f"{self._name / CODES}: a chunk id has no vector")
        try:
            signs = _sign_rows(self._index, keys)
        except (ValueError, TypeError, RuntimeError) as e:
            raise CoraError("CORA-BND-004", f"{self._name}: vectors of the chunks unreadable: {e}") from None
        return _join(signs, np.asarray(self._planes[rows]), self._dim)

    def _decoded(self, keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.float32]:
        return decode(self.get_stored(keys.tolist())) if len(keys) else np.zeros((0, self._dim), np.float32)
