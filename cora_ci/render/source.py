"""Chunks of an open bundle, re-bound to a working tree: what packing and `show` read from.

Chunk ids are a hash of path and anchor (`chunk_id`), so an anchor finds its chunk without a scan
of the table; the BM25 name field is the fallback for anchors that are not a chunk's first.
"""

from __future__ import annotations

import contextlib
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cora_ci.bundle import Bundle
from cora_ci.chunking.model import OVERLOAD, Chunk, chunk_id, later_parts
from cora_ci.config import Config, from_mapping
from cora_ci.errors import CoraError
from cora_ci.rebind.bind import Bound, Stale, WorkTree, bind
from cora_ci.rebind.view import View, from_chunk, merge
from cora_ci.render import nested
from cora_ci.render.nested import Inner
from cora_ci.render.siblings import implementation, sibling, stub


class BundleChunks:
    """`ChunkSource` over a bundle; binds each chunk to `tree` once (None: serve as indexed)."""

    def __init__(self, bundle: Bundle, tree: WorkTree | None) -> None:
        self.bundle = bundle
        self.tree = tree
        self.config = chunker_config(bundle.manifest)
        self.blobs = indexed_blobs(bundle.manifest)
        self._bound: dict[int, Bound] = {}

    def chunk(self, cid: int) -> Chunk | None:
        row = self.bundle.chunks.row_of.get(cid)
        return self.bundle.chunks.chunk(row) if row is not None else None

    def bind(self, chunk: Chunk) -> Bound:
        if chunk.id not in self._bound:
            blob = self.blobs.get(chunk.path)
            self._bound[chunk.id] = bind(chunk, self.tree, self.config, self.part_start, blob)
        return self._bound[chunk.id]

    def part_start(self, path: str, qual: str) -> int | None:
        c = self.chunk(chunk_id(path, qual))
        return c.start_line if c is not None and c.path == path else None

    def by_anchor(self, anchor: str) -> Chunk | None:
        """The chunk whose anchors include `anchor` (`path::Qualified.name`, or a file's path); for
        the bare name of overloads (`Context.invoke` for `Context.invoke(self, f)` and the rest),
        the implementation: one with a body before a stub (a TypeScript signature whose JSDoc
        made it the longest: hono's `HonoRequest.param`), then the longest."""
        path, sep, qual = anchor.partition("::")
        c = self.chunk(chunk_id(path, qual if sep else "file"))
        if c is not None and c.path == path and (anchor in c.anchors or (not sep and c.kind == "file")):
            return c
        if not sep:
            return None
        members: dict[str, list[Chunk]] = {}  # a member's anchor -> its chunks (a long one's parts)
        for cid, _ in self.bundle.lexical.search(qual, 500):
            c = self.chunk(cid)
            if c is None or c.path != path:
                continue
            if anchor in c.anchors:
                return c
            for a in c.anchors:
                if a.startswith(anchor) and OVERLOAD.sub("", a) == anchor:
                    members.setdefault(a, []).append(c)
        if not members:
            return None
        best = max(members.items(), key=lambda m: _principal(m[1]))
        first = min(best[1], key=lambda c: c.start_line)  # a split member from its first part
        return self.chunk(chunk_id(path, best[0].partition("::")[2])) or first

    def suggestions(self, anchor: str, n: int = 3) -> list[str]:
        """Anchors that look like `anchor`, for the error message of a mistyped one."""
        qual = anchor.partition("::")[2] or anchor
        out: list[str] = []
        for cid, _ in self.bundle.lexical.search(qual.replace(".", " "), 50):
            c = self.chunk(cid)
            if c is not None and c.anchor and c.anchor not in out:
                out.append(c.anchor)
            if len(out) >= n:
                break
        return out

    def file_chunks(self, path: str) -> list[Chunk]:
        """The chunks of the indexed file `path`, in order (none if it is not indexed)."""
        t = self.bundle.chunks
        fi = t.file_index(path)
        return [] if fi is None else [t.chunk(r) for r in t.file_rows(fi)]

    def inner(self, anchor: str) -> tuple[Chunk, Inner] | None:
        """A symbol with no chunk of its own (a member of a small type kept whole) and the chunk
        holding it, found by parsing its file (`cora_ci.render.nested`)."""
        path, _, qual = anchor.partition("::")
        chunks = self.file_chunks(path) if qual else []
        if not nested.wanted(chunks):
            return None
        found = self.symbols_of(path, chunks).get(anchor)
        if found is None:
            return None
        owners = {a: c for c in chunks if c.kind != "file" for a in c.anchors}
        parts = qual.split(".")
        outer = (f"{path}::{'.'.join(parts[:n])}" for n in range(len(parts) - 1, 0, -1))
        holder = next((owners[a] for a in outer if a in owners), None)  # the nearest enclosing symbol's
        return (holder, found) if holder is not None else None

    def symbols_of(self, path: str, chunks: list[Chunk]) -> dict[str, Inner]:
        """Every symbol of the file by anchor, parsed from the working tree's file if it has it."""
        cur = self.tree.file(path) if self.tree is not None else None
        unchanged = cur is not None and self.blobs.get(path) == cur.blob
        gone = self.tree is not None and cur is None
        return nested.inner_symbols(chunks, cur.lines if cur is not None else None, unchanged, gone)

    def unchanged(self, path: str) -> bool:
        """The working tree has `path` as indexed (or there is no working tree to compare)."""
        if self.tree is None:
            return True
        cur = self.tree.file(path)
        return cur is not None and self.blobs.get(path) == cur.blob

    def span(self, chunk: Chunk) -> tuple[int, int]:
        """The indexed lines of a symbol's whole code (its parts and everything inside them), from
        the catalog's light columns: no chunk text is decoded, so a class of 160 methods is cheap."""
        from cora_ci.retrieval.catalog import catalog

        cat = catalog(self.bundle)
        ids = [chunk.id]
        if chunk.anchor and "::" in chunk.anchor:
            path, qual = chunk.anchor.split("::", 1)
            ids += later_parts(path, qual, lambda cid: cat.meta(cid) is not None)
        ids += [d for cid in list(ids) for d in cat.descendants(cid)]
        metas = [m for m in map(cat.meta, ids) if m is not None]
        return min(m.start_line for m in metas), max(m.end_line for m in metas)

    def family(self, chunk: Chunk) -> list[Chunk]:
        """The chunk, its other parts and all its descendants: a symbol's whole code."""
        out = [chunk]
        if chunk.anchor and "::" in chunk.anchor:
            path, qual = chunk.anchor.split("::", 1)
            parts = later_parts(path, qual, lambda cid: self.chunk(cid) is not None)
            out += [c for c in map(self.chunk, parts) if c is not None]
        stack = [cid for c in out for cid in c.children]
        while stack:
            c = self.chunk(stack.pop())
            if c is not None:
                out.append(c)
                stack.extend(c.children)
        return out


def chunker_config(manifest: dict[str, Any]) -> Config:
    """The chunker config a bundle was built with, so a file re-chunked for re-binding is cut the
    same way; the defaults if the manifest does not say (or says something this version rejects)."""
    table = (manifest.get("chunker") or {}).get("config") or {}
    with contextlib.suppress(CoraError, TypeError, AttributeError):
        return from_mapping({k: v for k, v in table.items() if k != "source"}, "bundle")
    return Config()


def indexed_blobs(manifest: dict[str, Any]) -> dict[str, str]:
    """Path -> git blob id of each indexed file, from the manifest's file table (its `path` and
    `blob` columns); empty if the table has another shape, which only costs re-locating chunks."""
    files = manifest.get("files")
    try:
        return dict(zip(files["path"], files["blob"], strict=True))  # type: ignore[index]
    except (KeyError, TypeError, ValueError):
        return {}


def work_tree(bundle: Bundle, repo: Path | None, default: Path | None) -> WorkTree | None:
    """The working tree to re-bind to: `repo` if given, else `default` (the current repository, or
    directory outside git) when it is the bundle's source: it holds the bundle and has the source's
    name, or it knows the indexed commit."""
    limit = chunker_config(bundle.manifest).max_file_bytes
    if repo is not None:
        if not repo.is_dir():
            raise CoraError("CORA-IO-001", f"--repo {repo}: no such directory")
        return WorkTree(repo, limit)
    if default is None:
        return None
    here = default.resolve()
    source = bundle.manifest.get("source") or {}
    if source.get("root") == here.name and bundle.root.resolve().is_relative_to(here):
        return WorkTree(here, limit)
    commit = source.get("commit")
    if commit and _has_commit(here, str(commit)):
        return WorkTree(here, limit)
    return None


def _has_commit(repo: Path, commit: str) -> bool:
    try:
        out = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{commit}^{{commit}}"],
                             capture_output=True, check=False)  # fmt: skip
    except OSError:
        return False
    return out.returncode == 0


@dataclass
class Shown:
    """A symbol's whole current code, for `cora-ci show`."""

    chunk: Chunk
    view: View
    stale: Stale
    symbol: str  # the anchor's own (small siblings share a chunk)
    kind: str = ""  # the symbol's kind: the chunk's, or a member's inside a chunk kept whole
    anchor: str = ""  # the bundle's anchor it was found by (the one asked for, or the one it means)

    def __post_init__(self) -> None:
        self.kind = self.kind or self.chunk.kind


def show(source: BundleChunks, anchor: str) -> Shown:
    """The code of the symbol anchored `anchor`, re-bound to the working tree when there is one;
    an anchor written otherwise is the one symbol it means (`render.anchors`)."""
    chunk = source.by_anchor(anchor)
    if chunk is None:
        inner = source.inner(anchor)
        if inner is None:
            from cora_ci.render.anchors import meant, refused

            other = meant(source, anchor)
            if other is None or other == anchor:
                raise refused(source, anchor)
            return show(source, other)
        holder, sym = inner
        if sym.stale == "missing" and source.tree is not None:
            raise _gone(anchor, source.tree)
        view = View(holder.path, sym.start, sym.end, dict(enumerate(sym.lines, sym.start)))
        return Shown(holder, view, sym.stale, sym.sym.name, sym.sym.kind, anchor)
    indexed = merge([from_chunk(c) for c in source.family(chunk)])
    if anchor not in chunk.anchors and len(chunk.anchors) > 1:  # overloads merged: the implementation
        anchor = implementation(indexed, chunk, anchor)[0]
    name = chunk.symbols[chunk.anchors.index(anchor)] if anchor in chunk.anchors else chunk.symbol
    if len(chunk.anchors) > 1:  # small siblings share the chunk: only this one's lines
        indexed = sibling(indexed, chunk, anchor)
    tree = source.tree
    if tree is None:
        return Shown(chunk, _filled(indexed, None), None, name, anchor=anchor)
    cur = tree.file(chunk.path)
    unchanged = cur is not None and source.blobs.get(chunk.path) == cur.blob
    if cur is not None and unchanged:
        return Shown(chunk, _filled(indexed, cur.lines), None, name, anchor=anchor)
    if cur is not None and chunk.strategy == "structural" and "::" in anchor:
        from cora_ci.rebind.locator import locate  # parses: only for a file changed since indexed

        found = locate(chunk.lang, cur.src, anchor.split("::", 1)[1], name)
        if found is not None:
            a, b = found.sym.start, found.sym.end
            view = View(chunk.path, a + 1, b + 1, {r + 1: cur.lines[r] for r in range(a, b + 1)})
            same = (view.start, view.end, view.text()) == (
                indexed.start,
                indexed.end,
                _filled(indexed, None).text(),
            )
            return Shown(chunk, view, None if same else "moved", name, anchor=anchor)
    elif cur is not None:
        bound = [source.bind(c) for c in source.family(chunk)]
        if bound[0].stale != "missing":
            views = [b.view for b in bound if b.stale != "missing"]
            stale: Stale = "moved" if any(b.stale for b in bound) else None
            return Shown(chunk, _filled(merge(views), cur.lines), stale, name, anchor=anchor)
    raise _gone(anchor, tree)


def _gone(anchor: str, tree: WorkTree) -> CoraError:
    return CoraError(
        "CORA-QRY-003",
        f"{anchor} is in the bundle but no longer in the working tree {tree.root}",
        "it was renamed or deleted since indexing; search for it with `cora-ci query`",
    )


def unknown_anchor(source: BundleChunks, anchor: str) -> CoraError:
    """CORA-QRY-002 for `anchor`, with the anchors that look like it."""
    near = source.suggestions(anchor)
    hint = f"did you mean {', '.join(near)}?" if near else "anchors look like path/file.py::Class.method"
    return CoraError("CORA-QRY-002", f"no symbol anchored {anchor!r} in {source.bundle.root}", hint)


def _principal(parts: list[Chunk]) -> tuple[bool, bool, int, int]:
    """How a family's member ranks to be shown for its bare name (parts: its chunks): one with a
    body before a stub, one not deprecated, then the longest, then the first (commons-lang's `show
    StringUtils.abbreviate` began mid-javadoc: the second part of its longest member was longest)."""
    first = min(parts, key=lambda c: c.start_line)
    span = max(c.end_line for c in parts) - first.start_line
    bodied = not stub(from_chunk(first), first.lang)
    return bodied, "@Deprecated" not in first.text, span, -first.start_line


def _filled(view: View, lines: list[str] | None) -> View:
    """The view with every line of its range: hidden lines from the file, else blank (a symbol's
    chunks hold all its non-blank lines, so what none of them holds is blank)."""
    shown = {
        n: view.shown.get(n, lines[n - 1] if lines is not None and n <= len(lines) else "")
        for n in range(view.start, view.end + 1)
    }
    return View(view.path, view.start, view.end, shown)
