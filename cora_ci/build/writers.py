"""The bundle's files as a build writes them: BM25 buckets, manifest shards, graph (the manifest's
header is `header.py`'s)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

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
            (tmp / name).write_bytes(mf.pack_shard(b, count, [rows[p] for p in members[b]]))
        names.append(name)
    return names


def write_graph(path: Path, files: dict[str, list[Any]], old: Bundle | None = None,
                touched: Collection[str] = (), gone: Collection[str] = ()) -> None:  # fmt: skip
    """The whole reference graph as CSR arrays, so a query reads it in one go (~1 ms) instead of
    assembling it from every file's edges (~50 ms at 50k chunks). With `old`, the bundle this one
    updates, only the files whose chunks or edges changed are unpacked and `old`'s graph is
    changed where they are (`csr_update`); the result is checked to hold exactly the table's
    chunks, else assembled whole. `touched` holds every file whose row may differ from `old`'s
    (rechunked or relinked), `gone` the removed ones."""
    from cora_ci.bundle import csr_of_files
    from cora_ci.graph.csr import csr_update, pack_csr, unpack_edges

    ids = mf.ids_of(b"".join(files["ids"]))
    csr = None
    if old is not None and mf.GRAPH in old.manifest["artifacts"]:
        changed, dropped = _changed_edges(old, files, touched, gone)
        fresh = [mf.ids_of(i) for i in changed["ids"]]
        parts = [unpack_edges(f, e) for f, e in zip(fresh, changed["edges"], strict=True)]
        src, dst, w = (np.concatenate([p[k] for p in parts]) if parts else np.zeros(0) for k in range(3))
        with contextlib.suppress(ValueError):  # an edge from a kept chunk: assembled whole
            now = np.concatenate(fresh) if fresh else np.zeros(0, dtype=np.uint64)
            csr = csr_update(old.graph_csr, dropped, now, src, dst, w)
        if csr is not None and not _same_ids(csr.ids, ids):
            csr = None
    path.write_bytes(pack_csr(csr if csr is not None else csr_of_files(files, ids)))


def _same_ids(nodes: Any, ids: Any) -> bool:
    """Whether the sorted `nodes` are the chunk ids `ids` (any order, all distinct): their count,
    sum and xor (no sort of the table's ids)."""
    return len(nodes) == len(ids) and (not len(ids) or (
        int(nodes.sum(dtype=np.uint64)) == int(ids.sum(dtype=np.uint64))
        and int(np.bitwise_xor.reduce(nodes)) == int(np.bitwise_xor.reduce(ids))))  # fmt: skip


def _changed_edges(old: Bundle, files: dict[str, list[Any]], touched: Collection[str],
                   gone: Collection[str]) -> tuple[dict[str, list[Any]], Any]:  # fmt: skip
    """The file table's rows whose chunks or edges differ from `old`'s, and the chunks of changed
    or removed files, whose old edges go. `old`'s other edges and the rows' give exactly
    `csr_of_files(files)`: a chunk's edges all come from its one file, and stored edges only ever
    reach chunks that exist (an update's manifest equals a full build's). Only the files in
    `touched` are compared: the others' rows are `old`'s (a lookup a file, not a pass over all)."""
    was = old.manifest["files"]
    changed: dict[str, list[Any]] = {"ids": [], "edges": []}
    dropped = [was["ids"][j] for p in gone if (j := position(was["path"], p)) is not None]
    for p in sorted(touched):
        i, j = position(files["path"], p), position(was["path"], p)
        now = (files["ids"][i], files["edges"][i]) if i is not None else None
        before = (was["ids"][j], was["edges"][j]) if j is not None else None
        if now == before:
            continue
        if now is not None:
            changed["ids"].append(now[0])
            changed["edges"].append(now[1])
        if before is not None:
            dropped.append(before[0])
    return changed, mf.ids_of(b"".join(dropped))
