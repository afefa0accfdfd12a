"""Resolution of every file's references into one weighted, directed graph over chunks (CSR).

`build_graph` is a pure function of all files' chunks and `FileRefs`, iterated in sorted order,
so a full build and an incremental one (stored `FileRefs` for unchanged files, fresh ones for
changed files) give the same bytes.

Edges and weights. Only *reference* edges, from the referencing chunk to the defining chunk. A
name N used in chunk C of file F resolves to the first non-empty of:

1. chunks of F that define N, except C's own ancestors (a method naming its class gains nothing:
   the manifest already links parent and child, and the assembled answer shows the parent anyway);
2. chunks of the files F imports (or sees implicitly: Go/Java package, C# namespace) defining N;
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

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from cora_ci.chunking.model import Chunk
from cora_ci.graph.extract import FileRefs, defined_names
from cora_ci.graph.resolve import Repo

FORMAT = 1
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


class Graph(NamedTuple):
    """Chunk-level reference graph in CSR form: node i is chunk `ids[i]`."""

    ids: list[int]  # sorted ascending
    indptr: list[int]  # out-edges of node i: indices[indptr[i]:indptr[i+1]]
    indices: list[int]  # target node indexes, sorted within a row
    weights: list[float]  # float32-exact, so a round trip through to_dict is lossless

    def to_dict(self) -> dict[str, Any]:
        """Compact and msgpack-friendly: little-endian arrays as raw bytes."""
        return {
            "format": FORMAT,
            "ids": np.asarray(self.ids, dtype="<u8").tobytes(),
            "indptr": np.asarray(self.indptr, dtype="<u4").tobytes(),
            "indices": np.asarray(self.indices, dtype="<u4").tobytes(),
            "weights": np.asarray(self.weights, dtype="<f4").tobytes(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Graph:
        if d.get("format") != FORMAT:
            raise ValueError(f"unsupported graph format {d.get('format')!r}")
        return cls(
            ids=np.frombuffer(d["ids"], dtype="<u8").tolist(),
            indptr=np.frombuffer(d["indptr"], dtype="<u4").tolist(),
            indices=np.frombuffer(d["indices"], dtype="<u4").tolist(),
            weights=np.frombuffer(d["weights"], dtype="<f4").tolist(),
        )


class _Defs:
    """Who defines which name: per file and repository-wide, by each symbol's first chunk."""

    def __init__(self, files: Mapping[str, list[Chunk]]) -> None:
        self.by_file: dict[str, dict[str, list[int]]] = {}
        self.anywhere: dict[str, list[int]] = {}
        self.head: dict[int, int] = {}  # chunk id -> id of the first part of its symbol
        for path in sorted(files):
            heads: dict[str, int] = {}
            names: dict[str, set[int]] = {}
            for c in sorted(files[path], key=lambda c: (c.start_line, c.id)):
                key = "\0".join(c.anchors) if c.anchors else str(c.id)
                head = heads.setdefault(key, c.id)
                self.head[c.id] = head
                for n in defined_names(c):
                    names.setdefault(n, set()).add(head)
            self.by_file[path] = {n: sorted(ids) for n, ids in names.items()}
            for n, ids in self.by_file[path].items():
                self.anywhere.setdefault(n, []).extend(ids)


def build_graph(files: Mapping[str, tuple[list[Chunk], FileRefs]]) -> Graph:
    """The reference graph of a whole repository (see the module docstring for the rules)."""
    chunks = {p: files[p][0] for p in sorted(files)}
    defs = _Defs(chunks)
    repo = Repo({p: _lang(cs) for p, cs in chunks.items()}, chunks)
    ids = sorted({c.id for cs in chunks.values() for c in cs})
    node = {cid: i for i, cid in enumerate(ids)}
    edges: dict[tuple[int, int], float] = {}
    for path in sorted(files):
        fchunks, frefs = files[path]
        imported = repo.imported_files(path, list(frefs.imports))
        parents = {c.id: c.parent for c in fchunks}
        for cid in sorted(frefs.refs):
            if cid not in node:
                continue
            skip = _ancestors(cid, parents) | {cid, defs.head.get(cid, cid)}
            for name in sorted(set(frefs.refs[cid])):
                targets = _resolve(name, path, imported, skip, defs)
                for t in targets:
                    key = (node[cid], node[t])
                    edges[key] = edges.get(key, 0.0) + 1.0 / len(targets)
    return _csr(ids, edges)


def _lang(chunks: list[Chunk]) -> str:
    return chunks[0].lang if chunks else ""


def _ancestors(cid: int, parents: Mapping[int, int | None]) -> set[int]:
    out: set[int] = set()
    p = parents.get(cid)
    while p is not None and p not in out:
        out.add(p)
        p = parents.get(p)
    return out


def _resolve(name: str, path: str, imported: list[str], skip: set[int], defs: _Defs) -> list[int]:
    same = [t for t in defs.by_file.get(path, {}).get(name, []) if t not in skip]
    if same:
        return same
    via_imports = sorted({t for f in imported for t in defs.by_file.get(f, {}).get(name, [])} - skip)
    if via_imports:
        return via_imports
    anywhere = defs.anywhere.get(name, [])
    if len(anywhere) == 1 and name not in COMMON and anywhere[0] not in skip:
        return anywhere
    return []


def _csr(ids: list[int], edges: Mapping[tuple[int, int], float]) -> Graph:
    indptr = [0] * (len(ids) + 1)
    for src, _ in edges:
        indptr[src + 1] += 1
    for i in range(len(ids)):
        indptr[i + 1] += indptr[i]
    pairs = sorted(edges)
    weights = np.asarray([edges[p] for p in pairs], dtype=np.float32).tolist()
    return Graph(ids=ids, indptr=indptr, indices=[dst for _, dst in pairs], weights=weights)
