"""The manifest: everything about a bundle that is not the two search indexes, as msgpack maps.

It is a table of files (one list per column, sorted by path), split in two so that an update costs
what its change costs. The top manifest (`manifest.msgpack`) keeps what every run and every reader
needs for all files, cheaply: path, git blob id, size, language, strategy and chunk ids (the chunk
table's order), and what an update's graph stage asks of every file (C# namespaces, hashes of the
names a file defines and uses), plus the source, model, config, counts and the list of shards.
Each shard (`shards/NNN.msgpack`) holds the rest of the rows of the files of one bucket, the same
buckets as BM25 (`bucket_of`): diagnostics, imports (compressed together), the file's chunks as
one msgpack blob (`data`: a column table of the chunks and the file's graph links, compressed
with the shipped dictionary of `blobs.py`), and their texts (`texts`: code, headers,
hierarchies), compressed with their neighbours' in blocks (`blocks.py`). An update rewrites the
shards of the buckets it touches and hard-links the others; a reader loads a shard when it first
needs one of its files.
Fields that can be derived are left out: a chunk's path, language and strategy come from its file,
its children from the other chunks' parents, `symbol` and `anchor` are the first of `symbols` and
`anchors`. Key order is fixed, so the same content packs to the same bytes. This module is the
format and its packing; reading a bundle's rows and chunks lazily is `tables.py`'s.
"""

from __future__ import annotations

import zlib  # a path's bucket (crc32)
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgpack

from cora_ci.bundle import blobs, ref_words, schema
from cora_ci.bundle.blocks import BlockTexts, held, plain
from cora_ci.bundle.blocks import pack as pack_blocks
from cora_ci.chunking.model import Chunk, Diagnostic
from cora_ci.errors import CoraError

if TYPE_CHECKING:  # numpy where used: a hook's no-op reads the manifest and never a chunk id
    import numpy as np
    import numpy.typing as npt

    from cora_ci.graph.build import FileLinks

FORMAT = "cora-bundle"
# 7.0: 6.0 lived four commits of one session (vector ids, inline imports, graph ids), then changed;
# 8.0: a file blob's light chunk columns first, its texts apart (`file_row`); 9.0: texts in blocks;
# 10.0: file blobs compressed with a dictionary the package ships (`blobs.py`); 12.0: a chunk's
# references as places among its text's words (`ref_words.py`; 11.0 lived three commits of one
# session: the words sorted, not in the order they first occur)
FORMAT_VERSION = (12, 0)  # major: readers refuse a newer one; minor: additions old readers may ignore
MANIFEST = "manifest.msgpack"
MANIFEST_SUM = "manifest.sha256"  # `sha256sum -c manifest.sha256` checks the manifest from a shell
CODES = "vectors.codes"  # the vectors' codes, as bit planes (5.0: no HNSW beside them; 6.0: 2 bits, rotated)
BM25 = "bm25"
SHARDS = "shards"
GRAPH = "graph.msgpack"  # the reference graph as CSR arrays (3.1), the only record of its edges (6.0)

# Per file: `ids` u64 chunk ids, `defs_h` and `refs_h` u32 hashes of the names it defines and
# uses. The top manifest's file table: what the no-op check, summaries and the chunk table's
# order need for every file, and what an update's graph stage needs for every file (namespaces,
# name filters). Format 5 also kept each file's resolved edges (the graph holds them) and 16-byte
# hashes of its chunks' embedded texts, so that a copied function anywhere reused its vector: an
# update now works out those of the files it replaces (6-7% of a bundle, bench/RESULTS.md).
TOP_COLUMNS = (
    "path", "blob", "size", "lang", "strategy", "ids", "namespaces", "defs_h", "refs_h",
)  # fmt: skip
# A shard's file table: the rest of each row (`path` again, so a shard says which files it holds).
SHARD_COLUMNS = ("path", "diagnostics", "imports", "data", "texts")
FILE_COLUMNS = (*TOP_COLUMNS, *SHARD_COLUMNS[1:])  # a whole row, as a build handles it
# Not a column: the names each chunk of a freshly chunked file uses, held by the build that chunked
# it (a zstd-1 frame) and never written, so that linking reads them without decoding the places
# the row stores (`ref_words`: ~10 us a chunk).
HELD_NAMES = "names_used"
# Buckets of 2,048-4,096 chunks. An update re-indexes every document of a bucket it touches, and
# every query and term look-up visits every segment (each repeats its own term dictionary): at 50k
# chunks 32 -> 16 segments took the in-process p50 5.96-6.28 -> 5.39-5.61 ms and BM25 8.1 -> 7.3
# MB, for ~0.03 s more a one-file update and ~0.16 s more a five-file one at 1,000 files (0.54 s,
# issue 4's target 1.0 s; 1,024 was chosen when that update took 0.84 s). bench/RESULTS.md,
# 2026-11-30. Beyond 128 segments queries slow down. Below `_ONE_BUCKET` chunks, one bucket: a
# second segment repeats most of the term dictionary (axum, 4,398 chunks: BM25 0.54 -> 0.49 MB,
# the bundle 1.01x -> 0.98x its source), and an update re-indexes at most that many chunks
# (axum's one-file update ~0.16 -> ~0.21 s in process; bench/RESULTS.md, 2026-12-02).
_BUCKET_CHUNKS = 2048
_ONE_BUCKET = 4 * _BUCKET_CHUNKS
_MAX_BUCKETS = 128
# Chunk columns, one entry per chunk: what ranking reads of many files (`chunks`, the light
# columns) and then the file's graph links make the per-file `data` blob (8.0), decoded only as
# far as a reader needs: a reader of the light columns leaves the links undecoded (a cold 50k-chunk
# query once spent a third of its time on them). The blob is decompressed whole since 10.0 (~5 us
# with the dictionary, where zlib's streaming inflate of its first ~2 KB took longer). What only a
# shown chunk needs (the `_HEAVY` columns) is the row's `texts`, kept in the shard's blocks (9.0).
CHUNK_COLUMNS = (
    "kind", "symbols", "anchors", "parent", "start_line", "end_line", "diagnostics",
    "hierarchy", "tokens", "header", "elided", "text",
)  # fmt: skip
_HEAVY = frozenset({"text", "header", "elided", "hierarchy", "tokens"})
_LIGHT = tuple(c for c in CHUNK_COLUMNS if c not in _HEAVY)


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


def undiags(rows: list[list[Any]]) -> list[Diagnostic]:
    return [Diagnostic(c, m, ln) for c, m, ln in rows]


def pack_blob(value: Any) -> bytes:
    """A compressed msgpack value nested in the manifest: one file's chunks."""
    return blobs.compress(msgpack.packb(value, use_bin_type=True))


def unpack_blob(blob: bytes) -> Any:
    """A value packed by `pack_blob`, inflated within `schema.MAX_BLOB_BYTES`; checked by the caller."""
    return schema.unpack_plain(blobs.decompress(blob))


def chunk_columns(blob: bytes, texts: bytes) -> dict[str, Any]:
    """All chunk columns of a file (`file_row`): the light ones of its blob and its texts,
    unchecked beyond being two maps of distinct columns (`schema.check_chunk_columns` checks the rest)."""
    data = unpack_blob(blob)
    schema.need(isinstance(data, dict), "expected a map")
    light, heavy = data.get("chunks"), schema.unpack_plain(plain(texts))
    schema.need(isinstance(light, dict) and isinstance(heavy, dict), "expected chunk columns and texts")
    schema.need(light.keys().isdisjoint(heavy), "a column both among the chunks and the texts")
    return {**light, **heavy}


def unpack_meta(blob: bytes, ids: list[int]) -> dict[str, list[Any]]:
    """A file blob's light chunk columns (no texts, nothing only rendering needs): ranking reads
    these from many files. They come first (8.0), so the links after them are not decoded.
    Checked against the file's chunk `ids` (ValueError if they do not fit)."""
    u = _unpacker(blob, use_list=False)
    out: Any = None
    for _ in range(u.read_map_header()):
        if u.unpack() == "chunks":
            out = u.unpack()
            break
        u.skip()
    return schema.check_chunk_columns(out, _LIGHT, ids)


def _unpacker(blob: bytes, use_list: bool = True) -> msgpack.Unpacker:
    """A decoder of a file blob (`pack_blob`) value by value, so that a reader decodes only what it
    needs; arrays as tuples unless `use_list`."""
    u = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=schema.MAX_BLOB_BYTES,
                         ext_hook=schema.no_ext, use_list=use_list)  # fmt: skip
    u.feed(blobs.decompress(blob))
    return u


def file_row(f: FileEntry, links: FileLinks, defs_h: bytes, refs_h: bytes) -> dict[str, Any]:
    """The manifest row of a freshly chunked file."""
    light: dict[str, list[Any]] = {
        "kind": [c.kind for c in f.chunks],
        "symbols": [c.symbols for c in f.chunks],
        "anchors": [c.anchors for c in f.chunks],
        "parent": [c.parent for c in f.chunks],
        "start_line": [c.start_line for c in f.chunks],
        "end_line": [c.end_line for c in f.chunks],
        "diagnostics": [_diags(c.diagnostics) for c in f.chunks],
    }
    heavy: dict[str, list[Any]] = {
        "hierarchy": [c.hierarchy for c in f.chunks],
        "tokens": [c.tokens for c in f.chunks],
        "header": [c.header for c in f.chunks],
        "elided": [[list(r) for r in c.elided] for c in f.chunks],
        "text": [c.text for c in f.chunks],
    }  # CHUNK_COLUMNS' order
    pos = {c.id: i for i, c in enumerate(f.chunks)}  # links by position: small ints pack small
    used = [links.refs.get(c.id, []) for c in f.chunks]
    stored_links = [
        {n: [pos[t] for t in ts] for n, ts in links.defs.items()},
        [ref_words.encode(names, c.text) for names, c in zip(used, f.chunks, strict=True)],
        [[pos[t] for t in links.skip.get(c.id, [])] for c in f.chunks],
    ]
    data = {"chunks": light, "links": stored_links}  # what is read most, first
    return {
        "path": f.path, "blob": f.blob, "size": f.size, "lang": f.lang, "strategy": f.strategy,
        "diagnostics": _diags(f.diagnostics), "imports": links.imports, "namespaces": links.namespaces,
        "ids": b"".join(c.id.to_bytes(8, "little") for c in f.chunks),
        "defs_h": defs_h, "refs_h": refs_h, "data": pack_blob(data),
        "texts": held(msgpack.packb(heavy, use_bin_type=True)),
        HELD_NAMES: held(msgpack.packb(used, use_bin_type=True)),
    }  # fmt: skip


def table(rows: list[dict[str, Any]], columns: tuple[str, ...] = FILE_COLUMNS) -> dict[str, list[Any]]:
    """The file table (columns) of rows, sorted by path."""
    rows = sorted(rows, key=lambda r: r["path"])
    return {k: [r[k] for r in rows] for k in columns}


def bucket_count(chunks: int) -> int:
    """Buckets for a bundle of `chunks` chunks: a power of two, so a repository that grows a little
    keeps its buckets (a change of count rewrites every shard and every BM25 segment)."""
    n = 1
    if chunks < _ONE_BUCKET:
        return n
    while n * 2 * _BUCKET_CHUNKS <= chunks and n < _MAX_BUCKETS:
        n *= 2
    return n


def bucket_of(path: str, buckets: int) -> int:
    """The bucket of a file: its BM25 segment and its manifest shard."""
    return zlib.crc32(path.encode()) % buckets


def shard_name(bucket: int) -> str:
    return f"{SHARDS}/{bucket:03d}.msgpack"


def pack_shard(
    bucket: int, buckets: int, rows: list[dict[str, Any]], reuse: Mapping[bytes, bytes] | None = None
) -> bytes:
    """One bucket's shard: the shard columns of its files' rows, sorted by path, the imports
    deflated apart (their dotted names repeat: a fifth of their bytes, 2% of a bundle, 7.0), the
    texts in blocks (`blocks.pack`; `reuse`: blocks already compressed, by their bytes) and each
    file's column of their sizes."""
    files = table(rows, SHARD_COLUMNS)
    imports = pack_blob(files.pop("imports"))
    texts = [plain(t) for t in files["texts"]]
    blocks, counts = pack_blocks(files["path"], texts, reuse or {})
    files["texts"] = [len(t) for t in texts]
    return pack({"bucket": bucket, "buckets": buckets, "files": files, "imports": imports,
                 "blocks": blocks, "block_files": counts})  # fmt: skip


def unpack_shard(data: bytes, bucket: int, buckets: int, paths: list[str],
                 seen: MutableMapping[bytes, bytes] | None = None) -> dict[str, Any]:  # fmt: skip
    """The file table of a shard, checked to be bucket `bucket` of `buckets` holding `paths`; its
    `texts` are read from the blocks as they are asked for (`BlockTexts`, noting them in `seen`)."""
    m = unpack(data)
    if (m.get("bucket"), m.get("buckets")) != (bucket, buckets):
        raise ValueError(
            f"shard of bucket {m.get('bucket')!r}/{m.get('buckets')!r}, expected {bucket}/{buckets}"
        )
    files, imports, blocks, counts = m.get("files"), m.get("imports"), m.get("blocks"), m.get("block_files")
    if not isinstance(files, dict) or not isinstance(imports, bytes):
        raise ValueError("no file table or no imports")
    f = schema.check_shard_files({**files, "imports": unpack_blob(imports)}, SHARD_COLUMNS, paths)
    blocks, counts = schema.check_blocks(blocks, counts)
    return {**f, "texts": BlockTexts(blocks, counts, f["texts"], seen)}


def links_of_row(row: dict[str, Any], texts: Callable[[], bytes] | None = None) -> FileLinks:
    """The graph links a row stores (see `file_row`), with chunk ids again; CORA-BND-004 if the
    row's blob does not hold them (a shard whose checksum is right but whose content is not). The
    names each chunk uses are decoded from the chunks' texts when first read (`ref_words`): those of
    the row, or of `texts()` for a row read without them."""
    from cora_ci.graph.build import FileLinks

    ids = ids_of(row["ids"]).tolist()
    try:
        u, value = _unpacker(row["data"]), None
        for _ in range(u.read_map_header()):  # after the light columns (8.0), before the texts
            if u.unpack() == "links":
                value = u.unpack()
                break
            u.skip()
        defs, refs, skip = schema.check_links(value, len(ids))
    except Exception as e:
        raise CoraError("CORA-BND-004", f"the shard row of {row['path']!r}: links unreadable: {e}") from None
    used: Mapping[int, list[str]]
    if HELD_NAMES in row:  # a build's freshly chunked file
        used = {ids[i]: n for i, n in enumerate(schema.unpack_plain(plain(row[HELD_NAMES]))) if n}
    else:
        read = texts or (lambda: row["texts"])
        used = ref_words.LazyRefs(row["path"], ids, refs, lambda: chunk_texts(read()))
    return FileLinks(
        defs={n: [ids[i] for i in ps] for n, ps in defs.items()},
        refs=used,
        skip={ids[i]: [ids[j] for j in ps] for i, ps in enumerate(skip) if refs[i]},
        imports=row["imports"],
        namespaces=row["namespaces"],
    )


def chunk_texts(texts: bytes) -> list[str]:
    """The code of each chunk of a file, from its row's `texts`, the other columns skipped
    undecoded (ValueError if they hold none)."""
    u = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=schema.MAX_BLOB_BYTES,
                         ext_hook=schema.no_ext)  # fmt: skip
    u.feed(plain(texts))
    code: Any = None
    try:
        for _ in range(u.read_map_header()):
            if u.unpack() == "text":
                code = u.unpack()
                break
            u.skip()
    except (msgpack.ExtraData, msgpack.OutOfData, msgpack.FormatError, msgpack.StackError) as e:
        raise ValueError(f"texts unreadable: {e}") from None
    schema.need(isinstance(code, list) and all(isinstance(t, str) for t in code), "no chunk texts")
    return code  # type: ignore[no-any-return]


def pack(manifest: dict[str, Any]) -> bytes:
    data: bytes = msgpack.packb(manifest, use_bin_type=True)
    return data


def unpack(data: bytes) -> dict[str, Any]:
    """A manifest or shard map, unchecked beyond being a map (see `schema` for the rest)."""
    m = schema.unpack_plain(data)
    if not isinstance(m, dict):
        raise ValueError("manifest is not a map")
    return m


def check(m: dict[str, Any]) -> None:
    """The top manifest's shape, for the current major format (ValueError naming what is wrong)."""
    schema.check_manifest(m, TOP_COLUMNS)


def parse_version(v: Any) -> tuple[int, int]:
    return schema.check_version(v)


def ids_of(row_ids: bytes) -> npt.NDArray[np.uint64]:
    import numpy as np

    return np.frombuffer(row_ids, dtype="<u8").astype(np.uint64)
