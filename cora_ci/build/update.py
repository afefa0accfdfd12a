"""Writing a bundle for files that changed: chunk them, link them, embed their new texts, and
write the indexes, reusing from the previous bundle whatever they did not touch.

`pipeline` decides whether there is anything to do; everything here (the chunkers and their
parsers, tantivy, numpy) is imported only when there is.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from contextlib import nullcontext
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cora_ci.build.chunks import check_unique_ids, chunk_all, file_notes, file_row, link_files, sorted_notes
from cora_ci.build.common import (
    Note,
    Progress,
    Summary,
    collection_paused,
    linked_artifacts,
    model_name,
    source_label,
)
from cora_ci.build.header import assemble_manifest, header
from cora_ci.build.vectors import Texts, VectorPlan, plan_vectors, text_keys
from cora_ci.build.writers import bucket_map, write_graph, write_lexical, write_shards
from cora_ci.bundle import Bundle
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.manifest import FileEntry, bucket_count, bucket_of
from cora_ci.bundle.store import write_bundle
from cora_ci.bundle.tables import Rows
from cora_ci.files.source import Snapshot
from cora_ci.graph.build import file_links

_ABSENT = object()  # a path the previous bundle does not hold (its blob may be None: outside git)


def write_changes(snap: Snapshot, out: Path, old: Bundle | None, embedder: Any, rebuilt: str,
                  progress: Progress, t0: float, cut: dict[str, Any] | None) -> Summary:  # fmt: skip
    """Update `old` to `snap` (None: build from scratch, `rebuilt` says why) into `out`; an
    update of up to `_PAUSED` changed files with the garbage collector paused."""
    stages: dict[str, float] = {"list": time.perf_counter() - t0}
    if old is not None:
        old.shards.record()  # the blocks it reads, whose frames an unchanged block keeps
    old_rows = Rows(old.shards if old is not None else None)
    blobs = old_rows.column("blob")  # in bulk: a lookup a file is ~70 ms at 30,000 files
    same = [e.path for e in snap.entries if blobs.get(e.path, _ABSENT) == e.blob]
    few = old is not None and len(snap.entries) - len(same) <= _PAUSED
    with collection_paused() if few else nullcontext():
        return _write(snap, out, old, old_rows, same, embedder, rebuilt, progress, t0, cut, stages)


# Changed files an update writes with the collector paused: its garbage cycles wait for the next
# collection, ~9 KB a chunked file (a first build of 3,000 files: peak RSS 157 MB with the
# collector, 183 MB without).
_PAUSED = 1000


def _write(snap: Snapshot, out: Path, old: Bundle | None, old_rows: Rows, same: list[str], embedder: Any,
           rebuilt: str, progress: Progress, t0: float, cut: dict[str, Any] | None,
           stages: dict[str, float]) -> Summary:  # fmt: skip
    cfg = snap.config
    info = asdict(embedder.info) if embedder is not None else None
    old_shards = old.shards if old is not None else None
    kept = Rows(old_shards, same)
    rows = Rows(old_shards, kept.paths())  # a set: iterating `kept` sorts its paths (~8 ms at 30k)
    fresh: list[str] = []
    keys: dict[str, bytes] = {}  # the text keys of the fresh files' chunks, by path (not stored)
    # What the vector stage may embed; with no stored vector to copy, embedded as files come.
    texts = Texts(embedder, eager=old is None or old.model is None) if embedder is not None else None
    notes: list[Note] = []
    taking = 0.0

    def take(f: FileEntry) -> None:
        """A chunked file's row (its links in it) and notes; its chunks are dropped when this returns."""
        nonlocal taking
        t = time.perf_counter()
        if texts is not None:
            keys[f.path] = text_keys(f.chunks, texts)
        rows.put(file_row(f, file_links(f.chunks, FileRefs(f.imports, f.refs))))
        notes.extend(file_notes(f))
        fresh.append(f.path)
        taking += time.perf_counter() - t

    from cora_ci.graph.extract import FileRefs  # with the parsers: only when files were chunked

    chunk_all(snap, cfg, progress, stages, [e for e in snap.entries if e.path not in kept], take)
    check_unique_ids(kept, rows, fresh)
    t = time.perf_counter()
    relinked = link_files(old_rows, kept, rows, fresh)  # every fresh file's edges among them
    eager = texts.seconds if texts is not None else 0.0  # the model's share of `take`
    stages["graph"] = time.perf_counter() - t + taking - eager
    t = time.perf_counter()
    # The plan is popped by the write, its vectors written first and then let go (a byte a
    # component of every new chunk: 0.3 GB at 100,000 files, beside the rest of the write).
    plans: list[VectorPlan] = []
    embedded = 0
    if texts is not None:
        plans.append(plan_vectors(embedder, old, old_rows, kept, rows, fresh, keys, texts, progress))
        embedded, texts = texts.embedded, None
    stages["embed"] = time.perf_counter() - t + eager
    files = rows.top_table()
    ids = mf.ids_of(b"".join(files["ids"]))  # the chunk table's order: the vectors' and the graph's
    deleted = old_rows.paths() - rows.paths()
    count = bucket_count(len(ids))
    same_buckets = old is not None and old.manifest["lexical"]["buckets"] == count

    def fill(tmp: Path) -> dict[str, Any]:
        progress("write", 0, 1)
        reuse = old if same_buckets else None
        buckets = bucket_map(files["path"], count)
        changed = {buckets[p] for p in fresh} | {bucket_of(p, count) for p in deleted}
        if plans:
            _write_vectors(tmp, old, plans.pop(), ids)
        lexical = write_lexical(tmp / mf.BM25, reuse, files, rows, changed, count, buckets)
        shards = write_shards(tmp, reuse, rows, count, changed, buckets)
        write_graph(tmp / mf.GRAPH, files, ids, relinked, old, deleted)
        progress("write", 1, 1)
        return assemble_manifest(header(snap, cfg, info, cut), files, lexical, shards)

    t = time.perf_counter()
    size = write_bundle(out, fill, linked_artifacts(old))
    stages["write"] = time.perf_counter() - t
    indexed = [i for i, st in enumerate(files["strategy"]) if st is not None]
    notes = sorted_notes(notes)
    notes[:0] = [Note("(a file name)", None, "CORA-SEC-004", f"{kind} in a file's name: file left out")
                 for kind in snap.withheld]  # fmt: skip
    return Summary(
        out=out, files=len(indexed), skipped=len(files["path"]) - len(indexed),
        chunks=len(ids), embedded=embedded,
        rechunked=len(fresh), removed=len(deleted), rebuilt=rebuilt,
        source_bytes=sum(files["size"][i] for i in indexed), bundle_bytes=size,
        diagnostics=len(notes), notes=notes,
        languages=dict(sorted(Counter(files["lang"][i] for i in indexed).items())),
        seconds=time.perf_counter() - t0, stages=stages, model=model_name(embedder),
        source=source_label(snap, cut),
    )  # fmt: skip


def _write_vectors(tmp: Path, old: Bundle | None, vec: VectorPlan, rows: Any) -> None:
    """The vector file of the new bundle, a row for each of the chunks `rows` (the new manifest's
    order): the previous one hard-linked when no vector changed and no chunk moved (a commit of
    files that hold no chunk, or whose chunks kept their texts and places); else updated from it,
    or written anew."""
    import numpy as np

    from cora_ci.bundle.vectors import update_vectors, write_vectors

    if old is None or old.model is None:
        write_vectors(tmp, rows, vec.ids, vec.vectors)  # nothing stored to copy
        return
    before = old.chunks.id_array
    if not (len(vec.ids) or len(vec.stored_ids)) and np.array_equal(before, rows):
        os.link(old.root / mf.CODES, tmp / mf.CODES)
        return
    update_vectors(old.root, before, tmp, rows, [(vec.ids, vec.vectors), (vec.stored_ids, vec.stored)])
