"""The vector part of a bundle: 2-bit codes of the rotated chunk vectors, searched by their sign bits.

Each unit vector `v` (d dimensions) is rotated (`rotate`: random signs and Walsh-Hadamard
transforms, a fixed orthogonal map) and scaled to `x = rotate(v) * sqrt(d)`, whose components are
then all close to a standard normal: the rotation spreads a model's uneven dimensions (the static
table's first has 3x the variance of the others) evenly, so one quantiser fits every component.
Each is quantised to the 4 levels of the normal distribution's Lloyd-Max quantiser, the first bit
the sign, and a byte keeps how well the code points along the vector (`<decoded, x>`, as RaBitQ
does), which divides its estimate of a cosine. `vectors.codes` holds the sign bits of every vector
in one block, then the other bit, then the bytes, a row a chunk in the manifest's chunk order (no
chunk ids: the manifest has them). A search scans the sign bits exactly (hamming distance to the
rotated query's signs, numpy's popcount), keeps `RESCORE` times the asked number of candidates,
and ranks them by the corrected cosine of the query and their decoded codes: 65 bytes a chunk at
256 dimensions, under half of format 5's 4-bit codes and 8-byte ids, and retrieval as good
(bench/RESULTS.md, 2026-11-30: semble and the doc questions with 4-bit codes, 2 bits, the
rotation and the byte). A scan is ~1 ms at 50k chunks, and no graph has to be built, updated, or
checked before a C++ library maps it.

Codes are what an update copies between bundles (a reused vector is never quantised twice) and
what a merge concatenates; the same codes give the same file. Readers map the file and check its
layout first.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from cora_ci.arrays import positions
from cora_ci.errors import CoraError

RESCORE = 2  # candidates from the sign bits per result ranked by the codes (x2 and x4 measured alike)
CODES = "vectors.codes"
# Lloyd-Max quantiser of N(0, 1) with 4 levels: the decision thresholds and the levels.
THRESHOLDS = np.array([-0.9816, 0.0, 0.9816], dtype=np.float32)
LEVELS = np.array([-1.510, -0.4528, 0.4528, 1.510], dtype=np.float32)
_FIT = (0.5, 1.0)  # the range of `<decoded, x>` a correction byte spans (2 bits: ~0.94, never below 0.8)
_MAGIC = b"cora-q6\0"
_HEAD = 24  # magic, n (u64), dim (u32), bit planes (u32)
_PLANES = 2  # the sign bit, then the other
_BLOCK = 8192  # rows quantised or split into bit planes at a time
_SALT = 0x9E3779B97F4A7C15  # the rotation's signs: bits of i * this (Fibonacci hashing)


@dataclass(frozen=True)
class Planes:
    """Codes as the vector file holds them, a row a vector: its packed sign bits, its packed other
    bits and its correction byte side by side (`planes_width(dim)` bytes: 65 at 256 dimensions,
    a quarter of `quantise`'s byte a component). What a first build holds of every vector it made
    until the file is written: two arrays of ~0.36 GB each at 1.4M chunks in `quantise`'s form."""

    rows: npt.NDArray[np.uint8]
    dim: int

    def __len__(self) -> int:
        return len(self.rows)


Batch = tuple[npt.NDArray[np.uint64], Any]  # ids, vectors (float32), codes (uint8, as stored) or Planes


def width(dim: int) -> int:
    """Bytes of a vector's stored code: one a component (its 2-bit level) and the correction byte."""
    return dim + 1


def planes_width(dim: int) -> int:
    """Bytes of a vector's row in `Planes`."""
    return 2 * _width(dim) + 1


def planes(codes: npt.NDArray[np.uint8]) -> Planes:
    """`quantise`'s codes as `Planes`."""
    dim = codes.shape[1] - 1
    return Planes(np.concatenate(_planes(codes), axis=1), dim)


def quantise(vectors: npt.NDArray[Any]) -> npt.NDArray[np.uint8]:
    """Codes of float vectors, `width(d)` bytes a row: each rotated component's level (0-3), then
    the correction byte; codes (uint8) pass through. Worked out `_BLOCK` rows at a time (the float
    temporaries of a whole build's vectors were 8 times its codes, the peak of a first build), and
    each row alone: its code never depends on the rows beside it."""
    if vectors.dtype == np.uint8:
        return vectors
    v = np.asarray(vectors, dtype=np.float32)
    n, dim = v.shape
    out = np.empty((n, width(dim)), dtype=np.uint8)
    for i in range(0, n, _BLOCK):
        x = rotate(_unit(v[i : i + _BLOCK]))
        codes = np.searchsorted(THRESHOLDS, x * np.float32(np.sqrt(dim)), side="right").astype(np.uint8)
        fit = (_unit(LEVELS[codes]) * x).sum(axis=1)
        lo, hi = _FIT
        out[i : i + _BLOCK, :dim] = codes
        out[i : i + _BLOCK, dim] = np.clip(np.rint((fit - lo) / (hi - lo) * 255), 0, 255)
    return out


def decode(codes: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """Unit vectors of codes, in the rotated space."""
    return _unit(LEVELS[codes[:, :-1]])


def _fit(codes: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """Each code's `<decoded, x>`, from its correction byte."""
    lo, hi = _FIT
    return np.float32(lo) + codes[:, -1].astype(np.float32) * np.float32((hi - lo) / 255)


def _unit(v: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    out: npt.NDArray[np.float32] = (v / np.where(norms > 0, norms, 1)).astype(np.float32, copy=False)
    return out


def rotate(x: npt.NDArray[Any], inverse: bool = False) -> npt.NDArray[np.float32]:
    """Rows of `x` through a fixed orthogonal map (its inverse with `inverse`): random signs and a
    Walsh-Hadamard transform over blocks of the largest power of two dividing the dimension, twice
    with the blocks interleaved between when there are several (384 = 3 x 128). Additions in a
    fixed order: exact per row and the same on every machine, unlike a matrix product."""
    x = np.atleast_2d(np.asarray(x, dtype=np.float32))
    n, dim = x.shape
    b = dim & -dim
    rounds = 1 if b == dim else 2
    steps = range(rounds) if not inverse else reversed(range(rounds))
    for r in steps:
        if inverse:
            x = _hadamard(x, b) * _signs(dim, r)
            if r:
                x = x.reshape(n, b, dim // b).transpose(0, 2, 1).reshape(n, dim)
        else:
            if r:
                x = x.reshape(n, dim // b, b).transpose(0, 2, 1).reshape(n, dim)
            x = _hadamard(x * _signs(dim, r), b)
    return x


@cache
def _signs(dim: int, salt: int) -> npt.NDArray[np.float32]:
    i = np.arange(dim, dtype=np.uint64) + np.uint64(salt << 32)
    bits = ((i * np.uint64(_SALT)) >> np.uint64(40)) & np.uint64(1)
    return np.where(bits, np.float32(-1), np.float32(1)).astype(np.float32)


def _hadamard(x: npt.NDArray[np.float32], b: int) -> npt.NDArray[np.float32]:
    """The orthonormal Walsh-Hadamard transform of each block of `b` components of each row."""
    n, dim = x.shape
    y: npt.NDArray[np.float32] = x.reshape(n * dim // b, b).copy()
    h = 1
    while h < b:
        pairs = y.reshape(-1, b // (2 * h), 2, h)  # a view: the butterflies write into `y`
        a, c = pairs[:, :, 0, :].copy(), pairs[:, :, 1, :]
        pairs[:, :, 0, :] += c
        np.subtract(a, c, out=pairs[:, :, 1, :])
        h *= 2
    out: npt.NDArray[np.float32] = y.reshape(n, dim) * np.float32(1 / np.sqrt(b))
    return out


def _planes(codes: npt.NDArray[np.uint8] | Planes, order: npt.NDArray[np.intp] | None = None) -> list[Any]:
    """The packed sign bits, the packed other bits and the correction bytes of codes (of
    `codes[order]`, given `order`): one row per vector in each (made `_BLOCK` rows at a time, as
    `quantise`: no reordered copy of the codes; `Planes` are cut, in order, as they are)."""
    if isinstance(codes, Planes):
        w = _width(codes.dim)
        r = codes.rows if order is None else codes.rows[order]
        return [r[:, :w], r[:, w : 2 * w], r[:, 2 * w :]]
    n, dim = len(codes), codes.shape[1] - 1
    out = [np.empty((n, _width(dim)), dtype=np.uint8) for _ in range(_PLANES)] + [np.empty((n, 1), np.uint8)]
    for i in range(0, n, _BLOCK):
        block = codes[i : i + _BLOCK] if order is None else codes[order[i : i + _BLOCK]]
        out[0][i : i + _BLOCK] = np.packbits(block[:, :dim] >> 1, axis=1)
        out[1][i : i + _BLOCK] = np.packbits(block[:, :dim] & 1, axis=1)
        out[2][i : i + _BLOCK] = block[:, dim:]
    return out


def _join(planes: list[npt.NDArray[np.uint8]], dim: int) -> npt.NDArray[np.uint8]:
    """Codes from `_planes`' arrays."""
    codes = np.empty((len(planes[0]), width(dim)), dtype=np.uint8)
    codes[:, :dim] = np.unpackbits(planes[0], axis=1, count=dim) << np.uint8(1)
    codes[:, :dim] |= np.unpackbits(planes[1], axis=1, count=dim)
    codes[:, dim] = planes[2][:, 0]
    return codes


def write_vectors(directory: Path, rows: npt.NDArray[np.uint64], ids: npt.NDArray[np.uint64],
                  vectors: Any) -> None:  # fmt: skip
    """The vector file in `directory` for `vectors` of the chunks `ids`, float32 (quantised here),
    codes copied as stored (a merge) or `Planes` (a first build's), one row a chunk in the order
    of `rows` (the manifest's chunk ids, each of `ids` once); the same codes give the same bytes."""
    codes: Any
    if isinstance(vectors, Planes):
        dim, codes = vectors.dim, vectors
    else:
        dim = (vectors.shape[1] - (vectors.dtype == np.uint8)) if vectors.ndim == 2 else 0
        codes = quantise(vectors) if len(ids) else np.zeros((0, width(dim)), dtype=np.uint8)
    at = _where(np.asarray(ids, dtype=np.uint64), np.asarray(rows, dtype=np.uint64))
    signs, *low = _planes(codes, at)
    words = _row_words(signs, dim)  # one row of words per vector; written word by word below
    columns = (np.ascontiguousarray(words[:, j]) for j in range(words.shape[1]))
    _write(directory / CODES, len(at), columns, low, dim)


def update_vectors(old: Path, old_rows: npt.NDArray[np.uint64], directory: Path, rows: npt.NDArray[np.uint64],
                   batches: list[Batch]) -> None:  # fmt: skip
    """The vector file in `directory` for the chunks `rows` (the new manifest's order): each one's
    code from `batches` (new or copied vectors) if there, else the one `old` (whose rows are
    `old_rows`) holds, kept exactly as packed bits (a vector copied as stored is never quantised
    twice), so the file is the one a full build writes."""
    words, low, dim = _read(old / CODES, len(old_rows))
    new = [(np.asarray(ids, dtype=np.uint64), _planes(v if isinstance(v, Planes) else quantise(v)))
           for ids, v in batches if len(ids)]  # fmt: skip
    pool = np.concatenate([*(ids for ids, _ in new), np.asarray(old_rows, dtype=np.uint64)])
    at = _where(pool, np.asarray(rows, dtype=np.uint64), exact=False)  # a batch's code before the old one
    merged = [np.concatenate([*(_to_words(p[0], dim) for _, p in new), words], axis=1)[:, at]]
    merged += [np.concatenate([*(q[i + 1] for _, q in new), p])[at] for i, p in enumerate(low)]
    _write(directory / CODES, len(at), iter(merged[0]), merged[1:], dim)


def _where(
    ids: npt.NDArray[np.uint64], rows: npt.NDArray[np.uint64], exact: bool = True
) -> npt.NDArray[np.intp]:
    """The position in `ids` of each of `rows` (the first of repeats; with `exact`, `ids` must
    hold each of `rows` once and nothing else); ValueError if one is missing."""
    if exact and len(ids) != len(rows):
        raise ValueError(f"{len(ids)} vectors for {len(rows)} chunks")
    at = positions(ids, rows)
    if (at < 0).any():
        raise ValueError("a chunk has no vector")
    return at


def _write(path: Path, n: int, signs: Iterable[npt.NDArray[np.uint64]], low: list[npt.NDArray[np.uint8]],
           dim: int) -> None:  # fmt: skip
    """Header, the sign bits word-major (word j of every row, then word j + 1: a scan reads each
    word of all rows at once, ~3x faster than row by row; `signs` gives those word rows in turn),
    then the other bits and the correction bytes row-major. No chunk ids: row i is the manifest's
    chunk i (format 5 kept 8 bytes a row of ids). Arrays are written from their own memory, not
    copied to bytes first (at 100,000 files each copy was 43 MB of a build's peak)."""
    head = _MAGIC + np.array([n], "<u8").tobytes() + np.array([dim, _PLANES], "<u4").tobytes()
    with path.open("wb") as f:
        f.write(head)
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


def _read(path: Path, rows: int) -> tuple[npt.NDArray[np.uint64], list[npt.NDArray[np.uint8]], int]:
    """The sign bits (word-major: `ceil(dim / 64)` rows of one word per chunk), the other bits
    (packed, one row per chunk) with the correction bytes, and the dimension of a codes file of
    `rows` chunks, mapped; ValueError if its layout is not `_write`'s."""
    size = os.path.getsize(path)
    buf = np.memmap(path, dtype=np.uint8, mode="r") if size else np.zeros(0, np.uint8)
    need(len(buf) >= _HEAD and bytes(buf[:8]) == _MAGIC, "not a codes file of this format")
    (n,) = np.frombuffer(bytes(buf[8:16]), "<u8").tolist()
    dim, planes = np.frombuffer(bytes(buf[16:24]), "<u4").tolist()
    width, words = _width(dim), _words(dim)
    need(planes == _PLANES and 0 < dim <= 65536 and n <= len(buf), "bad codes header")
    need(n == rows, f"{n} vectors for the manifest's {rows} chunks")
    want = _HEAD + n * (8 * words + width + 1)
    need(len(buf) == want, f"{len(buf)} bytes, the layout needs {want}")
    at = _HEAD
    signs = buf[at : at + 8 * words * n].view("<u8").reshape(words, n).astype(np.uint64, copy=False)
    at += 8 * words * n
    fit = at + n * width
    low = [buf[at:fit].reshape(n, width), buf[fit : fit + n].reshape(n, 1)]
    return signs, low, dim


def need(ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(what)


class VectorIndex:
    """A read-only, memory-mapped view of the vector file in `directory`, whose rows are the chunks
    `ids` (the manifest's chunk order): its layout is checked first, and its dimension against
    `dim` when given; `name` is the directory as errors name it."""

    def __init__(self, directory: Path, ids: npt.NDArray[np.uint64], dim: int | None = None,
                 name: Path | None = None) -> None:  # fmt: skip
        self._name = name or directory
        self._keys = np.asarray(ids, dtype=np.uint64)
        try:
            self._signs, self._low, self._dim = _read(directory / CODES, len(self._keys))
            need(dim is None or dim == self._dim, f"dimension {self._dim}, the model's is {dim}")
        except (ValueError, OSError) as e:
            raise CoraError("CORA-BND-004", f"{self._name}: unreadable vector index: {CODES}: {e}") from None

    @property
    def size(self) -> int:
        return len(self._keys)

    @property
    def ndim(self) -> int:
        return self._dim

    def search(self, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """Nearest chunks by the cosine their codes estimate (the decoded code's with the rotated
        query, over the code's correction): (chunk id, similarity), best first. The `RESCORE * k`
        rows whose sign bits are nearest the rotated query's (hamming, exact; ties to the earlier
        row, in the manifest's order) are the candidates; ties in the cosine go to the lower id."""
        n = len(self._keys)
        if k <= 0 or n == 0:
            return []
        q = np.asarray(query, dtype=np.float32).ravel()
        q = rotate(q / max(float(np.linalg.norm(q)), 1e-12))[0]
        rows = self._nearest_signs(np.packbits(q >= 0), min(RESCORE * k, n))
        keys = self._keys[rows]
        codes = self._codes(rows)
        scores = (decode(codes) @ q) / _fit(codes)
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
        return rotate(decode(self.get_stored(ids)), inverse=True)

    def get_stored(self, ids: list[int]) -> npt.NDArray[np.uint8]:
        """The codes of the given chunk ids exactly as stored, to copy into another bundle's file."""
        keys = np.asarray(ids, dtype=np.uint64)
        if not len(keys):
            return np.zeros((0, width(self._dim)), dtype=np.uint8)
        try:
            rows = _where(self._keys, keys, exact=False)
        except ValueError:
            raise CoraError("CORA-BND-004", f"{self._name / CODES}: a chunk id has no vector") from None
        return self._codes(rows)

    def _codes(self, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.uint8]:
        signs = _sign_rows(self._signs, rows, self._dim)
        return _join([signs, *(np.asarray(p[rows]) for p in self._low)], self._dim)
