"""The build's chunk and link stages: changed files chunked, their references resolved to edges."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import NamedTuple

from cora_ci.build.common import Progress, Row
from cora_ci.bundle import manifest as mf
from cora_ci.chunking import chunk_file
from cora_ci.chunking.tokens import default_counter
from cora_ci.config import Config
from cora_ci.errors import LEFT_OUT, CoraError
from cora_ci.files.source import Entry, Snapshot
from cora_ci.graph.build import FileLinks, Linker, NameFilter, changed_names, hashes, pack_edges
from cora_ci.graph.resolve import Repo


def chunk_all(snap: Snapshot, cfg: Config, progress: Progress, stages: dict[str, float],
               todo: list[Entry]) -> dict[str, mf.FileEntry]:  # fmt: skip
    """Chunks and references of the files in `todo` (timed apart: `read`, `chunk`, `refs`)."""
    from cora_ci.graph import extract_refs

    counter = default_counter()
    fresh: dict[str, mf.FileEntry] = {}
    clock = time.perf_counter
    t_read = t_chunk = t_refs = 0.0
    t = clock()
    for n, (entry, data) in enumerate(snap.read(todo), start=1):
        t1 = clock()
        res = chunk_file(entry.path, data, cfg, counter, keep_tree=True)
        t2 = clock()
        text = res.redacted or data  # the tree was parsed from the redacted text
        refs = extract_refs(entry.path, res.lang, text, res.chunks, tree=res.tree) if res.chunks else None
        t3 = clock()
        t_read, t_chunk, t_refs = t_read + t1 - t, t_chunk + t2 - t1, t_refs + t3 - t2
        fresh[entry.path] = mf.FileEntry(
            path=entry.path, blob=entry.blob, lang=res.lang, strategy=res.strategy,
            diagnostics=res.diagnostics, imports=refs.imports if refs else [], chunks=res.chunks,
            refs=refs.refs if refs else {}, size=len(data),
        )  # fmt: skip
        progress("chunk", n, len(todo))
        t = clock()
    stages.update(read=t_read, chunk=t_chunk, refs=t_refs)
    return fresh


def check_unique_ids(kept: mf.Rows, fresh: dict[str, mf.FileEntry]) -> None:
    owner: dict[int, str] = {}
    for f in fresh.values():
        for c in f.chunks:
            if c.id in owner:
                raise _collision(c.id, owner[c.id], f"{c.path}:{c.start_line}")
            owner[c.id] = f"{c.path}:{c.start_line}"
    for path in kept:
        ids = mf.ids_of(kept.top(path, "ids")).tolist()
        clash = owner.keys() & ids
        if clash:
            cid = min(clash)
            raise _collision(cid, owner[cid], path)


def _collision(cid: int, a: str, b: str) -> CoraError:
    return CoraError("CORA-INT-001", f"chunk id collision ({cid}): {a} and {b}")


def file_row(f: mf.FileEntry, links: FileLinks, keys: bytes) -> Row:
    """The manifest row of a freshly chunked file, its edges still to be resolved."""
    used = hashes(n for names in links.refs.values() for n in names)
    return mf.file_row(f, links, keys, hashes(links.defs), used, b"")


def diagnostic_count(f: mf.FileEntry) -> int:
    return len(f.diagnostics) + sum(len(c.diagnostics) for c in f.chunks)


def notes_of(files: Iterable[mf.FileEntry]) -> list[Note]:
    """Every diagnostic of `files` as (path, line, code, message), what was left out first."""
    out = [Note(f.path, d.line, d.code, d.message) for f in files for d in f.diagnostics]
    out += [Note(f.path, d.line, d.code, d.message) for f in files for c in f.chunks for d in c.diagnostics]
    return sorted(set(out), key=lambda n: (n.code not in LEFT_OUT, n.path, n.line or 0, n.code))


class Note(NamedTuple):
    path: str
    line: int | None
    code: str
    message: str


def link_files(
    old_rows: mf.Rows, kept: mf.Rows, rows: mf.Rows, links: dict[str, FileLinks]
) -> dict[str, bytes]:
    """Packed out-edges of every file whose references may resolve differently now: the changed
    files (those in `links`), the files using a name whose definitions changed, and, when files
    were added or removed or declare other C# namespaces, the files whose imports now reach other
    files. `rows` is the new file table, edges not yet set for changed files."""
    cache: dict[str, FileLinks] = dict(links)

    def links_of(path: str) -> FileLinks:
        if path not in cache:
            cache[path] = mf.links_of_row(kept[path])
        return cache[path]

    linker = Linker(
        {p: rows.top(p, "lang") for p in rows},
        {p: rows.top(p, "namespaces") for p in rows},
        links_of,
        {p: rows.top(p, "defs_h") for p in rows},
    )
    affected = set(links)
    if kept:
        gone = {p: mf.links_of_row(old_rows[p]) for p in old_rows if p not in kept}
        users = NameFilter({p: kept.top(p, "refs_h") for p in kept})
        affected.update(users.paths_with(changed_names(gone, links)))
        moved = set(old_rows) != set(rows) or any(
            old_rows.top(p, c) != rows.top(p, c)
            for p in links
            if p in old_rows
            for c in ("lang", "namespaces")
        )
        if moved:  # reads every kept file's imports, so every shard: files came or went
            before = Repo({p: old_rows.top(p, "lang") for p in old_rows},
                          {p: old_rows.top(p, "namespaces") for p in old_rows})  # fmt: skip
            now = linker.repo
            imports = {p: kept[p]["imports"] for p in kept}
            affected |= {
                p for p, i in imports.items() if before.imported_files(p, i) != now.imported_files(p, i)
            }
    return {p: pack_edges(mf.ids_of(rows.top(p, "ids")).tolist(), linker.edges(p)) for p in sorted(affected)}
