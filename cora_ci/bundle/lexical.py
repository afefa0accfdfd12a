"""The BM25 part of a bundle: a tantivy index over identifier-aware terms, in buckets of files.

Terms are `terms.py`'s: an identifier whole and as its parts, the same for documents and queries.
Nothing is stored, not even the chunk id (format 4): a hit's segment and document number name
it, since a bucket's documents are its files' chunks in the manifest's order (`doc_ids`); texts
live in the manifest. Term frequencies are kept, positions are not (no phrase queries).

Buckets. Files are spread over `manifest.bucket_count(chunks)` buckets by a hash of their path
(the buckets of the manifest's shards), and each bucket is one tantivy segment, written alone in a
scratch index by one thread (so the same chunks give the same bytes; the segment is renamed after
a hash of its content) and listed in a `meta.json` assembled here. An update rewrites only the
buckets holding changed files and hard-links the others. tantivy sums term statistics over
segments, so scores are exactly those of one big segment; deleting documents instead would leave
their terms counted until a merge.

`lexical_reader.py` reads and searches what this writes.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import tantivy

from cora_ci.bundle import leftovers
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.segments import uuid
from cora_ci.bundle.terms import field_text
from cora_ci.errors import CoraError

FIELDS = {"name": 3.0, "path": 1.5, "body": 1.0}  # field -> query boost
TOKENIZER = "cora_words"
_HEAP = 64 * 1024 * 1024  # one writer thread; a bucket of ordinary files fits one segment
_HEAPS = (_HEAP, 512 * 1024 * 1024, 4000 * 1024 * 1024)  # then larger, for a bucket of huge files
_MANAGED = ".managed.json"
# tantivy writes a lock file where it opens an index, so a reader opens a shadow directory of
# links to the bundle's files instead, removed as soon as the searcher holds the files: in memory
# where there is such a place (hundreds of links cost ~60 ms on a disk, ~2 ms in tmpfs).
SHADOW_DIR = leftovers.SHADOW_DIR
_M_ARENA_MAX = -8  # glibc's mallopt parameter
_IN_MEMORY_TEXT = 8 << 20  # a bucket's text up to which its scratch index is in tmpfs (its files are smaller)


class LexicalDoc(NamedTuple):
    id: int
    name: str  # symbol names and anchor
    path: str
    body: str  # header and code


def _schema() -> Any:
    sb = tantivy.SchemaBuilder()
    for name in FIELDS:
        sb.add_text_field(name, stored=False, tokenizer_name=TOKENIZER, index_option="freq")
    return sb.build()


def analyzer() -> Any:
    """Fields arrive as their terms (`field_text`): split on spaces, taken as they are."""
    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()


class Segment(NamedTuple):
    """One bucket's segment: its content-derived id (32 hex digits) and its number of documents."""

    id: str
    docs: int


def write_index(
    directory: Path,
    buckets: Mapping[int, int],
    docs: Callable[[int], Sequence[LexicalDoc]],
    count: int,
    reuse: tuple[Path, Sequence[Segment | None]] | None = None,
) -> list[Segment | None]:
    """Write the index of `count` buckets into `directory` (created) and return each bucket's
    segment (None: empty bucket). The buckets in `buckets` (each with its number of documents) are
    written from `docs(bucket)`, made as each is written, so a first build holds the documents of
    one bucket a worker, not of the repository; the others are hard-linked from `reuse`: the
    previous index directory and its segments."""
    directory.mkdir(parents=True)
    previous: dict[str, list[Path]] = {}  # segment id -> its files in `reuse`, listed once
    if reuse is not None:
        for p in sorted(reuse[0].iterdir()):
            previous.setdefault(p.name.split(".", 1)[0], []).append(p)
    segments: list[Segment | None] = []
    todo = [b for b in range(count) if buckets.get(b)]
    written = dict(zip(todo, _map(lambda b: _write_segment(directory, docs(b)), todo), strict=True))
    for b in range(count):
        if b in buckets:
            seg = written.get(b)
        else:
            if reuse is None:
                raise ValueError(f"bucket {b}: no documents and no previous index")
            seg = reuse[1][b]
            if seg is not None:
                for p in previous.get(seg.id, []):
                    os.link(p, directory / p.name)
        segments.append(seg)
    meta = meta_template(directory)
    meta["segments"] = [
        {"deletes": None, "max_doc": s.docs, "segment_id": uuid(s.id)} for s in segments if s is not None
    ]
    meta["opstamp"] = sum(s.docs for s in segments if s is not None)
    (directory / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    managed = sorted(p.name for p in directory.iterdir() if p.name != _MANAGED)
    (directory / _MANAGED).write_text(json.dumps(managed) + "\n")
    return segments


# tantivy's two spellings of an OS error: "... (os error 28)" and "IoError { ... Os { code: 28, ...".
_OS_ERROR = re.compile(r"\(os error (\d+)\)|\bOs \{ code: (\d+)")


@contextlib.contextmanager
def _io_errors() -> Iterator[None]:
    """tantivy reports a failed write (a full disk, a read-only file system) as ValueError: as
    OSError it becomes the writer's clean `CORA-BND-006`, not an internal error."""
    try:
        yield
    except ValueError as e:
        found = _OS_ERROR.search(str(e))
        if found is None and "IO error" not in str(e) and "IoError" not in str(e):
            raise
        errno = int(found.group(1) or found.group(2)) if found else 5
        raise OSError(errno, os.strerror(errno)) from None


def row_docs(row: dict[str, Any]) -> list[LexicalDoc]:
    """The BM25 documents of a file's manifest row: a build makes them from the rows it packed (it
    keeps no file's chunks), `verify` from the rows it reads."""
    try:
        c = mf.chunk_columns(row["data"], row["texts"])
    except ValueError as e:  # a row read from a bundle whose checksums hold but whose content does not
        raise CoraError("CORA-BND-004", f"the shard row of {row['path']!r}: chunks unreadable: {e}") from None
    cols = zip(
        mf.ids_of(row["ids"]).tolist(), c["symbols"], c["anchors"], c["header"], c["text"], strict=True
    )
    return [_doc(cid, row["path"], *vals) for cid, *vals in cols]


# An overload's anchor ends in its parameters (`Field(default: Any = ..., *, alias: ...)`, comments
# and all): no name. In the name field they made an overload's names hundreds of words long, and
# BM25's length norm sank the very definition a bare name asks for below every shorter mention
# (pydantic's `Field` was not in its own top 10). A section title's parentheses (`v5.0.12
# (2024-02-16)`, `(untitled)`) follow a space or start it: kept. A later block of a name (`Foo#2`,
# a Rust `impl`) keeps its suffix, and so stays behind the declaration by name.
_NOT_A_NAME = re.compile(r"(?<=[\w>\]])\(.*$", re.DOTALL)


def _doc(cid: int, path: str, symbols: list[str], anchors: list[str], header: str, text: str) -> LexicalDoc:
    names = " ".join([*symbols, *(_NOT_A_NAME.sub("", a.split("::", 1)[-1]) for a in anchors)])
    return LexicalDoc(cid, names, path, f"{header}\n{text}")


def rebuilt_problems(
    manifest: dict[str, Any], rows: Callable[[int], dict[str, Any]], directory: Path, scratch: Path
) -> list[str]:
    """Each BM25 segment written again from the manifest's own chunks: segments are deterministic
    and named after their content, so the files in `directory` must hash to their name and the
    name must be what the chunks give; altered postings (with checksums made to match) fail one or
    the other. `rows(fi)` is the file row at index `fi`."""
    files, lex = manifest["files"], manifest["lexical"]
    count = lex["buckets"]
    members: dict[int, list[int]] = {}
    for fi, path in enumerate(files["path"]):
        members.setdefault(mf.bucket_of(path, count), []).append(fi)
    problems = []
    scratch.mkdir(parents=True, exist_ok=True)
    for b, want in enumerate(lex["segments"]):
        docs = [d for fi in members.get(b, []) for d in row_docs(rows(fi))]  # one bucket's at a time
        got = _write_segment(scratch, docs) if docs else None
        if (got is None) != (want is None) or (got is not None and [got.id, got.docs] != list(want)):
            problems.append(f"{mf.BM25}: segment of bucket {b} is not what the manifest's chunks index")
        elif want is not None and _content_id(directory, want[0]) != want[0]:
            problems.append(f"{mf.BM25}: segment {want[0]}'s files are not the content it is named for")
    return problems


def _content_id(directory: Path, segment: str) -> str:
    """The id a segment's files give (as `_write_scratch_segment` names them)."""
    h = hashlib.sha256()
    for p in sorted(p for p in directory.iterdir() if p.name.startswith(segment + ".")):
        h.update(p.suffix.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:32]


def _map(fn: Callable[[int], Segment], items: list[int]) -> list[Segment]:
    """`fn` over `items`, in order; on every core (up to 4) when there are several: tantivy
    indexes and commits without the GIL, and each segment's bytes depend only on its docs."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    workers = min(cpus, 4, len(items))
    if workers < 2:
        return [fn(i) for i in items]
    _share_malloc_arenas(workers)
    with ThreadPoolExecutor(workers, thread_name_prefix="cora-bm25") as pool:
        return list(pool.map(fn, items))


def _share_malloc_arenas(threads: int) -> None:
    """glibc gives each thread that allocates a malloc arena of its own (up to 8 a core) and keeps
    what they held: the writer threads (ours and tantivy's) left a 10,000-file build's peak ~110 MB
    higher than with two arenas, at the same speed (bench/RESULTS.md). Not glibc: nothing."""
    if sys.platform != "linux":
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, max(2, threads))


def _scratch(directory: Path, in_memory: bool = False) -> tuple[Path, Any]:
    """An empty index beside `directory` (same file system, so its files can be moved in), or in
    tmpfs (`in_memory`): tantivy syncs every file it commits, ~10 ms a segment on a disk."""
    where = SHADOW_DIR if in_memory and SHADOW_DIR is not None else directory.parent
    path = Path(tempfile.mkdtemp(prefix=f"{leftovers.SCRATCH}{os.getpid()}-", dir=where))
    with _io_errors():
        index = tantivy.Index(_schema(), path=str(path))
    index.register_tokenizer(TOKENIZER, analyzer())
    return path, index


_TEMPLATE: list[dict[str, Any]] = []


def meta_template(directory: Path) -> dict[str, Any]:
    """meta.json of an empty index with our schema: settings and schema as tantivy writes them
    (made once per process)."""
    if not _TEMPLATE:
        path, index = _scratch(directory, in_memory=True)
        try:
            del index
            _TEMPLATE.append(json.loads((path / "meta.json").read_text()))
        finally:
            shutil.rmtree(path, ignore_errors=True)
    return copy.deepcopy(_TEMPLATE[0])


def _write_segment(directory: Path, docs: Sequence[LexicalDoc]) -> Segment:
    """Index `docs` as one segment of a scratch index by one thread, then move its files into
    `directory` under a name derived from their content: the same docs give the same bytes.
    The scratch index is in tmpfs when the bucket is small enough, on the disk when it is not or
    tmpfs is full (a container's is often 64 MB)."""
    if SHADOW_DIR is not None and sum(len(d.body) for d in docs) <= _IN_MEMORY_TEXT:
        with contextlib.suppress(OSError):
            return _segment(directory, docs, in_memory=True)
    return _segment(directory, docs, in_memory=False)


def _segment(directory: Path, docs: Sequence[LexicalDoc], in_memory: bool) -> Segment:
    """A writer whose memory fills flushes a second segment: then again, with more memory."""
    with _io_errors():
        for heap in _HEAPS:
            seg = _write_scratch_segment(directory, docs, heap, in_memory)
            if seg is not None:
                return seg
    raise CoraError("CORA-BND-006", f"{directory}: one bucket's text does not fit one BM25 segment",
                    "lower max_file_bytes, or exclude the largest files")  # fmt: skip


def _write_scratch_segment(directory: Path, docs: Sequence[LexicalDoc], heap: int,
                           in_memory: bool) -> Segment | None:  # fmt: skip
    path, index = _scratch(directory, in_memory)
    try:
        writer = index.writer(heap_size=heap, num_threads=1)
        for d in docs:
            doc = tantivy.Document()
            doc.add_text("name", field_text(d.name))
            doc.add_text("path", field_text(d.path))
            doc.add_text("body", field_text(d.body))
            writer.add_document(doc)
        writer.commit()
        writer.wait_merging_threads()
        del writer, index
        written = json.loads((path / "meta.json").read_text())["segments"]
        if len(written) != 1:
            return None
        (seg,) = written
        old = seg["segment_id"].replace("-", "")
        files = sorted(p for p in path.iterdir() if p.name.startswith(old + "."))
        h = hashlib.sha256()
        for p in files:
            h.update(p.suffix.encode() + b"\0" + p.read_bytes())
        new = h.hexdigest()[:32]
        for p in files:
            shutil.move(p, directory / (new + p.suffix))  # a copy, from tmpfs
        return Segment(new, int(seg["max_doc"]))
    finally:
        shutil.rmtree(path, ignore_errors=True)
