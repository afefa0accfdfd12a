"""The manifest: everything about a bundle that is not the two search indexes, as one msgpack map.

Chunks are stored as columns (one list per field), packed and zlib-compressed as one blob: anchors,
headers and hierarchies repeat paths and names, so this is 5-10x smaller and still loads in
milliseconds. Chunk texts are compressed per file, so showing a few chunks decompresses a few files.
Fields that can be derived are left out: a chunk's path, language and strategy come from its file,
its children from the other chunks' parents, `symbol` and `anchor` are the first of `symbols` and
`anchors`. Key order is fixed, so the same content packs to the same bytes.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import msgpack

from cora_ci.chunking.model import Chunk, Diagnostic

FORMAT = "cora-bundle"
FORMAT_VERSION = (1, 0)  # major: readers refuse a newer one; minor: additions old readers may ignore
MANIFEST = "manifest.msgpack"
MANIFEST_SUM = "manifest.sha256"  # `sha256sum -c manifest.sha256` checks the manifest from a shell
VECTORS = "vectors.usearch"
BM25 = "bm25"

CHUNK_COLUMNS = (
    "id", "file", "kind", "symbols", "anchors", "hierarchy", "parent",
    "start_line", "end_line", "tokens", "header", "diagnostics", "elided", "refs",
)  # fmt: skip
FILE_COLUMNS = ("path", "blob", "size", "lang", "strategy", "diagnostics", "imports", "texts")
_ZLIB_LEVEL = 6


@dataclass
class FileEntry:
    """One source file as the bundle records it; `strategy` None means skipped (binary, too large)."""

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
    """A compressed msgpack value nested in the manifest: a file's chunk texts, the chunk table."""
    return zlib.compress(msgpack.packb(value, use_bin_type=True), _ZLIB_LEVEL)


def unpack_blob(blob: bytes) -> Any:
    return msgpack.unpackb(zlib.decompress(blob), raw=False, strict_map_key=False)


def tables(files: list[FileEntry]) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """Column tables of files (sorted by path) and of their chunks (in file order, then chunk order)."""
    fcols: dict[str, list[Any]] = {k: [] for k in FILE_COLUMNS}
    ccols: dict[str, list[Any]] = {k: [] for k in CHUNK_COLUMNS}
    for fi, f in enumerate(sorted(files, key=lambda f: f.path)):
        fcols["path"].append(f.path)
        fcols["blob"].append(f.blob)
        fcols["size"].append(f.size)
        fcols["lang"].append(f.lang)
        fcols["strategy"].append(f.strategy)
        fcols["diagnostics"].append(_diags(f.diagnostics))
        fcols["imports"].append(f.imports)
        fcols["texts"].append(pack_blob([c.text for c in f.chunks]))
        for c in f.chunks:
            row = {
                "id": c.id, "file": fi, "kind": c.kind, "symbols": c.symbols,
                "anchors": c.anchors, "hierarchy": c.hierarchy, "parent": c.parent,
                "start_line": c.start_line, "end_line": c.end_line, "tokens": c.tokens, "header": c.header,
                "diagnostics": _diags(c.diagnostics), "elided": [list(r) for r in c.elided],
                "refs": f.refs.get(c.id, []),
            }  # fmt: skip
            for k in CHUNK_COLUMNS:
                ccols[k].append(row[k])
    return fcols, ccols


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


class ChunkTable:
    """Chunks of a loaded manifest, rebuilt as `Chunk` records on demand."""

    def __init__(self, manifest: dict[str, Any]) -> None:
        self._f = manifest["files"]
        self._c: dict[str, list[Any]] = unpack_blob(manifest["chunks"])
        self.ids: list[int] = self._c["id"]
        self.row_of = {cid: i for i, cid in enumerate(self.ids)}
        self._texts: dict[int, list[str]] = {}
        self._first_row: dict[int, int] = {}
        for i, fi in enumerate(self._c["file"]):
            self._first_row.setdefault(fi, i)
        self._children: dict[int, list[int]] = {}
        for cid, parent in zip(self.ids, self._c["parent"], strict=True):
            if parent is not None:
                self._children.setdefault(parent, []).append(cid)

    def column(self, name: str) -> list[Any]:
        """One column of the chunk table (see CHUNK_COLUMNS), in row order."""
        return self._c[name]

    def __len__(self) -> int:
        return len(self.ids)

    def text(self, row: int) -> str:
        fi = self._c["file"][row]
        if fi not in self._texts:
            self._texts[fi] = unpack_blob(self._f["texts"][fi])
        return self._texts[fi][row - self._first_row[fi]]

    def file_entries(self) -> list[FileEntry]:
        """Every file record with its chunks and references, as the build that wrote them had them."""
        f, c = self._f, self._c
        rows: dict[int, list[int]] = {}
        for row, fi in enumerate(c["file"]):
            rows.setdefault(fi, []).append(row)
        return [
            FileEntry(
                path=f["path"][fi],
                blob=f["blob"][fi],
                lang=f["lang"][fi],
                strategy=f["strategy"][fi],
                diagnostics=_undiags(f["diagnostics"][fi]),
                imports=f["imports"][fi],
                chunks=[self.chunk(r) for r in rows.get(fi, [])],
                refs={c["id"][r]: c["refs"][r] for r in rows.get(fi, []) if c["refs"][r]},
                size=f["size"][fi],
            )
            for fi in range(len(f["path"]))
        ]

    def chunk(self, row: int) -> Chunk:
        c, fi = self._c, self._c["file"][row]
        return Chunk(
            id=c["id"][row], path=self._f["path"][fi], lang=self._f["lang"][fi], kind=c["kind"][row],
            symbol=(c["symbols"][row] or [""])[0], symbols=c["symbols"][row],
            anchor=(c["anchors"][row] or [None])[0], anchors=c["anchors"][row],
            hierarchy=c["hierarchy"][row], parent=c["parent"][row],
            children=self._children.get(c["id"][row], []), start_line=c["start_line"][row],
            end_line=c["end_line"][row], tokens=c["tokens"][row], header=c["header"][row],
            text=self.text(row), strategy=self._f["strategy"][fi],
            diagnostics=_undiags(c["diagnostics"][row]), elided=[(a, b) for a, b in c["elided"][row]],
        )  # fmt: skip
