"""The build's chunk and link stages: changed files chunked, their references resolved to edges."""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from cora_ci.arrays import among
from cora_ci.build.common import Note, Progress, Row
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.tables import Rows
from cora_ci.config import Config
from cora_ci.errors import LEFT_OUT, CoraError
from cora_ci.files.source import Entry, Snapshot
from cora_ci.graph.build import FileLinks, Linker, NameFilter, changed_names, hashes, names_of
from cora_ci.graph.csr import pack_edges
from cora_ci.graph.resolve import Repo

if TYPE_CHECKING:
    from concurrent.futures import Future

_PARALLEL_MIN = 200  # files: below this, starting workers costs more than they save (a hook's update)
_MAX_WORKERS = 4
_JOB: tuple[Config, Any] | None = None  # what forked workers inherit: the config and a token counter


def chunk_all(snap: Snapshot, cfg: Config, progress: Progress, stages: dict[str, float], todo: list[Entry],
              take: Callable[[mf.FileEntry], None]) -> None:  # fmt: skip
    """Chunks and references of the files in `todo`, each handed to `take` as it is done, in
    order, and dropped: a build holds its files' packed rows, not their chunks (~3.4 KB of Python
    objects a chunk). On every core for a large build (timed apart when serial: `read`, `chunk`,
    `refs`; in parallel `chunk` is the wall time of both; never `take`'s). The chunker loads here,
    not with the build: a hook run that chunks nothing does not import it."""
    from cora_ci.chunking.tokens import default_counter

    workers = _workers(len(todo))
    clock = time.perf_counter
    t0 = clock()
    if workers > 1:
        taking = 0.0

        def timed(f: mf.FileEntry) -> None:
            nonlocal taking
            t = clock()
            take(f)
            taking += clock() - t

        _chunk_parallel(snap, cfg, progress, todo, workers, timed)
        stages.update(read=0.0, chunk=clock() - t0 - taking, refs=0.0)
        return
    pairs = snap.read(todo)
    counter = default_counter()
    t_read = t_chunk = t_refs = 0.0
    t = t0
    for n, (entry, data) in enumerate(pairs, start=1):
        t1 = clock()
        f, t_c, t_r = _chunk_one(entry.path, entry.blob, data, cfg, counter)
        t_read, t_chunk, t_refs = t_read + t1 - t, t_chunk + t_c, t_refs + t_r
        take(f)
        progress("chunk", n, len(todo))
        t = clock()
    stages.update(read=t_read, chunk=t_chunk, refs=t_refs)


def _chunk_parallel(snap: Snapshot, cfg: Config, progress: Progress, todo: list[Entry], workers: int,
                    take: Callable[[mf.FileEntry], None]) -> None:  # fmt: skip
    """`todo` chunked by forked workers, in order, with a bounded number of files in flight.

    Every worker is forked before the first file is read: a process forked later would inherit
    the pipe to `git cat-file` and keep git waiting for input forever. A worker that dies fails
    the build (BrokenProcessPool) instead of hanging it, and files are read as they are sent, so
    memory stays bounded as in a serial build."""
    import multiprocessing  # here: a hook's few files are chunked in-process (~10 ms of imports)
    from concurrent.futures import ProcessPoolExecutor

    global _JOB
    _JOB = (cfg, None)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # else a warning in each worker
    window = 16 * workers
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            pool.submit(int).result()  # with fork, the first task starts every worker
            pending: deque[Future[mf.FileEntry]] = deque()
            done = 0
            for e, data in snap.read(todo):
                pending.append(pool.submit(_chunk_job, (e.path, e.blob, data)))
                while len(pending) >= window or (pending and pending[0].done()):
                    take(pending.popleft().result())
                    done += 1
                    progress("chunk", done, len(todo))
            while pending:
                take(pending.popleft().result())
                done += 1
                progress("chunk", done, len(todo))
    finally:
        _JOB = None


def _workers(files: int) -> int:
    """Processes for chunking: the cores (up to 4) for a large build on Linux, where a fork is
    cheap and inherits the parsers; one otherwise, and always when other threads run (a fork copies
    whatever locks they hold)."""
    if files < _PARALLEL_MIN or sys.platform != "linux" or threading.active_count() > 1:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cpus, _MAX_WORKERS))


def _chunk_job(job: tuple[str, str, bytes]) -> mf.FileEntry:
    global _JOB
    assert _JOB is not None
    cfg, counter = _JOB
    if counter is None:  # each worker makes its own, once
        from cora_ci.chunking.tokens import default_counter

        counter = default_counter()
        _JOB = (cfg, counter)
    return _chunk_one(*job, cfg, counter)[0]


def _chunk_one(
    path: str, blob: str, data: bytes, cfg: Config, counter: Any
) -> tuple[mf.FileEntry, float, float]:
    """One file's manifest entry, and the seconds its chunking and its references took."""
    from cora_ci.chunking import chunk_file
    from cora_ci.graph import extract_refs

    t1 = time.perf_counter()
    res = chunk_file(path, data, cfg, counter, keep_tree=True)
    t2 = time.perf_counter()
    text = res.redacted or data  # the tree was parsed from the redacted text
    stopped = any(d.code == "CORA-CHK-015" for d in res.diagnostics)  # not a second parse of minutes
    refs = (
        extract_refs(path, res.lang, text, res.chunks, tree=res.tree) if res.chunks and not stopped else None
    )
    t3 = time.perf_counter()
    entry = mf.FileEntry(
        path=path, blob=blob, lang=res.lang, strategy=res.strategy,
        diagnostics=res.diagnostics, imports=refs.imports if refs else [], chunks=res.chunks,
        refs=refs.refs if refs else {}, size=len(data),
    )  # fmt: skip
    return entry, t2 - t1, t3 - t2


def check_unique_ids(kept: Rows, fresh: Rows, paths: list[str]) -> None:
    """No chunk id twice: among the chunks of the fresh files (`paths`, their rows in `fresh`), and
    between them and the kept files' (vectorised over the ids; the files are looked for only on a
    clash)."""
    if not paths:
        return
    mine = mf.ids_of(b"".join(fresh.top(p, "ids") for p in paths))
    ids = np.sort(mine)
    clash = ids[1:][ids[1:] == ids[:-1]]  # sorted: the smallest repeated id first
    if len(clash):
        cid = int(clash[0])
        a, b = [place for p in paths for place in _places(fresh, p, cid)][:2]
        raise _collision(cid, a, b)
    kept_ids = kept.column("ids")
    if kept_ids and len(ids) and among(mf.ids_of(b"".join(kept_ids.values())), ids).any():  # ids: sorted
        owner = {cid: p for p in paths for cid in mf.ids_of(fresh.top(p, "ids")).tolist()}
        for path in kept:
            both = owner.keys() & mf.ids_of(kept_ids[path]).tolist()
            if both:
                cid = min(both)
                raise _collision(cid, _places(fresh, owner[cid], cid)[0], path)


def _places(rows: Rows, path: str, cid: int) -> list[str]:
    """`path:line` of each chunk `cid` of a fresh file."""
    ids = mf.ids_of(rows.top(path, "ids")).tolist()
    if cid not in ids:
        return []
    lines = mf.unpack_meta(rows[path]["data"], ids)["start_line"]
    return [f"{path}:{line}" for i, line in zip(ids, lines, strict=True) if i == cid]


def _collision(cid: int, a: str, b: str) -> CoraError:
    return CoraError("CORA-INT-001", f"chunk id collision ({cid}): {a} and {b}")


def file_row(f: mf.FileEntry, links: FileLinks) -> Row:
    """The manifest row of a freshly chunked file."""
    used = hashes(n for names in links.refs.values() for n in names)
    return mf.file_row(f, links, hashes(names_of(links.defs)), used)


def file_notes(f: mf.FileEntry) -> list[Note]:
    """A file's diagnostics, its own and its chunks', as (path, line, code, message)."""
    chunks = [d for c in f.chunks for d in c.diagnostics]
    return [Note(f.path, d.line, d.code, d.message) for d in [*f.diagnostics, *chunks]]


def sorted_notes(notes: Iterable[Note]) -> list[Note]:
    """Notes without repeats, what was left out first."""
    return sorted(set(notes), key=lambda n: (n.code not in LEFT_OUT, n.path, n.line or 0, n.code))


_LINKS_CACHED = 4096  # files whose links a linking stage keeps decoded (imported ones are asked again)


def link_files(old_rows: Rows, kept: Rows, rows: Rows, fresh: list[str]) -> dict[str, bytes]:
    """Packed out-edges of every file whose references may resolve differently now: the changed
    files (`fresh`), the files using a name whose definitions changed, and, when files were added
    or removed or declare other C# namespaces, the files whose imports now reach other files.
    `rows` is the new file table. Each file's links are
    decoded from its row as the linker asks, the last `_LINKS_CACHED` kept: a first build held
    every file's, ~1 KB of names a chunk."""
    links_of = functools.lru_cache(maxsize=_LINKS_CACHED)(lambda path: mf.links_of_row(rows[path]))
    linker = Linker(rows.column("lang"), rows.column("namespaces"), links_of, rows.column("defs_h"))
    affected = set(fresh)
    if kept:
        links = {p: links_of(p) for p in fresh}
        gone = {p: mf.links_of_row(old_rows[p]) for p in sorted(old_rows.paths() - kept.paths())}
        users = NameFilter(kept.column("refs_h"))
        affected.update(users.paths_with(changed_names(gone, links)))
        moved = old_rows.paths() != rows.paths() or any(
            old_rows.top(p, c) != rows.top(p, c)
            for p in links
            if p in old_rows
            for c in ("lang", "namespaces")
        )
        if moved:  # reads every kept file's imports, so every shard: files came or went
            before = Repo(old_rows.column("lang"), old_rows.column("namespaces"))
            now = linker.repo
            imports = {p: kept[p]["imports"] for p in kept}
            affected |= {
                p for p, i in imports.items() if before.imported_files(p, i) != now.imported_files(p, i)
            }
    return {p: pack_edges(mf.ids_of(rows.top(p, "ids")).tolist(), linker.edges(p)) for p in sorted(affected)}
