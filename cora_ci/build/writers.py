"""The bundle's files as a build writes them: BM25 buckets, manifest shards, graph (the manifest's
header is `header.py`'s)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from cora_ci.arrays import isin
from cora_ci.bundle import Bundle
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.lexical import LexicalDoc, Segment, row_docs, write_index
from cora_ci.bundle.manifest import bucket_of
from cora_ci.bundle.tables import Rows, position


def bucket_map(paths: Iterable[str], count: int) -> dict[str, int]:
    """Each path's bucket of `count`, worked out once for the BM25 index and the shards (a crc32 a
    path: ~15 ms at 30,000 files)."""
    return {p: bucket_of(p, count) for p in paths}


def write_lexical(directory: Path, old: Bundle | None, files: dict[str, list[Any]], rows: Rows,
                  changed: Collection[int], count: int,
                  buckets: Mapping[str, int]) -> dict[str, Any]:  # fmt: skip
    """The BM25 index: only the `changed` buckets (holding changed or deleted files) are written
    anew, their documents from the rows; the others are hard-linked from `old` (None: a first
    build, or the bucket count changed: every bucket is written). `buckets` is `bucket_map` of
    the files."""
    reuse = None
    touched = set(range(count))
    if old is not None:
        touched = set(changed)
        segments = old.manifest["lexical"]["segments"]
        reuse = (old.root / mf.BM25, [Segment(*s) if s else None for s in segments])
    members: dict[int, list[str]] = {b: [] for b in touched}
    sizes = dict.fromkeys(touched, 0)
    for p, ids in zip(files["path"], files["ids"], strict=True):
        b = buckets[p]
        if b in touched:
            members[b].append(p)
            sizes[b] += len(ids) // 8

    def docs(b: int) -> list[LexicalDoc]:  # made as the bucket is written: one bucket's at a time
        out: list[LexicalDoc] = []
        for p in members[b]:
            out.extend(row_docs(rows[p]))
        return out

    segments = write_index(directory, sizes, docs, count, reuse)
    return {"buckets": count, "segments": [[s.id, s.docs] if s else None for s in segments]}


def write_shards(tmp: Path, old: Bundle | None, rows: Rows, count: int, changed: Collection[int],
                 buckets: Mapping[str, int]) -> list[str | None]:  # fmt: skip
    """The manifest's shards, one per non-empty bucket: those of `changed` buckets are written
    anew (reading the old rows they keep), the others hard-linked from `old` (None: write all),
    which keeps their recorded checksums. `buckets` is `bucket_map` of the rows' paths."""
    members: dict[int, list[str]] = {}
    for p in rows:
        members.setdefault(buckets[p], []).append(p)
    (tmp / mf.SHARDS).mkdir()
    names: list[str | None] = []
    for b in range(count):
        name = mf.shard_name(b) if b in members else None
        if name is not None and old is not None and b not in changed:
            os.link(old.root / name, tmp / name)
        elif name is not None:
            reuse = old.shards.seen if old is not None else None  # frames of the blocks it read
            (tmp / name).write_bytes(mf.pack_shard(b, count, [rows[p] for p in members[b]], reuse))
        names.append(name)
    return names


def write_graph(path: Path, files: dict[str, list[Any]], ids: Any, edges: Mapping[str, bytes],
                old: Bundle | None = None, gone: Collection[str] = ()) -> None:  # fmt: skip
    """The whole reference graph as CSR arrays over the chunks `ids` (the table's, in its order),
    so a query reads it in one go (~1 ms) instead of resolving every file's links. `edges` holds
    the packed out-edges of every file whose edges may have changed (rechunked or relinked; every
    file in a full build). With `old`, the bundle this one updates, `old`'s graph is changed where
    those files' edges differ from its own (`csr_update`), or assembled from its other edges and
    these if that fails; `gone` holds the removed files. The files' edges are not stored apart:
    the graph is their only record (6.0)."""
    from cora_ci.graph.csr import csr_update, pack_csr

    csr = None
    if old is not None:
        old_csr = old.graph_csr
        fresh, dropped, parts = _changed_edges(old, old_csr, files, edges, gone)
        src, dst, w = _joined(parts)
        with contextlib.suppress(ValueError):  # an edge from a kept chunk: assembled below
            csr = csr_update(old_csr, dropped, fresh, src, dst, w)
        if csr is not None and not _same_ids(csr.ids, ids):
            csr = None
        if csr is None:
            csr = _assembled(ids, [_kept_edges(old_csr, dropped), *parts])
    path.write_bytes(pack_csr(csr if csr is not None else _assembled(ids, _file_edges(files, edges)), ids))


def _file_edges(files: dict[str, list[Any]], edges: Mapping[str, bytes]) -> list[tuple[Any, Any, Any]]:
    """The edges of every file in `edges` as (source ids, target ids, weights) arrays."""
    from cora_ci.graph.csr import unpack_edges

    return [
        unpack_edges(mf.ids_of(files["ids"][i]), edges[p]) for i, p in enumerate(files["path"]) if p in edges
    ]


def _joined(parts: list[tuple[Any, Any, Any]]) -> tuple[Any, Any, Any]:
    src, dst, w = (np.concatenate([p[k] for p in parts]) if parts else np.zeros(0) for k in range(3))
    return src, dst, w


def _assembled(ids: Any, parts: list[tuple[Any, Any, Any]]) -> Any:
    from cora_ci.graph.csr import csr_from_edges

    return csr_from_edges(ids, *_joined(parts))


def _kept_edges(old: Any, dropped: Any) -> tuple[Any, Any, Any]:
    """`old` graph's edges (source ids, target ids, weights) but those leaving `dropped` chunks."""
    src = np.repeat(old.ids, np.diff(old.indptr))
    keep = ~isin(src, np.asarray(dropped, dtype=np.uint64))
    return src[keep], old.ids[old.indices[keep]], old.weights[keep]


def _old_edges(old: Any, ids: Any) -> tuple[Any, Any, Any]:
    """The out-edges of the chunks `ids` (all in `old`'s graph) as `unpack_edges` gives a file's."""
    rows = np.searchsorted(old.ids, ids)
    starts, ends = old.indptr[rows], old.indptr[rows + 1]
    at = (
        np.concatenate([np.arange(a, b) for a, b in zip(starts, ends, strict=True)])
        if len(rows)
        else np.zeros(0, int)
    )
    return np.repeat(ids, ends - starts), old.ids[old.indices[at]], old.weights[at]


def _same_edges(a: tuple[Any, Any, Any], b: tuple[Any, Any, Any]) -> bool:
    """Whether two lists of edges (source ids, target ids, weights) hold the same edges."""
    if len(a[0]) != len(b[0]):
        return False
    x, y = np.lexsort((a[1], a[0])), np.lexsort((b[1], b[0]))
    return all(np.array_equal(u[x], v[y]) for u, v in zip(a, b, strict=True))


def _same_ids(nodes: Any, ids: Any) -> bool:
    """Whether the sorted `nodes` are the chunk ids `ids` (any order, all distinct): their count,
    sum and xor (no sort of the table's ids)."""
    return len(nodes) == len(ids) and (not len(ids) or (
        int(nodes.sum(dtype=np.uint64)) == int(ids.sum(dtype=np.uint64))
        and int(np.bitwise_xor.reduce(nodes)) == int(np.bitwise_xor.reduce(ids))))  # fmt: skip


def _changed_edges(old: Bundle, old_csr: Any, files: dict[str, list[Any]], edges: Mapping[str, bytes],
                   gone: Collection[str]) -> tuple[Any, Any, list[tuple[Any, Any, Any]]]:  # fmt: skip
    """The chunks of the files in `edges` whose chunks or edges differ from `old`'s (their ids
    now, and their edges), and the chunks of those files and of the removed ones as `old` has
    them, whose old edges go. `old`'s other edges and these give the graph a full build makes: a
    chunk's edges all come from its one file, and the files whose edges may have changed are all
    in `edges` (a lookup a file, not a pass over all)."""
    from cora_ci.graph.csr import unpack_edges

    was = old.manifest["files"]
    dropped = [was["ids"][j] for p in gone if (j := position(was["path"], p)) is not None]
    fresh, parts = [], []
    for p in sorted(edges):
        i, j = position(files["path"], p), position(was["path"], p)
        if i is None:
            continue
        now_ids = mf.ids_of(files["ids"][i])
        now = unpack_edges(now_ids, edges[p])
        if (
            j is not None
            and was["ids"][j] == files["ids"][i]
            and _same_edges(now, _old_edges(old_csr, now_ids))
        ):
            continue
        fresh.append(now_ids)
        parts.append(now)
        if j is not None:
            dropped.append(was["ids"][j])
    now_ids = np.concatenate(fresh) if fresh else np.zeros(0, dtype=np.uint64)
    return now_ids, mf.ids_of(b"".join(dropped)), parts
