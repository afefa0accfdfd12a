"""What ranking needs to know about chunks, read lazily from a bundle and kept per open bundle.

A query touches a few hundred candidates, so metadata is read per chunk on demand (`meta`) instead
of unpacking the whole table: on a 50k-chunk bundle a full pass costs ~0.3 s, a query ~1 ms.
Whole files (path boosts) and a file's first chunk come from the chunk table's file ranges: files
sorted by path, a file's chunks contiguous (tests/test_retrieval.py checks that order).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Collection, Iterable
from functools import cached_property, lru_cache, partial
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from cora_ci.bundle import Bundle, ref_words
from cora_ci.bundle.manifest import chunk_texts, links_of_row
from cora_ci.chunking.model import OVERLOAD
from cora_ci.errors import CoraError
from cora_ci.files.langs import GENERATED_HEAD
from cora_ci.graph.build import FileLinks, NameFilter
from cora_ci.retrieval.graph_arrays import GraphArrays, Incoming
from cora_ci.retrieval.kinds import build_output_dirs, in_dirs, in_test_module, superseded_dirs, test_function
from cora_ci.retrieval.query import split_qualified, untemplated
from cora_ci.retrieval.tested import (
    MOST,
    Subjects,
    checkable,
    confirmed,
    named_names,
    subject_stem,
    used_like,
)

if TYPE_CHECKING:
    from cora_ci.bundle.tables import ChunkTable

_LINKS_KEPT = 512
# What a warm process (the MCP server) keeps of the files and chunks its queries touched: a
# session's hits recur, a repository of 400,000 chunks would otherwise end up held whole.
_FILES_KEPT = 4096
_METAS_KEPT = 1 << 17


def _qualified(anchor: str) -> tuple[str, ...]:
    """`src/a.py::Headers.get(self, key)` -> ("Headers", "get"); a member of a Rust trait impl is
    qualified by the type it is implemented for (`<Content as Serialize>.serialize` -> ("Content",
    "serialize"): `Content::serialize` asks for it), the impl block itself keeps its name."""
    parts = split_qualified(OVERLOAD.sub("", anchor.split("::", 1)[1]))
    if len(parts) > 1 and any(p.startswith("<") for p in parts[:-1]):
        parts = (*(_IMPL_FOR.sub(r"\1", p) for p in parts[:-1]), parts[-1])
    return parts


_GO_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"]+)", re.M)
_GO_MAJOR = re.compile(r"v\d+")


def impl_member(anchor: str) -> bool:
    """The anchor names a member of a trait impl (`<Bool as FromJSON>.parseJSON`): what qualifies
    it is `<Type as Trait>`, not a type or module of its own."""
    parts = split_qualified(OVERLOAD.sub("", anchor.split("::", 1)[1])) if "::" in anchor else ()
    return len(parts) > 1 and _IMPL.match(parts[-2]) is not None


def constructor(anchor: str) -> bool:
    """The anchor names a constructor, a member named as its type (`Status.Status`, C++'s
    `SkipList<Key, Comparator>::SkipList`, Java's `Gson.Gson()`)."""
    qual = OVERLOAD.sub("", anchor.split("::", 1)[1]) if "::" in anchor else ""
    parts = split_qualified(untemplated(qual))
    return len(parts) > 1 and parts[-1] == parts[-2]


_IMPL = re.compile(r"^<[^<>]+ as [^<>]+>$")  # a trait impl's name, whatever the type
_IMPL_FOR = re.compile(r"^<([A-Za-z_]\w*) as [^<>]+>$")  # `<Type as Trait>` -> Type, a plain name


class Meta(NamedTuple):
    """One chunk as ranking sees it."""

    id: int
    row: int
    path: str
    lang: str
    kind: str
    symbols: tuple[str, ...]
    anchors: tuple[str, ...]
    start_line: int
    end_line: int
    parent: int | None
    children: tuple[int, ...]
    diagnostics: tuple[str, ...]  # codes

    @property
    def anchor(self) -> str | None:
        return self.anchors[0] if self.anchors else None

    @property
    def names(self) -> tuple[tuple[str, ...], ...]:
        """Each anchor's qualified name as parts, overload suffix dropped (made when first asked for)."""
        return _names_of(self.anchors)


@lru_cache(maxsize=1 << 16)
def _names_of(anchors: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(_qualified(a) for a in anchors if "::" in a)


class _FileColumns:
    """A file's light chunk columns, read once (no chunk text is decoded); each chunk's `Meta`
    is made when asked for: a query ranks a few chunks of each file it touches."""

    def __init__(self, table: ChunkTable, fi: int) -> None:
        self.c = table.meta_columns(fi)
        self.rows = table.file_rows(fi)
        self.ids = table.ids[self.rows.start : self.rows.stop]
        self.path, self.lang = table.file_path(fi), table.file_lang(fi)
        self.children: dict[int, list[int]] = {}
        for cid, parent in zip(self.ids, self.c["parent"], strict=True):
            if parent is not None:
                self.children.setdefault(parent, []).append(cid)

    def meta(self, row: int) -> Meta:
        i, c = row - self.rows.start, self.c
        cid = self.ids[i]
        return Meta(
            cid, row, self.path, self.lang, c["kind"][i], tuple(c["symbols"][i]), tuple(c["anchors"][i]),
            c["start_line"][i], c["end_line"][i], c["parent"][i], tuple(self.children.get(cid, ())),
            tuple(d[0] for d in c["diagnostics"][i]),
        )  # fmt: skip


class Catalog:
    """Per-bundle ranking state: chunk metadata on demand, file ranges, the graph as arrays."""

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle
        self.table = bundle.chunks
        self._meta: dict[int, Meta] = {}  # by row
        self._files: dict[int, _FileColumns] = {}  # by file index: a query reads a few chunks a file
        self._generated: dict[str, bool] = {}
        self._legacy: dict[str, bool] = {}
        self._links: dict[str, FileLinks | None] = {}
        self._named_for: dict[str, tuple[str, ...]] = {}
        self._may_define: dict[str, tuple[list[str], list[str]]] = {}
        # the last search's scored candidates (`search.py`): an answer asking again for more hits
        # of the same candidates (`render.answer.filled`) only picks again
        self.last_ranked: tuple[tuple[Any, ...], dict[int, Any], dict[int, int]] | None = None
        self._expansions = 0
        self._incoming: Incoming | None = None

    def __len__(self) -> int:
        return len(self.table)

    def row_meta(self, row: int) -> Meta:
        m = self._meta.get(row)
        if m is None:
            fi = self.table.file_of(row)
            f = self._files.get(fi)
            if f is None:
                _make_room(self._files, _FILES_KEPT)
                f = self._files[fi] = _FileColumns(self.table, fi)
            _make_room(self._meta, _METAS_KEPT)
            m = self._meta[row] = f.meta(row)
        return m

    def meta(self, chunk_id: int) -> Meta | None:
        row = self.table.row_of.get(chunk_id)
        return None if row is None else self.row_meta(row)

    def file_rows(self, path: str) -> range:
        """Rows of the file `path` (empty if the bundle has no such file)."""
        fi = self.table.file_index(path)
        return range(0) if fi is None else self.table.file_rows(fi)

    @cached_property
    def subjects(self) -> Subjects:
        """Test file -> the files it checks (`tested.py`), over the bundle's paths."""
        return Subjects(self.bundle.manifest["files"]["path"])

    def subjects_of(self, test_path: str, among: Collection[str] | None = None) -> tuple[str, ...]:
        """The files a test file checks: the file its name names, else the file defining the
        class or function its name names (`tested.named_for`; with `among`, only those among it,
        and only they are asked whether they define it unless all must be counted)."""
        got = self.subjects.of(test_path)
        if got:
            return got
        if test_path not in self._named_for:
            names, files = self._named(test_path)
            if among is not None and len(files) <= MOST:
                return confirmed(files, names, self._defines, among)
            self._named_for[test_path] = confirmed(files, names, self._defines)
        got = self._named_for[test_path]
        return got if among is None else tuple(p for p in got if p in among)

    def _named(self, test_path: str) -> tuple[list[str], list[str]]:
        """The names a test file is named for and the code files that may define them (by the
        name filter): what each query's tests would work out again, worked out once."""
        if test_path not in self._may_define:
            names = named_names(test_path, self._used_like(test_path))
            files = checkable(test_path, self.definers.paths_with(names)) if names else []
            self._may_define[test_path] = (names, files)
        return self._may_define[test_path]

    def _used_like(self, test_path: str) -> set[str]:
        """`tested.used_like` of a test file: its code is read, not the names each of its chunks
        uses (`ref_words`: ~20 us a chunk)."""
        stem, fi, links = subject_stem(test_path), self.table.file_index(test_path), self.links(test_path)
        if stem is None or fi is None or links is None:
            return set()
        try:
            code = chunk_texts(self.bundle.shards.get(fi, "texts"))
        except ValueError as e:
            raise CoraError(
                "CORA-BND-004", f"the shard row of {test_path!r}: texts unreadable: {e}"
            ) from None
        refs_h = self.bundle.manifest["files"]["refs_h"][fi]
        return used_like(stem, code, refs_h, ref_words.spelled(links.refs), links.imports)

    def _defines(self, path: str, names: list[str]) -> bool:
        links = self.links(path)
        return links is not None and not links.defs.keys().isdisjoint(names)

    @cached_property
    def definers(self) -> NameFilter:
        """Which files may define a name (the top manifest's per-file name hashes)."""
        return self._name_filter("defs_h")

    @cached_property
    def users(self) -> NameFilter:
        """Which files' code may use a name (the top manifest's per-file hashes of the names their
        chunks reference; imports are not among them)."""
        return self._name_filter("refs_h")

    def _name_filter(self, column: str) -> NameFilter:
        files = self.bundle.manifest["files"]
        return NameFilter(dict(zip(files["path"], files[column], strict=True)))

    def defining(self, names: Iterable[str], most: int | None = None,
                 where: Callable[[str], bool] | None = None) -> dict[str, dict[str, list[int]]]:  # fmt: skip
        """Per file that defines one of `names` (of the files whose name hashes may hold one and
        that `where` takes, the first `most` by path), the ids of the symbols defining each of
        them there."""
        wanted = set(names)
        out: dict[str, dict[str, list[int]]] = {}
        paths = self.definers.paths_with(wanted)
        for path in (paths if where is None else list(filter(where, paths)))[:most]:
            links = self.links(path)
            defs = {n: links.defs[n] for n in wanted & links.defs.keys()} if links is not None else {}
            if defs:
                out[path] = defs
        return out

    @cached_property
    def _superseded(self) -> frozenset[str]:
        return superseded_dirs(self.bundle.manifest["files"]["path"])

    def legacy(self, path: str) -> bool:
        """`path` lies in a directory of older code (`superseded_dirs`)."""
        got = self._legacy.get(path)
        if got is None:
            got = self._legacy[path] = in_dirs(path, self._superseded)
        return got

    @cached_property
    def _by_stem(self) -> dict[str, list[str]]:
        stems: dict[str, list[str]] = {}
        for path in self.bundle.manifest["files"]["path"]:
            stems.setdefault(path.rpartition("/")[2].partition(".")[0], []).append(path)
        return stems

    def same_stem(self, path: str) -> list[str]:
        """The other files named as `path` but for their extensions (`uv.h`: `src/uv.c`), anywhere."""
        return [p for p in self._by_stem.get(path.rpartition("/")[2].partition(".")[0], []) if p != path]

    @cached_property
    def go_root(self) -> str:
        """The package name of Go code at the repository's root: its `go.mod`'s module path's last
        element, a major version suffix aside (`github.com/go-chi/chi/v5`: `chi`), which Go code
        names it by (`gin.Context`); "" without one."""
        rows = self.file_rows("go.mod")
        found = _GO_MODULE.search(self.table.text(rows.start)) if rows else None
        parts = [p for p in found.group(1).split("/") if not _GO_MAJOR.fullmatch(p)] if found else []
        return parts[-1] if parts else ""

    @cached_property
    def _built(self) -> frozenset[str]:
        files = self.bundle.manifest["files"]
        return build_output_dirs(files["path"], files["strategy"])

    def built(self, path: str) -> bool:
        """`path` lies in a build's output beside the source it was built from (`build_output_dirs`)."""
        return bool(self._built) and in_dirs(path, self._built)

    def test_by_code(self, m: Meta) -> bool:
        """A test its path does not tell: a Rust `mod tests`'s chunk, a Rust function marked `#[test]`
        (ranking and `related` ask the same)."""
        return in_test_module(m.lang, m.anchor) or test_function(
            m.lang, m.kind, m.anchor, partial(self.table.text, m.row)
        )

    def generated(self, m: Meta) -> bool:
        """`m`'s file is generated: the chunker flagged it (CORA-CHK-006, on its first chunk) and
        its head says so (`GENERATED_HEAD`), not only its name (a `*.min.js`, whose chunks stay
        as they rank), and not an older chunker's looser test: a false flag would sink a whole
        file of real code."""
        got = self._generated.get(m.path)
        if got is None:
            first = self.table.file_rows(self.table.file_of(m.row)).start
            got = "CORA-CHK-006" in self.row_meta(first).diagnostics and bool(
                GENERATED_HEAD.search("\n".join(self.table.text(first).splitlines()[:5]))
            )
            self._generated[m.path] = got
        return got

    def descendants(self, chunk_id: int) -> list[int]:
        """Chunk ids below `chunk_id` in the chunk tree, depth first."""
        out: list[int] = []
        todo = [chunk_id]
        while todo:
            m = self.meta(todo.pop())
            if m is None:
                continue
            for c in reversed(m.children):
                out.append(c)
                todo.append(c)
        return out

    def links(self, path: str) -> FileLinks | None:
        """The graph links of the file `path` (the names it defines and uses, by chunk), decoded
        once per open bundle; the last `_LINKS_KEPT` files are kept (a session's hits recur)."""
        if path not in self._links:
            fi = self.table.file_index(path)
            _make_room(self._links, _LINKS_KEPT)
            self._links[path] = None if fi is None else self._read_links(fi)
        return self._links[path]

    def _read_links(self, fi: int) -> FileLinks:
        """A file's links; its texts are read only if the names its chunks use are."""
        shards = self.bundle.shards
        return links_of_row(shards.row(fi, texts=False), lambda: shards.get(fi, "texts"))

    @cached_property
    def _popularity(self) -> npt.NDArray[np.float64]:
        """Per graph node, log(1 + references to it) over the most referenced node's."""
        g = self.graph
        refs = np.log1p(np.bincount(g.indices, minlength=len(g.ids)).astype(np.float64))
        top = refs.max() if len(refs) else 0.0
        out: npt.NDArray[np.float64] = refs / top if top > 0 else refs
        return out

    def popularity(self, chunk_ids: list[int]) -> dict[int, float]:
        """How much of the code refers to each chunk, 0 to 1 (log-scaled, the most referenced
        chunk 1): a query-independent prior, as code search engines rank by references."""
        g = self.graph
        nodes = g.nodes(chunk_ids)
        return dict(zip(g.ids[nodes].tolist(), self._popularity[nodes].tolist(), strict=True))

    def incoming(self) -> Incoming | None:
        """The graph's edges by target, from the catalog's second expansion on: a process that
        asks once (`cora-ci query`) would spend ~6 ms on it to save ~0.5 ms; a server or a loop
        (the MCP server, several questions, the benchmarks) has it back within a dozen queries."""
        self._expansions += 1
        if self._incoming is None and self._expansions >= 2:
            self._incoming = Incoming.of(self.graph)
        return self._incoming

    @cached_property
    def graph(self) -> GraphArrays:
        g = self.bundle.graph_csr
        sources = np.repeat(np.arange(len(g.ids), dtype=np.int64), np.diff(g.indptr))
        return GraphArrays(g.ids, g.indptr, g.indices, g.weights.astype(np.float64), sources)


def _make_room(kept: dict[Any, Any], most: int) -> None:
    """Forget the oldest entries of `kept` until one more fits within `most`."""
    while len(kept) >= most:
        kept.pop(next(iter(kept)))


_CATALOGS: weakref.WeakKeyDictionary[Bundle, Catalog] = weakref.WeakKeyDictionary()


def catalog(bundle: Bundle) -> Catalog:
    """The bundle's catalog, made once per open bundle."""
    c = _CATALOGS.get(bundle)
    if c is None:
        c = _CATALOGS[bundle] = Catalog(bundle)
    return c
