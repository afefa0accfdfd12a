"""What ranking needs to know about chunks, read lazily from a bundle and kept per open bundle.

A query touches a few hundred candidates, so metadata is read per chunk on demand (`meta`) instead
of unpacking the whole table: on a 50k-chunk bundle a full pass costs ~0.3 s, a query ~1 ms.
Whole files (path boosts) and a file's first chunk come from the chunk table's file ranges: files
sorted by path, a file's chunks contiguous (tests/test_retrieval.py checks that order).
"""

from __future__ import annotations

import re
import weakref
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from cora_ci.bundle import Bundle
from cora_ci.bundle.manifest import links_of_row
from cora_ci.graph.build import FileLinks
from cora_ci.retrieval.query import split_qualified
from cora_ci.retrieval.tested import Subjects

if TYPE_CHECKING:
    from cora_ci.bundle.tables import ChunkTable

_LINKS_KEPT = 512
# What a warm process (the MCP server) keeps of the files and chunks its queries touched: a
# session's hits recur, a repository of 400,000 chunks would otherwise end up held whole.
_FILES_KEPT = 4096
_METAS_KEPT = 1 << 17
OVERLOAD = re.compile(r"\(.*$|#\d+$", re.DOTALL)

# Path classes ranked lower unless asked for. Directory names, then file-name patterns.
_DIRS = {
    "test": {"test", "tests", "__tests__", "testing", "spec", "specs", "__mocks__", "e2e", "testdata"},
    "benchmark": {"benchmark", "benchmarks", "bench", "benches", "asv_bench", "jmh"},
    "example": {"example", "examples", "demo", "demos", "sample", "samples", "tutorial", "tutorials"},
    "vendored": {"vendor", "vendored", "_vendor", "third_party", "thirdparty", "third-party",
                 "node_modules", "bower_components", "extern", "external"},
    "generated": {"generated", "__generated__", "gen-src"},
    "translation": {"locale", "locales", "translations"},
    "template": {"ISSUE_TEMPLATE", "PULL_REQUEST_TEMPLATE", "DISCUSSION_TEMPLATE"},
}  # fmt: skip
# Not code, yet full of code's names: the history of a project, its messages in other languages,
# its issue forms, and copies of well-known libraries. They rank below source unless asked for.
_TEXT_EXT = r"(\.(md|rst|txt|adoc|asciidoc|markdown|org))?$"
_CHANGELOG_FILE = re.compile(
    rf"^(CHANGE[SL]?(OG)?|HISTORY|NEWS|RELEASE[-_ ]?NOTES|WHATSNEW){_TEXT_EXT}", re.I
)
# release notes kept one file per version, or per change (towncrier's fragments): text files only
_CHANGELOG_DIRS = {"changelog.d", "changes", "newsfragments", "releasenotes", "release-notes",
                   "release_notes", "releases"}  # fmt: skip
_NOTE_EXTS = {
    "md",
    "rst",
    "txt",
    "adoc",
    "asciidoc",
    "markdown",
    "org",  # and towncrier's fragment kinds
    "bugfix",
    "feature",
    "doc",
    "removal",
    "misc",
    "breaking",
    "deprecation",
    "trivial",
    "change",
}
_TRANSLATION_FILE = re.compile(r"\.(po|pot|mo|xlf|xliff)$")
_TEMPLATE_FILE = re.compile(
    r"^(ISSUE|PULL_REQUEST|BUG[-_]REPORT|FEATURE[-_]REQUEST)[-_]?TEMPLATE(\..*)?$", re.I
)
_VENDORED_FILE = re.compile(r"^(jquery|bootstrap|lodash|underscore|moment|d3|angular|react(-dom)?|vue)"
                            r"([-.]\d[\w.-]*)?(\.(min|slim|bundle))?\.js$", re.I)  # fmt: skip
_TEST_FILE = re.compile(
    r"(^test_.*\.py$|_tests?\.(py|go|rs|c|cc|cpp)$|\.(test|spec)\.[cm]?[jt]sx?$|^conftest\.py$"
    r"|Tests?\.(java|cs|kt|swift)$|_spec\.rb$)"
)
# a benchmark times the code it calls, as a test checks it: neither is what a question asks for
_BENCHMARK_FILE = re.compile(
    r"(^bench_.*\.py$|_bench(mark)?s?\.(py|go|rs|c|cc|cpp)$|\.bench\.[cm]?[jt]sx?$|Benchmarks?\.(java|cs|kt)$)"
)
# A schema's history, one file a change, written by a tool (Django's `migrations/0001_initial.py`,
# Rails' `db/migrate/20230101000000_create_users.rb`, Alembic's `versions/1975ea83b712_add.py`,
# Laravel's, Knex's, golang-migrate's, Flyway's `V2__add.sql`): full of the models' names, and the
# place of no change but the next one.
_MIGRATION_DIRS = {"migrations", "migration", "migrate", "alembic"}
_MIGRATION_FILE = re.compile(r"^(\d{3,}|[0-9a-f]{12}_|V\d+(?:[._]\d+)*__)", re.I)
_GENERATED_FILE = re.compile(
    r"(_pb2(_grpc)?\.pyi?$|\.pb\.go$|\.generated\.\w+$|\.g\.cs$|\.[Dd]esigner\.cs$|\.min\.(js|css)$"
    r"|^(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|Cargo\.lock|uv\.lock)$)"
)


@lru_cache(maxsize=1 << 16)
def path_class(path: str) -> str | None:
    """test | benchmark | example | vendored | generated | changelog | translation | template |
    migration (by path alone), or None for ordinary code and docs. Cached: a query asks it of
    every candidate, ~0.3 ms a 100 (a regex a class), and candidates share files, queries share
    repositories."""
    *dirs, name = path.split("/")
    if _GENERATED_FILE.search(name):
        return "generated"
    for cls, pattern in (("changelog", _CHANGELOG_FILE), ("translation", _TRANSLATION_FILE),
                         ("template", _TEMPLATE_FILE), ("vendored", _VENDORED_FILE)):  # fmt: skip
        if pattern.search(name):
            return cls
    notes = "." not in name or bool(_NOTE_EXTS & {x.lower() for x in name.split(".")[1:]})
    if notes and any(d.lower() in _CHANGELOG_DIRS for d in dirs):
        return "changelog"
    for d in dirs:
        bare = d.lstrip("_")  # Go's tools skip `_examples/`, `_test/`: the same classes
        for cls, names in _DIRS.items():
            if d in names or bare in names:
                return cls
    if _MIGRATION_FILE.match(name) and any(d.lower() in _MIGRATION_DIRS for d in dirs):
        return "migration"
    if _TEST_FILE.search(name):
        return "test"
    if _BENCHMARK_FILE.search(name):
        return "benchmark"
    return None


def _qualified(anchor: str) -> tuple[str, ...]:
    """`src/a.py::Headers.get(self, key)` -> ("Headers", "get")."""
    return split_qualified(OVERLOAD.sub("", anchor.split("::", 1)[1]))


# A file's own words that it was generated: the chunker's markers without the bare "generated by".
_GENERATED_MARK = re.compile(
    r"@generated|DO NOT EDIT|auto-?generated|(code|file) (was |is )?(automatically )?generated by",
    re.IGNORECASE,
)
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


_LEGACY_DIRS = frozenset({"legacy", "deprecated", "obsolete"})
_VERSION_DIR = re.compile(r"v(\d+)")
_OLDER_DIR = re.compile(r"(?:^|/)(?:v\d+|legacy|deprecated|obsolete)/", re.IGNORECASE | re.MULTILINE)


def superseded_dirs(paths: list[str]) -> frozenset[str]:
    """Directories that hold an older copy of a repository's code: one named legacy, deprecated or
    obsolete; a version directory beside a newer one (zod's `src/v3/` beside `src/v4/`); or a
    version directory whose files shadow those of the directory holding it (pydantic's `v1/`,
    the previous major kept importable). Their code answers a question about the code as it is
    less well than the code that replaced it."""
    if not _OLDER_DIR.search("\n".join(paths)):  # most repositories: one pass in C, no sets
        return frozenset()
    return older_dirs(paths)


def older_dirs(paths: list[str]) -> frozenset[str]:
    """`superseded_dirs` worked out in full."""
    names: dict[str, set[str]] = {}
    for path in paths:
        d, _, name = path.rpartition("/")
        names.setdefault(d, set()).add(name)
        while d:
            d = d.rpartition("/")[0]
            names.setdefault(d, set())
    versions: dict[str, dict[int, str]] = {}
    for d in names:
        parent, _, last = d.rpartition("/")
        if (m := _VERSION_DIR.fullmatch(last)) is not None:
            versions.setdefault(parent, {})[int(m.group(1))] = d
    out = {d for d in names if d.rpartition("/")[2].lower() in _LEGACY_DIRS}
    for parent, found in versions.items():
        newest = max(found)
        for n, d in found.items():
            mine = names[d] - {"__init__.py", "index.ts", "index.js", "mod.rs"}
            if n < newest or (len(mine) >= 3 and len(mine & names[parent]) * 2 >= len(mine)):
                out.add(d)
    return frozenset(out)


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

    @cached_property
    def _superseded(self) -> frozenset[str]:
        return superseded_dirs(self.bundle.manifest["files"]["path"])

    def legacy(self, path: str) -> bool:
        """`path` lies in a directory of older code (`superseded_dirs`)."""
        got = self._legacy.get(path)
        if got is None:
            d, sup = path, self._superseded
            got = False
            while "/" in d and sup:
                d = d.rpartition("/")[0]
                if d in sup:
                    got = True
                    break
            self._legacy[path] = got
        return got

    def generated(self, m: Meta) -> bool:
        """`m`'s file is generated: the chunker flagged it (CORA-CHK-006, on its first chunk) and
        its head says so plainly. The chunker's own test is looser ("generated by" also matches
        `AST nodes generated by the parser` in jinja2's nodes.py); a false flag here would sink a
        whole file of real code."""
        got = self._generated.get(m.path)
        if got is None:
            first = self.table.file_rows(self.table.file_of(m.row)).start
            got = "CORA-CHK-006" in self.row_meta(first).diagnostics and bool(
                _GENERATED_MARK.search("\n".join(self.table.text(first).splitlines()[:5]))
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
            self._links[path] = None if fi is None else links_of_row(self.bundle.shards.row(fi))
        return self._links[path]

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
