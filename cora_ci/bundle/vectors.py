"""The vector part of a bundle: 4-bit codes of the chunk vectors, searched by their sign bits.

Each unit vector `v` (d dimensions) is scaled to `x = v * sqrt(d)`, whose components are close to
a standard normal, and every component is quantised to 16 levels (the Lloyd-Max quantiser of the
normal distribution): 4 bits, the first of them the sign. `vectors.codes` holds them as four bit
planes, rows sorted by chunk id: the sign bits of every vector in one block, then the other three
bits. A search scans the sign bits exactly (hamming distance to the query's signs, numpy's
popcount), keeps `RESCORE` times the asked number of candidates, and ranks them by the cosine of the
query and their decoded codes. Measured on bench/quality.py's eight repositories, this ranks as an
int8 HNSW did (format 3) and as the sign bits' HNSW did (format 4), in 200 bytes a chunk at 384
dimensions (469 and 285 before, bench/RESULTS.md): a scan is ~1 ms at 50k chunks, and no graph
has to be built (seconds at that size), updated, or checked before a C++ library maps it.

Codes are what an update copies between bundles (a reused vector is never quantised twice) and
what a merge concatenates; the same codes give the same file. Readers map the file and check its
layout first.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from cora_ci.arrays import isin
from cora_ci.errors import CoraError

RESCORE = 2  # candidates from the sign bits per result ranked by the codes (x2 and x4 measured alike)
CODES = "vectors.codes"
# Lloyd-Max quantiser of N(0, 1) with 16 levels: the decision thresholds and the levels.
THRESHOLDS = np.array([-2.401, -1.844, -1.437, -1.099, -0.7996, -0.5224, -0.2582, 0.0, 0.2582, 0.5224, 0.7996,
                       1.099, 1.437, 1.844, 2.401], dtype=np.float32)  # fmt: skip
LEVELS = np.array([-2.733, -2.069, -1.618, -1.256, -0.9424, -0.6568, -0.3881, -0.1284, 0.1284, 0.3881, 0.6568,
                   0.9424, 1.256, 1.618, 2.069, 2.733], dtype=np.float32)  # fmt: skip
_MAGIC = b"cora-q5\0"
_HEAD = 24  # magic, n (u64), dim (u32), bit planes (u32)
_PLANES = 4  # the sign bit, then the three others
_BLOCK = 8192  # rows quantised or split into bit planes at a time


Batch = tuple[npt.NDArray[np.uint64], npt.NDArray[Any]]  # ids, vectors (float32) or codes (uint8, as stored)


def quantise(vectors: npt.NDArray[Any]) -> npt.NDArray[np.uint8]:
    """4-bit codes (0-15, one per component) of float vectors; codes (uint8) pass through. Worked
    out `_BLOCK` rows at a time: the float temporaries of a whole build's vectors (int64 indexes
    of every component) were 8 times its codes, the peak of a first build."""
    if vectors.dtype == np.uint8:
        return vectors
    v = np.asarray(vectors, dtype=np.float32)
    out = np.empty(v.shape, dtype=np.uint8)
    scale = np.float32(np.sqrt(v.shape[1]))
    for i in range(0, len(v), _BLOCK):
        block = v[i : i + _BLOCK]
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        x = block / np.where(norms > 0, norms, 1) * scale
        out[i : i + _BLOCK] = np.searchsorted(THRESHOLDS, x, side="right")
    return out


def decode(codes: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """Unit vectors of codes."""
    v = LEVELS[codes]
    return v / np.linalg.norm(v, axis=1, keepdims=True)  # type: ignore[no-any-return]


def _planes(
    codes: npt.NDArray[np.uint8], order: npt.NDArray[np.intp] | None = None
) -> list[npt.NDArray[np.uint8]]:
    """The packed bit planes of codes (of `codes[order]`, given `order`), the sign bit's first: one
    row per vector in each (made `_BLOCK` rows at a time, as `quantise`: no reordered copy)."""
    n, dim = codes.shape
    out = [np.empty((n, _width(dim)), dtype=np.uint8) for _ in range(_PLANES)]
    for i in range(0, n, _BLOCK):
        block = codes[i : i + _BLOCK] if order is None else codes[order[i : i + _BLOCK]]
        for plane, b in zip(out, (3, 2, 1, 0), strict=True):
            plane[i : i + _BLOCK] = np.packbits((block >> b) & 1, axis=1)
    return out


def _join(planes: list[npt.NDArray[np.uint8]], dim: int) -> npt.NDArray[np.uint8]:
    """Codes from their packed bit planes (the sign bit's first)."""
    codes = np.zeros((len(planes[0]), dim), dtype=np.uint8)
    for plane, b in zip(planes, (3, 2, 1, 0), strict=True):
        codes |= np.unpackbits(plane, axis=1, count=dim) << np.uint8(b)
    return codes


def write_vectors(directory: Path, ids: npt.NDArray[np.uint64], vectors: npt.NDArray[Any]) -> None:
    """The vector file in `directory` for `vectors`: float32 (quantised here) or codes copied as
    stored (a merge); the same codes give the same bytes."""
    dim = vectors.shape[1] if vectors.ndim == 2 else 0
    codes = quantise(vectors) if len(ids) else np.zeros((0, dim), dtype=np.uint8)
    order = np.argsort(ids, kind="stable")
    signs, *low = _planes(codes, order)
    words = _row_words(signs, dim)  # one row of words per vector; written word by word below
    columns = (np.ascontiguousarray(words[:, j]) for j in range(words.shape[1]))
    _write(directory / CODES, np.asarray(ids, dtype=np.uint64)[order], columns, low, dim)


def update_vectors(old: Path, directory: Path, remove: list[int], batches: list[Batch]) -> None:
    """The vector file in `directory`: the one in `old` without the `remove` ids and with `batches`
    added. The other codes are kept exactly, as packed bits (a vector copied as stored is never
    quantised twice), so the file is the one a full build writes."""
    keys, words, low, dim = _read(old / CODES)
    gone = isin(keys, np.asarray(remove, dtype=np.uint64))
    kept = np.flatnonzero(~gone)
    new = [(np.asarray(ids, dtype=np.uint64), _planes(quantise(v))) for ids, v in batches if len(ids)]
    all_keys = np.concatenate([keys[kept], *(ids for ids, _ in new)])
    order = np.argsort(all_keys, kind="stable")
    signs = np.concatenate([words[:, kept], *(_to_words(p[0], dim) for _, p in new)], axis=1)[:, order]
    rest = [np.concatenate([p[kept], *(q[i + 1] for _, q in new)])[order] for i, p in enumerate(low)]
    _write(directory / CODES, all_keys[order], iter(signs), rest, dim)


def _write(path: Path, keys: npt.NDArray[np.uint64], signs: Iterable[npt.NDArray[np.uint64]],
           low: list[npt.NDArray[np.uint8]], dim: int) -> None:  # fmt: skip
    """Header, keys, the sign bits word-major (word j of every row, then word j + 1: a scan reads
    each word of all rows at once, ~3x faster than row by row; `signs` gives those word rows in
    turn), then the three low bit planes row-major. Arrays are written from their own memory,
    not copied to bytes first (at 100,000 files each copy was 43 MB of a build's peak)."""
    head = _MAGIC + np.array([len(keys)], "<u8").tobytes() + np.array([dim, _PLANES], "<u4").tobytes()
    with path.open("wb") as f:
        f.write(head)
        f.write(np.ascontiguousarray(keys, dtype="<u8").data)
        for row in signs:
            f.write(np.ascontiguousarray(row, dtype="<u8").data)
        for plane in low:
            f.write(np.ascontiguousarray(plane).data)


def _words(dim: int) -> int:
    """64-bit words of a packed sign row."""
    return -(-dim // 64)


def _width(dim: int) -> int:
    """Bytes of a packed bit row."""
    return -(-dim // 8)


def _row_words(signs: npt.NDArray[np.uint8], dim: int) -> npt.NDArray[np.uint64]:
    """Packed sign rows as `ceil(dim / 64)` words a row (padded with zeros unless they fill them)."""
    width = 8 * _words(dim)
    padded = signs
    if signs.shape[1] != width:
        padded = np.zeros((len(signs), width), dtype=np.uint8)
        padded[:, : signs.shape[1]] = signs
    return np.ascontiguousarray(padded).view("<u8").astype(np.uint64, copy=False)


def _to_words(signs: npt.NDArray[np.uint8], dim: int) -> npt.NDArray[np.uint64]:
    """Packed sign rows as the word-major block: `ceil(dim / 64)` rows of one word per vector."""
    return np.ascontiguousarray(_row_words(signs, dim).T)


def _sign_rows(words: npt.NDArray[np.uint64], rows: npt.NDArray[np.intp], dim: int) -> npt.NDArray[np.uint8]:
    """The packed sign bits of `rows` (row-major, `ceil(dim / 8)` bytes each) from the word-major block."""
    got = np.ascontiguousarray(words[:, rows].T).astype("<u8", copy=False)
    return got.view(np.uint8).reshape(len(rows), -1)[:, : _width(dim)]


def _read(
    path: Path,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64], list[npt.NDArray[np.uint8]], int]:
    """Keys (ascending chunk ids), the sign bits (word-major: `ceil(dim / 64)` rows of one word per
    key), the three low bit planes (packed, one row per key) and the dimension of a codes file,
    mapped; ValueError if its layout is not `_write`'s."""
    size = os.path.getsize(path)
    buf = np.memmap(path, dtype=np.uint8, mode="r") if size else np.zeros(0, np.uint8)
    need(len(buf) >= _HEAD and bytes(buf[:8]) == _MAGIC, "not a codes file of this format")
    (n,) = np.frombuffer(bytes(buf[8:16]), "<u8").tolist()
    dim, planes = np.frombuffer(bytes(buf[16:24]), "<u4").tolist()
    width, words = _width(dim), _words(dim)
    need(planes == _PLANES and 0 < dim <= 65536 and n <= len(buf), "bad codes header")
    want = _HEAD + n * (8 + 8 * words + (_PLANES - 1) * width)
    need(len(buf) == want, f"{len(buf)} bytes, the layout needs {want}")
    keys = buf[_HEAD : _HEAD + 8 * n].view("<u8").astype(np.uint64, copy=False)
    at = _HEAD + 8 * n
    signs = buf[at : at + 8 * words * n].view("<u8").reshape(words, n).astype(np.uint64, copy=False)
    at += 8 * words * n
    low = [buf[at + i * n * width : at + (i + 1) * n * width].reshape(n, width) for i in range(_PLANES - 1)]
    need(bool(np.all(keys[1:] > keys[:-1])), "keys are not ascending")
    return keys, signs, low, dim


def check_layout(directory: Path, dim: int, ids: npt.NDArray[np.uint64]) -> None:
    """The vector file in `directory` is the one a build writes for these chunk `ids` at `dim`
    dimensions: its layout, and exactly their keys (ValueError naming what is wrong)."""
    try:
        keys, _, _, have = _read(directory / CODES)
    except ValueError as e:
        raise ValueError(f"{CODES}: {e}") from None
    same = have == dim and np.array_equal(keys, np.sort(ids))
    need(same, f"{CODES}: keys differ from the manifest's chunk ids")


def need(ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(what)


class VectorIndex:
    """A read-only, memory-mapped view of the vector file in `directory`. With `dim` and `ids` (the
    manifest's), its layout is checked first (`check_layout`); `name` is the directory as errors
    name it."""

    def __init__(self, directory: Path, dim: int | None = None, ids: npt.NDArray[np.uint64] | None = None,
                 name: Path | None = None) -> None:  # fmt: skip
        self._name = name or directory
        try:
            if dim is not None and ids is not None:
                check_layout(directory, dim, ids)
            self._keys, self._signs, self._low, self._dim = _read(directory / CODES)
        except (ValueError, OSError) as e:
            raise CoraError("CORA-BND-004", f"{self._name}: unreadable vector index: {e}") from None

    @property
    def size(self) -> int:
        return len(self._keys)

    @property
    def ndim(self) -> int:
        return self._dim

    def search(self, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """Nearest chunks by cosine with their decoded codes: (chunk id, similarity), best first.
        The `RESCORE * k` rows whose sign bits are nearest the query's (hamming, exact; ties to the
        lower id) are the candidates; ties in the cosine go to the lower id too."""
        n = len(self._keys)
        if k <= 0 or n == 0:
            return []
        q = np.asarray(query, dtype=np.float32).ravel()
        rows = self._nearest_signs(np.packbits(q >= 0), min(RESCORE * k, n))
        keys = self._keys[rows]
        scores = decode(self._codes(rows)) @ (q / max(float(np.linalg.norm(q)), 1e-12))
        order = np.lexsort((keys, -scores))[:k]
        return [(int(keys[i]), float(scores[i])) for i in order]

    def _nearest_signs(self, signs: npt.NDArray[np.uint8], m: int) -> npt.NDArray[np.intp]:
        """The rows of the `m` sign vectors nearest `signs` by hamming distance, ties to the lower
        row: a popcount per word of every row, summed, then the cut found by a histogram."""
        q = np.zeros(8 * len(self._signs), dtype=np.uint8)
        q[: len(signs)] = signs
        words = q.view("<u8").astype(np.uint64)
        dist: npt.NDArray[np.uint32] = np.zeros(len(self._keys), dtype=np.uint32)
        for word, column in zip(words, self._signs, strict=True):
            dist += np.bitwise_count(column ^ word)
        if m >= len(dist):
            return np.arange(len(dist))
        cut = int(np.searchsorted(np.cumsum(np.bincount(dist)), m))  # the m-th distance
        nearer = np.flatnonzero(dist < cut)
        return np.concatenate([nearer, np.flatnonzero(dist == cut)[: m - len(nearer)]])

    def get(self, ids: list[int]) -> npt.NDArray[np.float32]:
        """The vectors of the given chunk ids, decoded from their codes (unit length)."""
        if not ids:
            return np.zeros((0, self._dim), np.float32)
        return decode(self.get_stored(ids))

    def get_stored(self, ids: list[int]) -> npt.NDArray[np.uint8]:
        """The codes of the given chunk ids exactly as stored, to copy into another bundle's file."""
        keys = np.asarray(ids, dtype=np.uint64)
        if not len(keys):
            return np.zeros((0, self._dim), dtype=np.uint8)
        rows = np.searchsorted(self._keys, keys)
        if np.any(rows >= len(self._keys)) or not np.array_equal(
            self._keys[np.minimum(rows, len(self._keys) - 1)], keys
        ):
            raise CoraError("CORA-BND-004", f"{self._name / CODES}: a chunk id has no vector")
        return self._codes(rows)

    def _codes(self, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.uint8]:
        signs = _sign_rows(self._signs, rows, self._dim)
        return _join([signs, *(np.asarray(p[rows]) for p in self._low)], self._dim)
