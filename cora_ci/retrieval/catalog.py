"""What ranking needs to know about chunks, read lazily from a bundle and kept per open bundle.

A query touches a few hundred candidates, so metadata is read per chunk on demand (`meta`) instead
of unpacking the whole table: on a 50k-chunk bundle a full pass costs ~0.3 s, a query ~1 ms.
Whole files (path boosts) come from `file_rows`, a binary search, and a file's first chunk from its
neighbours: both rely on the chunk table's order, files sorted by path and a file's chunks
contiguous (tests/test_retrieval.py checks that order on a real bundle).
"""

from __future__ import annotations

import re
import weakref
from functools import cached_property, lru_cache
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from cora_ci.bundle import Bundle
from cora_ci.retrieval.query import split_qualified

_OVERLOAD = re.compile(r"\(.*$|#\d+$", re.DOTALL)

# Path classes ranked lower unless asked for. Directory names, then file-name patterns.
_DIRS = {
    "test": {"test", "tests", "__tests__", "testing", "spec", "specs", "__mocks__", "e2e", "testdata"},
    "example": {"example", "examples", "demo", "demos", "sample", "samples", "tutorial", "tutorials"},
    "vendored": {"vendor", "vendored", "_vendor", "third_party", "thirdparty", "third-party",
                 "node_modules", "bower_components", "extern", "external"},
    "generated": {"generated", "__generated__", "gen-src"},
}  # fmt: skip
_TEST_FILE = re.compile(
    r"(^test_.*\.py$|_tests?\.(py|go|rs|c|cc|cpp)$|\.(test|spec)\.[cm]?[jt]sx?$|^conftest\.py$"
    r"|Tests?\.(java|cs|kt|swift)$|_spec\.rb$)"
)
_GENERATED_FILE = re.compile(
    r"(_pb2(_grpc)?\.pyi?$|\.pb\.go$|\.generated\.\w+$|\.g\.cs$|\.[Dd]esigner\.cs$|\.min\.(js|css)$"
    r"|^(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|Cargo\.lock|uv\.lock)$)"
)


def path_class(path: str) -> str | None:
    """test | example | vendored | generated (by path alone), or None for ordinary code and docs."""
    *dirs, name = path.split("/")
    if _GENERATED_FILE.search(name):
        return "generated"
    for d in dirs:
        for cls, names in _DIRS.items():
            if d in names:
                return cls
    if _TEST_FILE.search(name):
        return "test"
    return None


def _qualified(anchor: str) -> tuple[str, ...]:
    """`src/a.py::Headers.get(self, key)` -> ("Headers", "get")."""
    return split_qualified(_OVERLOAD.sub("", anchor.split("::", 1)[1]))


_PROSE_LANGS = frozenset({"markdown", "rst", "asciidoc", "org"})
_STUB = re.compile(r"\.(pyi|d\.[cm]?ts)$")


def prose_class(path: str, lang: str) -> str | None:
    """docs (prose: Markdown, reStructuredText, plain text files) | stub (.pyi, .d.ts) | None."""
    if _STUB.search(path):
        return "stub"
    name = path.rsplit("/", 1)[-1]
    if lang in _PROSE_LANGS or (lang == "text" and (name.endswith(".txt") or "." not in name)):
        return "docs"
    return None


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


class GraphArrays(NamedTuple):
    """The reference graph as numpy CSR, plus each edge's source (to find who references a chunk)."""

    ids: npt.NDArray[np.uint64]  # sorted
    indptr: npt.NDArray[np.int64]
    indices: npt.NDArray[np.int64]
    weights: npt.NDArray[np.float64]
    sources: npt.NDArray[np.int64]  # edge e runs sources[e] -> indices[e]

    def nodes(self, chunk_ids: list[int]) -> npt.NDArray[np.int64]:
        """Node indexes of the chunk ids present in the graph (others dropped)."""
        if not len(self.ids) or not chunk_ids:
            return np.zeros(0, dtype=np.int64)
        q = np.asarray(chunk_ids, dtype=np.uint64)
        pos = np.minimum(np.searchsorted(self.ids, q), len(self.ids) - 1)
        found: npt.NDArray[np.int64] = pos[self.ids[pos] == q].astype(np.int64)
        return found


class Catalog:
    """Per-bundle ranking state: chunk metadata on demand, file ranges, the graph as arrays."""

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle
        self.table = bundle.chunks
        self._meta: dict[int, Meta] = {}  # by row
        self._files: dict[str, range] = {}
        self._generated: dict[str, bool] = {}

    def __len__(self) -> int:
        return len(self.table)

    def row_meta(self, row: int) -> Meta:
        m = self._meta.get(row)
        if m is None:
            c = self.table.chunk(row)
            m = Meta(c.id, row, c.path, c.lang, c.kind, tuple(c.symbols), tuple(c.anchors),
                     c.start_line, c.end_line, c.parent, tuple(c.children),
                     tuple(d.code for d in c.diagnostics))  # fmt: skip
            self._meta[row] = m
        return m

    def meta(self, chunk_id: int) -> Meta | None:
        row = self.table.row_of.get(chunk_id)
        return None if row is None else self.row_meta(row)

    def file_rows(self, path: str) -> range:
        """Rows of the file `path` (empty if the bundle has no such file)."""
        got = self._files.get(path)
        if got is not None:
            return got
        n = len(self.table)
        lo, hi = 0, n
        while lo < hi:  # first row whose path >= path
            mid = (lo + hi) // 2
            if self.row_meta(mid).path < path:
                lo = mid + 1
            else:
                hi = mid
        end = lo
        while end < n and self.row_meta(end).path == path:
            end += 1
        got = range(lo, end)
        self._files[path] = got
        return got

    def generated(self, m: Meta) -> bool:
        """The chunker flagged `m`'s file as generated (CORA-CHK-006, recorded on its first chunk).

        The first chunk is found from `m` backwards, in steps that double then a binary search:
        a few reads of the file's own (already unpacked) rows, where a search over the whole
        table would unpack a file per probe.
        """
        got = self._generated.get(m.path)
        if got is None:
            path = self.table.chunk
            lo, step = m.row, 1  # lo: a row of the file
            while lo - step >= 0 and path(lo - step).path == m.path:
                lo, step = lo - step, step * 2
            hi = max(lo - step, -1)  # hi: a row before the file (or -1)
            while lo - hi > 1:
                mid = (lo + hi) // 2
                if path(mid).path == m.path:
                    lo = mid
                else:
                    hi = mid
            got = "CORA-CHK-006" in self.row_meta(lo).diagnostics
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

    @cached_property
    def graph(self) -> GraphArrays:
        g = self.bundle.graph
        indptr = np.asarray(g.indptr, dtype=np.int64)
        sources = np.repeat(np.arange(len(g.ids), dtype=np.int64), np.diff(indptr))
        return GraphArrays(np.asarray(g.ids, dtype=np.uint64), indptr, np.asarray(g.indices, dtype=np.int64),
                           np.asarray(g.weights, dtype=np.float64), sources)  # fmt: skip


_CATALOGS: weakref.WeakKeyDictionary[Bundle, Catalog] = weakref.WeakKeyDictionary()


def catalog(bundle: Bundle) -> Catalog:
    """The bundle's catalog, made once per open bundle."""
    c = _CATALOGS.get(bundle)
    if c is None:
        c = _CATALOGS[bundle] = Catalog(bundle)
    return c
