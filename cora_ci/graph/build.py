"""Resolution of references into one weighted, directed graph over chunks (CSR).

Per file, `file_links` keeps what resolution needs (the names it defines, the names each chunk
uses, the chunks a chunk may not point to); `Linker.edges` resolves one file's references against
all files' links, which it reads lazily, so an update re-resolves only the files a change can
affect (see `affected`) and keeps the stored edges of the others. The same code runs for a full
build, where every file is affected: both give the same edges.

Edges and weights. Only *reference* edges, from the referencing chunk to the defining chunk. A
name N used in chunk C of file F resolves to the first non-empty of:

1. chunks of F that define N, except C's own ancestors (a method naming its class gains nothing:
   the manifest already links parent and child, and the assembled answer shows the parent anyway);
   of a name nearly every code base has (`COMMON`), a member (a method, a field) only for a C
   inside its owner or naming it: `self.close()` in `BaseConnector` is `BaseConnector.close`,
   `data.pop()` in a function beside `OrderedSet` is a dict's, not `OrderedSet.pop`;
2. chunks of the files F imports (or sees implicitly: Go/Java package, C# namespace) defining N;
   of a COMMON name, a member only for a C that names its owner as well: `store =
   MemoryStore(); store.save(x)` is `MemoryStore.save`, but `data.pop()` is a dict's, not the
   `OrderedSet.pop` of a module F imports for something else, and a Java test's `create(...)`
   not the `create` of every class of its package;
3. the one chunk of the whole repository defining N, if exactly one does and N is not a name
   that nearly every code base has (`get`, `run`, `__init__`, ...).

Each (C, N) pair carries weight 1, split evenly over its targets (an overloaded or twice-defined
name gives 1/2 to each), and a chunk's edges to one target add up. A symbol split into parts is
one definition: names resolve to its first part. Structural parent/child edges are *not* added:
a child->parent edge would make every class skeleton a hub absorbing its members' mass and
outranking real call targets, and parent->children edges would reward large classes; the query
stage can add parents from the manifest when it assembles chunks. Markup sections and keys define
nothing, so a YAML key `name` never captures a code reference.
"""

from __future__ import annotations

import bisect
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from cora_ci.arrays import isin, sorted_unique
from cora_ci.chunking.model import Chunk
from cora_ci.graph.csr import Csr, Edges, csr_dict, csr_from_dict, csr_from_edges
from cora_ci.graph.resolve import Repo, namespaces

if TYPE_CHECKING:  # extraction loads tree-sitter's queries: readers of a bundle never need it
    from cora_ci.graph.extract import FileRefs

# Names so common that a single repository-wide definition says nothing about a use (rule 3 only).
_COMMON_WORDS = """
    __init__ __new__ __call__ __str__ __repr__ __eq__ __hash__ __len__ __iter__ __enter__ __exit__
    main run get set put post delete update add remove pop push append extend insert clear copy
    close open read write flush send start stop init new create build make parse load save dump
    call apply execute handle process validate check reset setup teardown configure render format
    name id key value type data items keys values list dict map filter reduce len str int float
    bool bytes object print size count length index next first last test tests default from into
    clone drop eq cmp hash fmt string error err ctx context config options args kwargs params result
    toString valueOf equals hashCode compareTo constructor then catch finally Dispose ToString
    Equals GetHashCode Main Run Start Stop Init Get Set Add Remove Update Execute Handle Create
    String Object Error Exception Value Type Name Id Key Item Items Data List Map Result Option Self
    Some None Ok Err Vec Box Arc Rc"""
COMMON = frozenset(_COMMON_WORDS.split())
# `FileLinks.defs["\0Owner"]`: the members of `Owner` among a file's definitions of COMMON names (rule
# 2). No reference is named so: a reader that predates these keys finds no name there.
OWNED = "\0"


class Graph(NamedTuple):
    """Chunk-level reference graph in CSR form: node i is chunk `ids[i]`."""

    ids: list[int]  # sorted ascending
    indptr: list[int]  # out-edges of node i: indices[indptr[i]:indptr[i+1]]
    indices: list[int]  # target node indexes, sorted within a row
    weights: list[float]  # float32-exact, so a round trip through to_dict is lossless

    def to_dict(self) -> dict[str, Any]:
        """Compact and msgpack-friendly: little-endian arrays as byte views (`graph.msgpack`'s map)."""
        return csr_dict(Csr(
            np.asarray(self.ids, dtype=np.uint64), np.asarray(self.indptr, dtype=np.int64),
            np.asarray(self.indices, dtype=np.int64), np.asarray(self.weights, dtype=np.float32),
        ))  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Graph:
        """`to_dict`'s map, checked (ValueError if it is not a graph)."""
        c = csr_from_dict(d)
        return cls(c.ids.tolist(), c.indptr.tolist(), c.indices.tolist(), c.weights.tolist())


class FileLinks(NamedTuple):
    """One file's side of resolution, computed once from its chunks and stored with the file."""

    # name -> ids of the (first parts of the) symbols defining it, sorted; `OWNED` + owner -> those
    # of its members that define a COMMON name
    defs: dict[str, list[int]]
    refs: Mapping[int, list[str]]  # chunk id -> names it uses (stored: `ref_words.LazyRefs`)
    skip: dict[int, list[int]]  # chunk id -> its own head and ancestors, never its targets
    imports: list[str]
    namespaces: list[str]  # C# namespaces declared (files in them see each other)


def file_links(chunks: list[Chunk], frefs: FileRefs) -> FileLinks:
    """A symbol split into parts is one definition: its names point at its first part (head)."""
    from cora_ci.graph.extract import defined_names, owner

    heads: dict[str, int] = {}
    head: dict[int, int] = {}
    names: dict[str, set[int]] = {}
    for c in sorted(chunks, key=lambda c: (c.start_line, c.id)):
        key = "\0".join(c.anchors) if c.anchors else str(c.id)
        head[c.id] = heads.setdefault(key, c.id)
        of = owner(c.anchor)
        for n in defined_names(c):
            names.setdefault(n, set()).add(head[c.id])
            if of is not None and n in COMMON:
                names.setdefault(OWNED + of, set()).add(head[c.id])
    parents = {c.id: c.parent for c in chunks}
    refs = {cid: sorted(set(ns)) for cid, ns in frefs.refs.items() if cid in parents and ns}
    skip = {cid: sorted(_ancestors(cid, parents) | {cid, head[cid]}) for cid in refs}
    return FileLinks(
        defs={n: sorted(ids) for n, ids in sorted(names.items())},
        refs=dict(sorted(refs.items())),
        skip=skip,
        imports=list(frefs.imports),
        namespaces=namespaces(chunks),
    )


def name_hash(name: str) -> int:
    """32-bit hash of a name, for the per-file name filters (a false match only costs a lookup)."""
    return zlib.crc32(name.encode())


def hashes(names: Iterable[str]) -> bytes:
    """Sorted unique `name_hash`es as little-endian u32 bytes."""
    return sorted_unique(np.asarray([name_hash(n) for n in names], dtype="<u4")).astype("<u4").tobytes()


class NameFilter:
    """Which files may hold a name, from each file's `hashes(...)`: all files' hashes in one array.
    The first lookups scan it (an update asks about a few names: no sort of every file's hashes,
    ~0.4 s at 30k files); once more are asked (a full build), it is sorted and searched."""

    _SCANS = 32  # lookups answered by a scan before the array is sorted

    def __init__(self, hashes_by_path: Mapping[str, bytes]) -> None:
        self._paths = sorted(hashes_by_path)
        blobs = [hashes_by_path[p] for p in self._paths]
        self._owner = np.repeat(np.arange(len(self._paths)), [len(b) // 4 for b in blobs])
        self._hash = np.frombuffer(b"".join(blobs), dtype="<u4")
        self._sorted = False
        self._scans = 0

    def paths_with(self, names: Iterable[str]) -> list[str]:
        """Sorted paths whose hashes hold one of `names`: a superset of the files holding them."""
        wanted = sorted({name_hash(n) for n in names})
        if not wanted:
            return []
        if not self._sorted and self._scans < self._SCANS:
            self._scans += 1
            hit = isin(self._hash, np.asarray(wanted, dtype="<u4"))
            return sorted(self._paths[i] for i in set(self._owner[hit].tolist()))
        if not self._sorted:
            order = np.argsort(self._hash, kind="stable")
            self._hash, self._owner, self._sorted = self._hash[order], self._owner[order], True
        found: set[int] = set()
        for h in wanted:
            lo, hi = np.searchsorted(self._hash, [h, h + 1])
            found.update(self._owner[lo:hi].tolist())
        return sorted(self._paths[i] for i in found)


class Linker:
    """Resolves files' references against every file of one tree.

    `links_of(path)` gives any file's `FileLinks` (fresh, or decoded from the previous bundle on
    demand); `def_hashes` are each file's `hashes(defs)`, the index for rule 3: only files whose
    hashes hold a name's are asked whether they define it.
    """

    def __init__(self, langs: Mapping[str, str], spaces: Mapping[str, list[str]],
                 links_of: Callable[[str], FileLinks], def_hashes: Mapping[str, bytes]) -> None:  # fmt: skip
        self.repo = Repo(langs, spaces)
        self._links_of = links_of
        self._defs = NameFilter(def_hashes)
        self._anywhere: dict[str, list[int]] = {}  # name -> up to two chunks defining it
        self._owned: dict[str, dict[int, list[str]]] = {}  # path -> `_owners(path)`

    def edges(self, path: str) -> Edges:
        """Out-edges of the chunks of `path` (see the module docstring for the rules)."""
        links = self._links_of(path)
        imported = self.repo.imported_files(path, links.imports)
        edges: dict[tuple[int, int], float] = {}
        for cid, names in links.refs.items():
            skip = set(links.skip[cid])
            for name in names:
                targets = self._resolve(path, name, links, imported, skip, names)
                for t in targets:
                    edges[(cid, t)] = edges.get((cid, t), 0.0) + 1.0 / len(targets)
        return [(a, b, w) for (a, b), w in sorted(edges.items())]

    def _resolve(self, path: str, name: str, links: FileLinks, imported: list[str], skip: set[int],
                 named: list[str]) -> list[int]:  # fmt: skip
        same = [t for t in links.defs.get(name, []) if t not in skip]
        if same and name in COMMON:  # a member only from inside its owner or naming it
            same = self._meant(path, same, lambda o: _owned_here(o, links, skip, named))
        if same:
            return same
        via = sorted({t for f in imported for t in self._imported_defs(f, name, named)} - skip)
        if via:
            return via
        if name in COMMON:
            return []
        anywhere = self.anywhere(name)
        return anywhere if len(anywhere) == 1 and anywhere[0] not in skip else []

    def _meant(self, path: str, got: list[int], owned: Callable[[str], bool]) -> list[int]:
        """Of a COMMON name's definitions `got` in `path`, those a referring chunk may mean: what is
        no member, and a member only where `owned(its owner)`."""
        of = self._owners(path)
        return [t for t in got if t not in of or any(owned(o) for o in of[t])]

    def _imported_defs(self, path: str, name: str, named: list[str]) -> list[int]:
        """The definitions of `name` in a file another imports: of a COMMON name, a member's only
        where its owner is among the names the referring chunk uses (`named`, sorted)."""
        got = self._links_of(path).defs.get(name, [])
        if not got or name not in COMMON:
            return got
        return self._meant(path, got, partial(_has, named))

    def _owners(self, path: str) -> dict[int, list[str]]:
        """The owners of each member of `path` that defines a COMMON name (read once a build)."""
        got = self._owned.get(path)
        if got is None:
            got = {}
            for key, ids in self._links_of(path).defs.items():
                if key.startswith(OWNED):
                    for t in ids:
                        got.setdefault(t, []).append(key[len(OWNED) :])
            self._owned[path] = got
        return got

    def anywhere(self, name: str) -> list[int]:
        """The chunks of the tree defining `name`, in path order, up to the second: rule 3 needs to
        know only whether there is exactly one, and an update then reads the links of two files
        defining a common name, not of every file defining it."""
        if name not in self._anywhere:
            found: list[int] = []
            for p in self._defs.paths_with([name]):
                found += self._links_of(p).defs.get(name, [])
                if len(found) > 1:
                    break
            self._anywhere[name] = found[:2]
        return self._anywhere[name]


def changed_names(old: Mapping[str, FileLinks], new: Mapping[str, FileLinks]) -> set[str]:
    """Names whose definitions differ between two versions of some files (absent = no file)."""
    out: set[str] = set()
    for path in old.keys() | new.keys():
        a = old[path].defs if path in old else {}
        b = new[path].defs if path in new else {}
        # owner keys aside: a member's owner is part of its anchor, so a new owner is a new id under its name
        out.update(n for n in names_of(a.keys() | b.keys()) if a.get(n) != b.get(n))
    return out


def names_of(keys: Iterable[str]) -> Iterator[str]:
    """The names among a file's `defs` keys, its `OWNED` keys aside: what its name filter hashes."""
    return (k for k in keys if not k.startswith(OWNED))


def _owned_here(owner: str, links: FileLinks, skip: set[int], named: list[str]) -> bool:
    """Whether a chunk (its ancestors among `skip`, the names it uses `named`) may mean a member of
    `owner` by a common name: it lies inside `owner` or names it. A subclass inherits too, but its
    own chunk does not tell its bases from the types its members' signatures name."""
    return _has(named, owner) or not skip.isdisjoint(links.defs.get(owner, ()))


def _has(names: list[str], name: str) -> bool:
    """Whether the sorted `names` hold `name`."""
    i = bisect.bisect_left(names, name)
    return i < len(names) and names[i] == name


def graph_from_edges(ids: npt.NDArray[np.uint64], src: Any, dst: Any, w: Any) -> Graph:
    """The CSR graph over `ids` (any order) from edge arrays of chunk ids."""
    c = csr_from_edges(ids, src, dst, w)
    return Graph(c.ids.tolist(), c.indptr.tolist(), c.indices.tolist(), c.weights.tolist())


def build_graph(files: Mapping[str, tuple[list[Chunk], FileRefs]]) -> Graph:
    """The reference graph of a whole tree, resolved from scratch (see the module docstring)."""
    links = {p: file_links(cs, r) for p, (cs, r) in files.items()}
    linker = Linker(
        {p: _lang(cs) for p, (cs, _) in files.items()},
        {p: lk.namespaces for p, lk in links.items()},
        links.__getitem__,
        {p: hashes(lk.defs) for p, lk in links.items()},
    )
    edges = [e for p in sorted(files) for e in linker.edges(p)]
    ids = np.asarray([c.id for cs, _ in files.values() for c in cs], dtype=np.uint64)
    return graph_from_edges(ids, [a for a, _, _ in edges], [b for _, b, _ in edges], [w for _, _, w in edges])


def _lang(chunks: list[Chunk]) -> str:
    return chunks[0].lang if chunks else ""


def _ancestors(cid: int, parents: Mapping[int, int | None]) -> set[int]:
    out: set[int] = set()
    p = parents.get(cid)
    while p is not None and p not in out:
        out.add(p)
        p = parents.get(p)
    return out
