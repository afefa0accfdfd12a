"""Serving an indexed chunk from the working tree: as indexed, moved to its anchor, or missing.

A chunk of a file whose git blob id is unchanged is served as indexed. In a changed file each
chunk is re-bound: a symbol by its anchor (`locate`); a Markdown section, the file's header
chunk or small siblings merged into one chunk by re-chunking that one file (an edit above can
reshape a section, and which siblings merge depends on their sizes); anonymous code by finding
its lines elsewhere in the file.
Found with other lines or text, it is served as the working tree has it, `moved`; found as it
was, it is not stale; not found, it is `missing` and keeps its indexed text and lines, marked
so, never the lines now there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Literal, TypeVar

from cora_ci.chunking.model import Chunk, part_of
from cora_ci.config import Config
from cora_ci.files.langs import chunked_from_view
from cora_ci.files.names import fs_name
from cora_ci.files.text import blob_id, decode, is_binary
from cora_ci.rebind.view import View, from_chunk, from_rows

Stale = Literal["moved", "missing"] | None
T = TypeVar("T")
_ANONYMOUS = ("module", "lines")


@dataclass
class Bound:
    view: View
    stale: Stale


@dataclass
class Current:
    """One file of the working tree as the chunker would read it."""

    data: bytes
    lines: list[str]

    @cached_property
    def blob(self) -> str:
        return blob_id(self.data)

    @property
    def src(self) -> bytes:
        return "\n".join(self.lines).encode("utf-8")


class WorkTree:
    """The working tree results are re-bound to; each file is read and decoded once, and one
    larger than `max_bytes` not at all (a fresh index would skip it too: its chunks are missing).
    `known` keeps files read before (a server's earlier calls): one whose bytes are still the same
    is not decoded again."""

    def __init__(
        self, root: Path, max_bytes: int = Config.max_file_bytes, known: Known | None = None
    ) -> None:
        self.root = root.resolve()
        self.max_bytes = max_bytes
        self._files: dict[str, Current | None] = {}
        self._known = known
        self._chunked: dict[str, list[Chunk]] = {}
        self._binds: dict[str, dict[int, Bound]] = {}

    def binds(self, path: str, cur: Current) -> dict[int, Bound]:
        """Where the chunks of the changed file `cur` at `path` were re-bound, by chunk id: kept
        for the tree, and for a server's session while the file's bytes stay the same (`Known`):
        an agent's edited file was re-located on every call, ~100 ms a search of starlette's
        `routing.py` where an unchanged one took 5."""
        if path not in self._binds:
            self._binds[path] = self._known.binds(path, cur) if self._known is not None else {}
        return self._binds[path]

    def chunks(self, path: str, cur: Current, config: Config) -> list[Chunk]:
        """The chunks a fresh index gives the file `cur` at `path` (~40 ms for 100 KB of Python):
        chunked once a tree, however many of its chunks ask, and once a server's session while its
        bytes stay the same (`Known`)."""
        if path not in self._chunked:
            chunks = self._known.chunks(path, cur) if self._known is not None else None
            if chunks is None:
                from cora_ci.chunking import chunk_file

                chunks = chunk_file(path, cur.data, config).chunks
                if self._known is not None:
                    self._known.keep_chunks(path, cur, chunks)
            self._chunked[path] = chunks
        return self._chunked[path]

    def file(self, path: str) -> Current | None:
        """The file at the repository-relative `path`, or None if it is gone, binary or outside."""
        if path not in self._files:
            self._files[path] = self._read(path)
        return self._files[path]

    def _read(self, path: str) -> Current | None:
        p = (self.root / fs_name(path)).resolve()
        if not p.is_relative_to(self.root) or not p.is_file():
            return None
        try:
            with p.open("rb") as f:
                data = f.read(self.max_bytes + 1)  # bounded even if the file grows meanwhile
        except OSError:
            return None
        if len(data) > self.max_bytes:
            return None
        if self._known is not None and (seen := self._known.get(path)) is not None and seen.data == data:
            return seen
        if is_binary(data):
            return None
        cur = Current(data, decode(data).lines)
        if self._known is not None:
            self._known.put(path, cur)
        return cur


class Known:
    """The last files a working tree read, by path: a long-running reader's earlier reads, at most
    `most` files and `most_bytes` of their bytes (their decoded lines take ~3x that), so a tree of
    large files cannot grow a server without bound; the chunks of the last `most_chunked` files
    chunked again (`WorkTree.chunks`), for as long as they are those files' chunks; and where
    the chunks of the last `4 * most_chunked` changed files were re-bound (`WorkTree.binds`)."""

    def __init__(self, most: int = 256, most_bytes: int = 16 << 20, most_chunked: int = 16) -> None:
        self._most, self._most_bytes = most, most_bytes
        self._most_binds = 4 * most_chunked
        self._files: dict[str, Current] = {}
        self._bytes = 0
        self._most_chunked = most_chunked
        self._chunked: dict[str, tuple[Current, list[Chunk]]] = {}
        self._binds: dict[str, tuple[Current, dict[int, Bound]]] = {}

    def binds(self, path: str, cur: Current) -> dict[int, Bound]:
        """The re-bound chunks kept for the file `cur` at `path` (a new read of other bytes starts
        afresh), of the last `_most_binds` files."""
        kept = self._binds.get(path)
        if kept is not None and kept[0] is cur:
            return kept[1]
        binds: dict[int, Bound] = {}
        _keep(self._binds, path, (cur, binds), self._most_binds)
        return binds

    def get(self, path: str) -> Current | None:
        return self._files.get(path)

    def chunks(self, path: str, cur: Current) -> list[Chunk] | None:
        """The chunks kept for the file `cur` at `path` (the same read, so the same bytes), or None."""
        kept = self._chunked.get(path)
        return kept[1] if kept is not None and kept[0] is cur else None

    def keep_chunks(self, path: str, cur: Current, chunks: list[Chunk]) -> None:
        _keep(self._chunked, path, (cur, chunks), self._most_chunked)

    def put(self, path: str, cur: Current) -> None:
        self._forget(path)
        if len(cur.data) > self._most_bytes:
            return
        room = self._most_bytes - len(cur.data)
        while self._files and (len(self._files) >= self._most or self._bytes > room):
            self._forget(next(iter(self._files)))
        self._files[path] = cur
        self._bytes += len(cur.data)

    def _forget(self, path: str) -> None:
        gone = self._files.pop(path, None)
        if gone is not None:
            self._bytes -= len(gone.data)


def _keep(table: dict[str, T], path: str, entry: T, most: int) -> None:
    """`entry` for `path` in `table`, the oldest entries dropped to keep at most `most`."""
    table.pop(path, None)
    while table and len(table) >= most:
        del table[next(iter(table))]
    table[path] = entry


PartStart = Callable[[str, str], int | None]  # (path, qualified anchor) -> first part's start line


def bind(
    chunk: Chunk, tree: WorkTree | None, config: Config, part_start: PartStart, blob: str | None = None
) -> Bound:
    """The chunk as the working tree has it now (`tree` None: as indexed, nothing to compare).

    `blob` is the indexed file's git blob id: an unchanged file serves its chunks as indexed at
    once; a changed one (or an unknown id) re-locates each chunk, and a chunk found with the same
    lines and text is served as it was (not stale), since nothing about it changed.
    """
    indexed = from_chunk(chunk)
    if tree is None:
        return Bound(indexed, None)
    cur = tree.file(chunk.path)
    if cur is None:
        return Bound(indexed, "missing")
    if blob is not None and cur.blob == blob:
        return Bound(indexed, None)
    binds = tree.binds(chunk.path, cur)
    if (done := binds.get(chunk.id)) is not None:
        return done
    view = _relocate(chunk, indexed, cur, config, part_start, lambda: tree.chunks(chunk.path, cur, config))
    if view is None:
        bound = Bound(indexed, "missing")
    elif (view.start, view.end, view.text()) == (indexed.start, indexed.end, indexed.text()):
        bound = Bound(indexed, None)
    else:
        bound = Bound(view, "moved")
    binds[chunk.id] = bound
    return bound


def _relocate(
    chunk: Chunk, indexed: View, cur: Current, config: Config, part_start: PartStart,
    fresh: Callable[[], list[Chunk]],
) -> View | None:  # fmt: skip
    """`chunk` found in the changed file `cur`. A Markdown section, the file's header chunk and
    merged siblings are taken from the file chunked again (`fresh`): an edit elsewhere can reshape
    them; so is a chunk of a file chunked from a view, which parsing the file itself cannot find."""
    if (chunk.strategy == "markup" or chunk.kind == "file" or chunked_from_view(chunk.path)
            or len(chunk.anchors) > 1):  # fmt: skip
        return _rechunked(chunk, fresh())
    if chunk.kind in _ANONYMOUS or not chunk.anchors or chunk.strategy != "structural":
        return _shifted(indexed, cur.lines)
    # A file changed since it was indexed is parsed (tree-sitter, the chunker's outline): imported
    # here, so a query over an unchanged tree imports neither.
    from cora_ci.chunking.assemble import own_rows
    from cora_ci.rebind.locator import locate

    src = cur.src
    first = locate(chunk.lang, src, _qual(chunk.anchors[0]), chunk.symbols[0] if chunk.symbols else "")
    if first is None:
        return None
    sym = first.sym
    if chunk.elided:  # a type's skeleton: its own lines and its members' signatures
        skeleton = replace(sym, children=first.members())
        rows, quiet = own_rows(skeleton, keep_signatures=True)
        return from_rows(chunk.path, cur.lines, rows, quiet, tail_to=sym.end)
    start, end = sym.start, sym.end
    if part := part_of(chunk.header):
        first_line = part_start(chunk.path, _qual(chunk.anchors[0])) if part[0] != 1 else None
        offset = chunk.start_line - (first_line or chunk.start_line)
        length = chunk.end_line - chunk.start_line
        start = min(sym.start + max(offset, 0), sym.end)
        end = min(start + length, sym.end)
    return from_rows(chunk.path, cur.lines, range(start, end + 1))


def _qual(anchor: str) -> str:
    return anchor.split("::", 1)[1] if "::" in anchor else anchor


def _shifted(indexed: View, lines: list[str]) -> View | None:
    """The indexed lines found together, shifted by the smallest offset, elsewhere in the file."""
    items = sorted(indexed.shown.items())
    anchor_n, anchor_t = next(((n, t) for n, t in items if t.strip()), (None, ""))
    if anchor_n is None:
        return None
    offsets = [i + 1 - anchor_n for i, line in enumerate(lines) if line == anchor_t]
    for d in sorted(offsets, key=abs):
        if all(0 < n + d <= len(lines) and lines[n + d - 1] == t for n, t in items):
            shown = {n + d: t for n, t in items}
            marked = {n + d: t for n, t in indexed.marked.items()}
            return View(indexed.path, indexed.start + d, indexed.end + d, shown, marked)
    return None


def _rechunked(chunk: Chunk, chunks: list[Chunk]) -> View | None:
    """The chunk of the file chunked again (`chunks`) with the same identity (id, else anchor;
    the file's header chunk by kind): the exact answer for what an edit anywhere above, or beside,
    can reshape."""
    match = next((c for c in chunks if c.id == chunk.id), None)
    if match is None and chunk.kind == "file":
        match = next((c for c in chunks if c.kind == "file"), None)
    if match is None and chunk.anchor:
        match = next((c for c in chunks if chunk.anchor in c.anchors), None)
    return from_chunk(match) if match is not None else None
