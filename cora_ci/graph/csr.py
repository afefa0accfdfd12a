"""The reference graph as stored: each file's out-edges in its manifest row (`pack_edges`), and
the whole graph as CSR arrays in `graph.msgpack` (`pack_csr`), which an update changes where its
files changed (`csr_update`) instead of assembling it again from every file's edges."""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from cora_ci.arrays import among, sorted_unique

FORMAT = 2  # 2: narrow arrays, weights by table (bundle 6.0); nodes by place in graph.msgpack (7.0)
Edges = list[tuple[int, int, float]]  # (source chunk id, target chunk id, weight), sorted


def pack_edges(ids: list[int], edges: Edges) -> bytes:
    """A file's edges as compressed bytes: source positions in the file (u32), then target ids
    (u64), then weights (f32)."""
    if not edges:
        return b""
    pos = {cid: i for i, cid in enumerate(ids)}
    src = np.asarray([pos[a] for a, _, _ in edges], dtype="<u4")
    dst = np.asarray([b for _, b, _ in edges], dtype="<u8")
    w = np.asarray([x for _, _, x in edges], dtype="<f4")
    return zlib.compress(src.tobytes() + dst.tobytes() + w.tobytes())


_MAX_EDGE_BYTES = 1 << 30


def unpack_edges(ids: npt.NDArray[np.uint64], packed: bytes) -> tuple[Any, Any, Any]:
    """A file's edges (see `pack_edges`); ValueError if they are not what `pack_edges` writes."""
    d = zlib.decompressobj()
    try:
        data = d.decompress(packed, _MAX_EDGE_BYTES) if packed else b""
    except zlib.error as e:
        raise ValueError(f"edges unreadable: {e}") from None
    if (packed and (d.unconsumed_tail or not d.eof)) or len(data) % 16:
        raise ValueError("edges truncated or oversized")
    n = len(data) // 16
    src = np.frombuffer(data, dtype="<u4", count=n)
    dst = np.frombuffer(data, dtype="<u8", count=n, offset=4 * n)
    w = np.frombuffer(data, dtype="<f4", count=n, offset=12 * n)
    if n and (int(src.max()) >= len(ids) or not bool(np.all(np.isfinite(w) & (w >= 0)))):
        raise ValueError("an edge starts at a chunk the file does not have, or has a bad weight")
    return ids[src.astype(np.int64)], dst, w


class Csr(NamedTuple):
    """The graph's arrays as numpy (what ranking computes on); `Graph` holds them as lists."""

    ids: npt.NDArray[np.uint64]  # sorted ascending
    indptr: npt.NDArray[np.int64]
    indices: npt.NDArray[np.int64]
    weights: npt.NDArray[np.float32]


def csr_from_edges(ids: npt.NDArray[np.uint64], src: Any, dst: Any, w: Any) -> Csr:
    """The CSR arrays over `ids` (any order) from edge arrays of chunk ids."""
    return _csr_over(np.sort(np.asarray(ids, dtype=np.uint64)), src, dst, w)


def _csr_over(nodes: npt.NDArray[np.uint64], src: Any, dst: Any, w: Any) -> Csr:
    """`csr_from_edges` over `nodes`, already sorted."""
    src, dst = np.asarray(src, dtype=np.uint64), np.asarray(dst, dtype=np.uint64)
    s, d = np.searchsorted(nodes, src), np.searchsorted(nodes, dst)
    if len(nodes):  # an edge to a chunk that is not there (a damaged bundle) is dropped, not misread
        ok = (nodes[np.minimum(s, len(nodes) - 1)] == src) & (nodes[np.minimum(d, len(nodes) - 1)] == dst)
        s, d, w = s[ok], d[ok], np.asarray(w)[ok]
    order = np.argsort(s.astype(np.int64) * len(nodes) + d, kind="stable")  # lexsort((d, s)), 8x faster
    indptr = np.zeros(len(nodes) + 1, dtype=np.int64)
    np.cumsum(np.bincount(s, minlength=len(nodes)), out=indptr[1:])
    return Csr(nodes, indptr, d[order].astype(np.int64), np.asarray(w, dtype=np.float32)[order])


def csr_update(old: Csr, drop: Any, fresh: Any, src: Any, dst: Any, w: Any) -> Csr:
    """`old` after some files changed: the out-edges of the chunks `drop` (the old chunks of the
    files that changed or went) go, those of its chunks not in `fresh` (the changed files' chunks
    now) go with the edges reaching them, `fresh`'s other chunks come, and the edges (`src`, `dst`,
    `w`) leave `fresh`'s chunks: `csr_from_edges` of the new bundle's chunks and edges, at the
    cost of the change and of a copy of the arrays. Every other row keeps its edges in their
    order, renumbered when chunks came or went (a full `csr_from_edges` sorts every edge: ~0.5 s
    at 30,000 files; searching every old chunk in the new list, ~40 ms). ValueError if an edge
    leaves a chunk that keeps its old edges."""
    ids, n_old = old.ids, len(old.ids)
    fresh = sorted_unique(np.asarray(fresh, dtype=np.uint64))
    dropped = _rows_in(ids, np.asarray(drop, dtype=np.uint64))
    known = among(fresh, ids) if n_old else np.zeros(len(fresh), dtype=bool)
    place = np.searchsorted(ids, fresh)  # each fresh chunk's row, or place among the old ones
    refreshed, added, at = place[known], fresh[~known], place[~known]
    gone = np.zeros(n_old, dtype=bool)
    gone[dropped] = True
    gone[refreshed] = False  # dropped and back: a changed file's chunk that stayed
    replaced = np.zeros(n_old, dtype=bool)
    replaced[dropped] = replaced[refreshed] = True
    stays = ~gone
    nodes = np.insert(ids[stays], np.searchsorted(ids[stays], added), added)
    n = len(nodes)
    # Each old row's row now: its rank among the rows that stay, after the chunks added before it.
    shift = np.zeros(n_old + 1, dtype=np.int64)
    np.add.at(shift, at, 1)
    pos = np.cumsum(stays) - 1 + np.cumsum(shift[:n_old])
    # The old edges that stay: every row's but the replaced ones', in their order.
    deg = np.diff(old.indptr)
    keep = np.repeat(~replaced, deg)
    deg[replaced] = 0
    d_old, w_old = old.indices[keep], old.weights[keep]
    if gone.any():  # edges reaching a chunk that went: few, from the files that named it
        reach = gone[d_old]
        if reach.any():
            np.subtract.at(deg, np.repeat(np.arange(n_old), deg)[reach], 1)
            d_old, w_old = d_old[~reach], w_old[~reach]
    if gone.any() or len(added):  # rows moved
        d_old = pos[d_old]
    counts = np.zeros(n, dtype=np.int64)
    counts[pos[stays]] = deg[stays]
    new = _csr_over(nodes, src, dst, w)
    new_deg = np.diff(new.indptr)
    if (counts[new_deg > 0] > 0).any():
        raise ValueError("an edge leaves a chunk that keeps its old edges")
    before = np.cumsum(counts) - counts  # the old edges in rows before each row
    into = np.repeat(before, new_deg)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts + new_deg, out=indptr[1:])
    d = np.insert(d_old.astype(np.int64), into, new.indices)
    return Csr(nodes, indptr, d, np.insert(w_old.astype(np.float32), into, new.weights))


def _rows_in(ids: npt.NDArray[np.uint64], values: npt.NDArray[np.uint64]) -> npt.NDArray[np.intp]:
    """The rows of the sorted `ids` holding one of `values`."""
    if not len(ids):
        return np.zeros(0, dtype=np.intp)
    out: npt.NDArray[np.intp] = np.searchsorted(ids, values)[among(values, ids)]
    return out


def csr_dict(c: Csr) -> dict[str, Any]:
    """The CSR as a map of little-endian arrays (what `graph.msgpack` holds), each integer array
    in the narrowest width that holds its values (`_narrow`) and each weight as its position in
    the table of the graph's distinct weights (a few dozen: 1 over a name's target count, summed):
    format 2 is 40% of format 1's u64 row offsets, u32 targets and f32 weights (zod: 0.63 ->
    0.28 MB). Chunk ids stay u64 (hashes) here; `graph.msgpack` names them by place (`pack_csr`)."""
    weights = c.weights.astype(np.float32, copy=False)
    levels = sorted_unique(weights)  # and each weight's place among them: np.unique's inverse sorts
    codes = np.searchsorted(levels, weights)  # every edge (argsort), ~3x this at 900k edges
    return {
        "format": FORMAT,
        "ids": c.ids.astype("<u8", copy=False).data,
        "degrees": _narrow(np.diff(c.indptr)),
        "indices": _narrow(c.indices),
        "levels": levels.astype("<f4").data,
        "weights": _narrow(codes.reshape(-1)),
    }


def _narrow(a: npt.NDArray[Any]) -> list[Any]:
    """Non-negative integers as [width in bytes, little-endian bytes of that width]."""
    top = int(a.max()) if len(a) else 0
    width = next(w for w in (1, 2, 4, 8) if top < 1 << (8 * w))
    return [width, a.astype(f"<u{width}").data]


_BYTES = (bytes, memoryview)  # msgpack's, or `csr_dict`'s own views


def _wide(v: Any, what: str) -> npt.NDArray[np.int64]:
    """`_narrow`'s array as int64 (ValueError if it is not one)."""
    if not (isinstance(v, list) and len(v) == 2 and v[0] in (1, 2, 4, 8) and isinstance(v[1], _BYTES)):
        raise ValueError(f"graph {what}: not an array")
    size = memoryview(v[1]).nbytes
    if size % v[0] or (v[0] == 8 and size and np.frombuffer(v[1], "<u8").max() >= 1 << 63):
        raise ValueError(f"graph {what}: bad length or value")
    return np.frombuffer(v[1], dtype=f"<u{v[0]}").astype(np.int64)


def csr_from_dict(d: Mapping[str, Any]) -> Csr:
    """`csr_dict`'s arrays, checked to form a graph (a bundle may come from anywhere): ValueError if not."""
    _check_format(d)
    if not isinstance(d.get("ids"), _BYTES) or memoryview(d["ids"]).nbytes % 8:
        raise ValueError("graph ids: not an array of ids")
    return _from_arrays(d, np.frombuffer(d["ids"], dtype="<u8").astype(np.uint64))


def _check_format(d: Any) -> None:
    """`d` is a map of this graph format (ValueError if not)."""
    if not isinstance(d, Mapping) or d.get("format") != FORMAT:
        raise ValueError(f"unsupported graph format {d.get('format') if isinstance(d, Mapping) else d!r:.40}")


def _from_arrays(d: Mapping[str, Any], ids: npt.NDArray[np.uint64]) -> Csr:
    """`csr_dict`'s arrays over the nodes `ids`, checked to form a graph (ValueError if not)."""
    if not isinstance(d.get("levels"), _BYTES) or memoryview(d["levels"]).nbytes % 4:
        raise ValueError("graph levels: not an array of weights")
    degrees, indices, codes = (_wide(d.get(k), k) for k in ("degrees", "indices", "weights"))
    levels = np.frombuffer(d["levels"], dtype="<f4").astype(np.float32)
    n, e = len(ids), len(indices)
    if (len(degrees) != n or int(degrees.sum()) != e or len(codes) != e
            or (e and (int(indices.max()) >= n or int(codes.max()) >= len(levels)))
            or not bool(np.all(np.isfinite(levels) & (levels >= 0)))
            or (n and bool((ids[1:] <= ids[:-1]).any()))):  # fmt: skip
        raise ValueError("inconsistent graph arrays")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(degrees, out=indptr[1:])
    return Csr(ids, indptr, indices, levels[codes])


def pack_csr(c: Csr, rows: npt.NDArray[np.uint64]) -> bytes:
    """The bundle's `graph.msgpack`: `csr_dict`, the chunk ids given as their places in `rows`
    (the manifest's chunk order, the graph's nodes): 1-4 bytes a chunk instead of 8 (7.0)."""
    import msgpack

    order = np.argsort(rows)  # distinct ids (`check_unique_ids`): any sort gives the one order, and
    # numpy's default one is ~6x the stable one's speed on 64-bit keys (~5 ms at 424k chunks)
    if not np.array_equal(np.asarray(rows, dtype=np.uint64)[order], c.ids):
        raise ValueError("the graph's nodes are not the manifest's chunks")
    d = csr_dict(c)
    del d["ids"]
    return msgpack.packb({**d, "order": _narrow(order)})  # type: ignore[no-any-return]


def unpack_csr(data: bytes, rows: npt.NDArray[np.uint64]) -> Csr:
    """`pack_csr`'s bytes over the chunks `rows`, unpacked within bounds and checked (ValueError if
    not a graph of those chunks)."""
    import msgpack

    d = msgpack.unpackb(data, max_bin_len=len(data), max_str_len=64, max_map_len=8, max_array_len=2)
    _check_format(d)
    order = _wide(d.get("order"), "order")
    if len(order) != len(rows) or (len(order) and int(order.max()) >= len(rows)):
        raise ValueError("the graph's nodes are not the manifest's chunks")
    return _from_arrays(d, np.asarray(rows, dtype=np.uint64)[order])  # ids ascending: `order` a permutation
