"""The manifest: everything about a bundle that is not the two search indexes, as one msgpack map.

It is a table of files (one list per column, sorted by path). Each file row carries its chunks as
one zlib-compressed msgpack blob (`data`: a column table of the file's chunks, their texts and the
file's graph links), plus the few things an update or a query needs for every file without
decompressing it: chunk ids, the hashes of the embedded texts, name filters and resolved graph
edges as little-endian arrays. An update copies the rows of unchanged files as they are, so its
cost follows the change; showing a few chunks decompresses a few files. Fields that can be
derived are left out: a chunk's path, language and strategy come from its file, its children from
the other chunks' parents, `symbol` and `anchor` are the first of `symbols` and `anchors`. Key
order is fixed, so the same content packs to the same bytes.
"""

from __future__ import annotations

import bisect
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import msgpack
import numpy as np
import numpy.typing as npt

from cora_ci.chunking.model import Chunk, Diagnostic
from cora_ci.graph.build import FileLinks

FORMAT = "cora-bundle"
FORMAT_VERSION = (2, 0)  # major: readers refuse a newer one; minor: additions old readers may ignore
MANIFEST = "manifest.msgpack"
MANIFEST_SUM = "manifest.sha256"  # `sha256sum -c manifest.sha256` checks the manifest from a shell
VECTORS = "vectors.usearch"
BM25 = "bm25"

# Per file: `ids` u64 chunk ids, `keys` 16-byte text hashes (empty without a model), `defs_h` and
# `refs_h` u32 hashes of the names it defines and uses, `edges` its chunks' resolved out-edges.
FILE_COLUMNS = (
    "path", "blob", "size", "lang", "strategy", "diagnostics", "imports", "namespaces",
    "ids", "keys", "defs_h", "refs_h", "edges", "data",
)  # fmt: skip
# Columns of the per-file `data` blob, one entry per chunk.
CHUNK_COLUMNS = (
    "kind", "symbols", "anchors", "hierarchy", "parent", "start_line", "end_line", "tokens",
    "header", "diagnostics", "elided", "text",
)  # fmt: skip
KEY_BYTES = 16
_ZLIB_LEVEL = 6


@dataclass
class FileEntry:
    """One source file as a build sees it; `strategy` None means skipped (binary, too large)."""

    path: str
    blob: str
    lang: str
    strategy: str | None
    diagnostics: list[Diagnostic]
    imports: list[str]
    chunks: list[Chunk]
    refs: dict[int, list[str]] = field(default_factory=dict)
    size: int = 0  # bytes of the source file


def _diags(ds: list[Diagnostic]) -> list[list[Any]]:
    return [[d.code, d.message, d.line] for d in ds]


def _undiags(rows: list[list[Any]]) -> list[Diagnostic]:
    return [Diagnostic(c, m, ln) for c, m, ln in rows]


def pack_blob(value: Any) -> bytes:
    """A compressed msgpack value nested in the manifest: one file's chunks."""
    return zlib.compress(msgpack.packb(value, use_bin_type=True), _ZLIB_LEVEL)


def unpack_blob(blob: bytes) -> Any:
    return msgpack.unpackb(zlib.decompress(blob), raw=False, strict_map_key=False)


_HEAVY = frozenset({"text", "header", "elided", "hierarchy", "tokens"})


def unpack_meta(blob: bytes) -> dict[str, list[Any]]:
    """A file blob's chunk columns without the heavy ones (`_HEAVY`: texts and what only rendering
    needs), skipped by the decoder without being built: ranking reads these from many files."""
    u = msgpack.Unpacker(raw=False, strict_map_key=False)
    u.feed(zlib.decompress(blob))
    out: dict[str, list[Any]] = {}
    for _ in range(u.read_map_header()):
        if u.unpack() != "chunks":
            u.skip()
            continue
        for _ in range(u.read_map_header()):
            name = u.unpack()
            if name in _HEAVY:
                u.skip()
            else:
                out[name] = u.unpack()
    return out


def file_row(f: FileEntry, links: FileLinks, keys: bytes, defs_h: bytes, refs_h: bytes,
             edges: bytes) -> dict[str, Any]:  # fmt: skip
    """The manifest row of a freshly chunked file."""
    cols: dict[str, list[Any]] = {
        "kind": [c.kind for c in f.chunks],
        "symbols": [c.symbols for c in f.chunks],
        "anchors": [c.anchors for c in f.chunks],
        "hierarchy": [c.hierarchy for c in f.chunks],
        "parent": [c.parent for c in f.chunks],
        "start_line": [c.start_line for c in f.chunks],
        "end_line": [c.end_line for c in f.chunks],
        "tokens": [c.tokens for c in f.chunks],
        "header": [c.header for c in f.chunks],
        "diagnostics": [_diags(c.diagnostics) for c in f.chunks],
        "elided": [[list(r) for r in c.elided] for c in f.chunks],
        "text": [c.text for c in f.chunks],
    }
    pos = {c.id: i for i, c in enumerate(f.chunks)}  # links by position: small ints pack small
    stored_links = [
        {n: [pos[t] for t in ts] for n, ts in links.defs.items()},
        [links.refs.get(c.id, []) for c in f.chunks],
        [[pos[t] for t in links.skip.get(c.id, [])] for c in f.chunks],
    ]
    data = {"chunks": cols, "links": stored_links}
    return {
        "path": f.path, "blob": f.blob, "size": f.size, "lang": f.lang, "strategy": f.strategy,
        "diagnostics": _diags(f.diagnostics), "imports": links.imports, "namespaces": links.namespaces,
        "ids": np.asarray([c.id for c in f.chunks], dtype="<u8").tobytes(), "keys": keys,
        "defs_h": defs_h, "refs_h": refs_h, "edges": edges, "data": pack_blob(data),
    }  # fmt: skip


def table(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The file table (columns) of rows, sorted by path."""
    rows = sorted(rows, key=lambda r: r["path"])
    return {k: [r[k] for r in rows] for k in FILE_COLUMNS}


def rows(files: dict[str, list[Any]]) -> dict[str, dict[str, Any]]:
    """The rows of a file table, by path."""
    return {p: {k: files[k][i] for k in FILE_COLUMNS} for i, p in enumerate(files["path"])}


def links_of_row(row: dict[str, Any]) -> FileLinks:
    """The graph links a row stores (see `file_row`), with chunk ids again."""
    defs, refs, skip = unpack_blob(row["data"])["links"]
    ids = ids_of(row["ids"]).tolist()
    return FileLinks(
        defs={n: [ids[i] for i in ps] for n, ps in defs.items()},
        refs={ids[i]: names for i, names in enumerate(refs) if names},
        skip={ids[i]: [ids[j] for j in ps] for i, ps in enumerate(skip) if refs[i]},
        imports=row["imports"],
        namespaces=row["namespaces"],
    )


def pack(manifest: dict[str, Any]) -> bytes:
    data: bytes = msgpack.packb(manifest, use_bin_type=True)
    return data


def unpack(data: bytes) -> dict[str, Any]:
    m = msgpack.unpackb(data, raw=False, strict_map_key=False)
    if not isinstance(m, dict):
        raise ValueError("manifest is not a map")
    return m


def parse_version(v: Any) -> tuple[int, int]:
    major, minor = str(v).split(".")
    return int(major), int(minor)


def ids_of(row_ids: bytes) -> npt.NDArray[np.uint64]:
    return np.frombuffer(row_ids, dtype="<u8").astype(np.uint64)


class ChunkTable:
    """Chunks of a loaded manifest, in file order then chunk order, rebuilt as `Chunk` records on
    demand: a file's blob is decompressed when one of its chunks is first asked for."""

    def __init__(self, manifest: dict[str, Any]) -> None:
        self._f = manifest["files"]
        counts = [len(b) // 8 for b in self._f["ids"]]
        self._starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64).tolist()
        flat = b"".join(self._f["ids"])
        self.id_array: npt.NDArray[np.uint64] = np.frombuffer(flat, dtype="<u8").astype(np.uint64)
        self.ids: list[int] = self.id_array.tolist()
        self.row_of = {cid: i for i, cid in enumerate(self.ids)}
        self._data = lru_cache(maxsize=256)(self._decode)
        self._chunks = lru_cache(maxsize=256)(self._build)
        self.meta_columns = lru_cache(maxsize=4096)(self._meta_columns)

    def __len__(self) -> int:
        return len(self.ids)

    def file_of(self, row: int) -> int:
        """Index in the file table of the file holding chunk `row`."""
        return bisect.bisect_right(self._starts, row) - 1

    def file_path(self, fi: int) -> str:
        path: str = self._f["path"][fi]
        return path

    def file_lang(self, fi: int) -> str:
        lang: str = self._f["lang"][fi]
        return lang

    def file_index(self, path: str) -> int | None:
        """Index in the file table of `path` (sorted by path), or None."""
        paths = self._f["path"]
        fi = bisect.bisect_left(paths, path)
        return fi if fi < len(paths) and paths[fi] == path else None

    def file_rows(self, fi: int) -> range:
        """Rows of the chunks of the file at index `fi`: contiguous, in chunk order."""
        return range(self._starts[fi], self._starts[fi + 1])

    def _decode(self, fi: int) -> dict[str, Any]:
        data: dict[str, Any] = unpack_blob(self._f["data"][fi])["chunks"]
        return data

    def _meta_columns(self, fi: int) -> dict[str, list[Any]]:
        """The light chunk columns of file `fi` (no text, header, hierarchy, elided, tokens)."""
        return unpack_meta(self._f["data"][fi])

    def text(self, row: int) -> str:
        fi = self.file_of(row)
        text: str = self._data(fi)["text"][row - self._starts[fi]]
        return text

    def chunk(self, row: int) -> Chunk:
        fi = self.file_of(row)
        chunk: Chunk = self._chunks(fi)[row - self._starts[fi]]
        return chunk

    def file_chunks(self, fi: int) -> list[Chunk]:
        """Every chunk of the file at index `fi` of the file table (built once, then cached)."""
        return list(self._chunks(fi))

    def _build(self, fi: int) -> tuple[Chunk, ...]:
        c, f = self._data(fi), self._f
        ids = self.ids[self._starts[fi] : self._starts[fi + 1]]
        children: dict[int, list[int]] = {}
        for cid, parent in zip(ids, c["parent"], strict=True):
            if parent is not None:
                children.setdefault(parent, []).append(cid)
        return tuple(
            Chunk(
                id=cid,
                path=f["path"][fi],
                lang=f["lang"][fi],
                kind=c["kind"][i],
                symbol=(c["symbols"][i] or [""])[0],
                symbols=c["symbols"][i],
                anchor=(c["anchors"][i] or [None])[0],
                anchors=c["anchors"][i],
                hierarchy=c["hierarchy"][i],
                parent=c["parent"][i],
                children=children.get(cid, []),
                start_line=c["start_line"][i],
                end_line=c["end_line"][i],
                tokens=c["tokens"][i],
                header=c["header"][i],
                text=c["text"][i],
                strategy=f["strategy"][fi],
                diagnostics=_undiags(c["diagnostics"][i]),
                elided=[(a, b) for a, b in c["elided"][i]],
            )
            for i, cid in enumerate(ids)
        )

    def column(self, name: str) -> list[Any]:
        """One chunk column (see CHUNK_COLUMNS) over the whole table: decompresses every file."""
        return [v for fi in range(len(self._f["path"])) for v in self._data(fi)[name]]
