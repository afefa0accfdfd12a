"""Shape checks of what a bundle's msgpack files hold, right after unpacking.

A bundle may come from a fork's CI: its checksums are then consistent and its content is whatever
that CI chose. The checksums catch damage; these checks catch hostile or miswritten content, so
the code that reads a manifest, a shard or a file's chunk blob can trust types, column lengths,
offsets and names. Every check raises `ValueError` with what is wrong; the reader turns it into
CORA-BND-004 naming the file. Unknown keys are allowed (a newer minor format may add some).

Sizes are bounded before anything is unpacked (`MAX_*`): msgpack itself bounds every container
by the input's length and nests at most 1024 levels deep, and a compressed frame is refused
unless it says its size, at most `MAX_BLOB_BYTES` (`blocks.inflate`).
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Iterable
from typing import Any

import msgpack

from cora_ci.chunking.model import KINDS

MAX_MANIFEST_BYTES = 1 << 30  # a million files' rows fit well within
MAX_SHARD_BYTES = 1 << 30
MAX_BLOB_BYTES = 256 << 20  # one file's chunks, texts included, inflated
MAX_META_BYTES = 16 << 20  # bm25/meta.json
MAX_BUCKETS = 128
_HEX = re.compile(r"[0-9a-f]+")
_VERSION = re.compile(r"[0-9]{1,6}\.[0-9]{1,6}")
_PLAIN_DEPTH = 4


def need(ok: bool, what: str) -> None:
    """Raise ValueError(what) unless `ok`."""
    if not ok:
        raise ValueError(what)


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _count(v: Any, what: str) -> int:
    need(is_int(v) and v >= 0, f"{what}: expected a non-negative integer")
    return int(v)


def _str_list(v: Any, what: str) -> list[str]:
    need(isinstance(v, list) and all(isinstance(s, str) for s in v), f"{what}: expected a list of strings")
    return list(v)


def hex_str(v: Any, length: int) -> bool:
    return isinstance(v, str) and len(v) == length and _HEX.fullmatch(v) is not None


def safe_relpath(v: Any) -> bool:
    """A relative POSIX path that stays below its root: no `..`, no empty or `.` parts, no NUL."""
    if not isinstance(v, str) or not v or v.startswith("/") or "\0" in v or len(v) > 4096:
        return False
    return all(p not in ("", ".", "..") for p in v.split("/"))


def _plain(v: Any, what: str, depth: int = 0) -> None:
    """Scalars, or lists and string-keyed maps of them, nested at most `_PLAIN_DEPTH` deep."""
    if v is None or isinstance(v, (str, int, float, bool)):
        return
    need(depth < _PLAIN_DEPTH, f"{what}: nested too deep")
    if isinstance(v, list):
        for x in v:
            _plain(x, what, depth + 1)
    else:
        need(isinstance(v, dict) and all(isinstance(k, str) for k in v), f"{what}: unexpected value")
        for x in v.values():
            _plain(x, what, depth + 1)


def _map(v: Any, what: str, keys: tuple[str, ...]) -> dict[str, Any]:
    need(isinstance(v, dict), f"{what}: expected a map")
    missing = [k for k in keys if k not in v]
    need(not missing, f"{what}: missing {', '.join(missing)}")
    return dict(v)


def _columns(v: Any, what: str, names: tuple[str, ...], rows: int | None) -> dict[str, list[Any]]:
    """A column table: every column in `names` a list, all of one length (`rows` if given)."""
    t = _map(v, what, names)
    lengths = {len(t[k]) if isinstance(t[k], _SEQ) else -1 for k in names}
    need(-1 not in lengths, f"{what}: columns must be lists")
    need(len(lengths) <= 1, f"{what}: columns of different lengths")
    need(rows is None or lengths <= {rows}, f"{what}: {lengths} rows, expected {rows}")
    return t


def _each(col: list[Any], ok: Any, what: str) -> None:
    bad = next((i for i, x in enumerate(col) if not ok(x)), None)
    need(bad is None, f"{what}[{bad}]: unexpected value")


def _check(col: list[Any], column_ok: Any, ok: Any, what: str) -> None:
    """`_each`, first as a whole-column check in C loops (`column_ok`, as strict as `ok`: msgpack
    makes only exact types, so `type(v) is int` is `is_int`); `ok` then names the first bad value."""
    if not column_ok(col):
        _each(col, ok, what)


def _types(values: Iterable[Any]) -> set[type]:
    return set(map(type, values))


def _string_list(v: Any) -> bool:
    return isinstance(v, _SEQ) and all(isinstance(s, str) for s in v)


def _strings(col: list[Any]) -> bool:
    """Every value a list of strings."""
    return _types(col) <= _LIST and _types(itertools.chain.from_iterable(col)) <= _STR


def _counts(col: list[Any]) -> bool:
    return _types(col) <= _INT and min(col, default=0) >= 0


def _sized(col: list[Any], unit: int) -> bool:
    """Every value bytes of a multiple of `unit` bytes."""
    return _types(col) <= _BYTES and not any(len(b) % unit for b in col)


_INT, _STR, _BYTES = {int}, {str}, {bytes}
# Arrays decode as lists, or as tuples where a reader asks for them (`manifest.unpack_meta`: a
# tuple of strings is no object the garbage collector walks again); either passes the same checks.
_SEQ = (list, tuple)
_LIST = set(_SEQ)


def _diagnostic(d: Any) -> bool:
    return (isinstance(d, _SEQ) and len(d) == 3 and isinstance(d[0], str) and isinstance(d[1], str)
            and (d[2] is None or is_int(d[2])))  # fmt: skip


def _diagnostics(v: Any) -> bool:
    return isinstance(v, _SEQ) and all(_diagnostic(d) for d in v)


def check_version(v: Any) -> tuple[int, int]:
    need(isinstance(v, str) and _VERSION.fullmatch(v) is not None, "format_version: expected MAJOR.MINOR")
    major, minor = str(v).split(".")
    return int(major), int(minor)


_TOP_KEYS = ("tool_version", "built_at", "source", "model", "chunker", "stats", "files", "shards", "lexical",
             "artifacts")  # fmt: skip


def check_manifest(m: dict[str, Any], top_columns: tuple[str, ...]) -> None:
    """The top manifest of the current major format (see `manifest.py`)."""
    _map(m, "manifest", _TOP_KEYS)
    need(isinstance(m.get("tool_version"), str), "tool_version: expected a string")
    need(m.get("built_at") is None or is_int(m.get("built_at")), "built_at: expected an integer")
    src = _map(m.get("source"), "source", ("root", "kind", "commit", "tree", "dirty"))
    need(all(isinstance(src[k], str) for k in ("root", "kind")), "source: root and kind must be strings")
    need(all(src[k] is None or isinstance(src[k], str) for k in ("commit", "tree")), "source: bad commit")
    need(isinstance(src["dirty"], bool), "source.dirty: expected a boolean")
    _check_model(m.get("model"))
    chunker = _map(m.get("chunker"), "chunker", ("hash", "config"))
    need(
        isinstance(chunker["hash"], str) and isinstance(chunker["config"], dict),
        "chunker: bad hash or config",
    )
    _plain(chunker, "chunker")
    _str_list(m.get("boosts", []), "boosts")
    stats = _map(m.get("stats"), "stats", ("files", "skipped", "chunks", "source_bytes"))
    for k in ("files", "skipped", "chunks", "source_bytes"):
        _count(stats[k], f"stats.{k}")
    chunks = _check_files(m.get("files"), top_columns)
    need(stats["chunks"] == chunks, f"stats.chunks: {stats['chunks']}, the file table holds {chunks}")
    buckets = _check_shards(m.get("shards"))
    _check_lexical(m.get("lexical"), buckets, chunks)
    _check_artifacts(m.get("artifacts"))


def _check_model(model: Any) -> None:
    if model is None:
        return
    info = _map(model, "model", ("name", "dim", "model_sha256"))
    need(is_int(info["dim"]) and 1 <= info["dim"] <= 65536, "model.dim: expected 1..65536")
    need(isinstance(info["name"], str) and isinstance(info["model_sha256"], str), "model: bad name or sha256")
    _plain(info, "model")


def _check_files(v: Any, names: tuple[str, ...]) -> int:
    """The top file table; returns its number of chunks."""
    f = _columns(v, "files", names, None)
    paths = f["path"]
    _each(paths, safe_relpath, "files.path")
    need(all(a < b for a, b in itertools.pairwise(paths)), "files.path: not sorted and unique")
    _check(f["blob"], lambda c: _types(c) <= _STR and max(map(len, c), default=0) <= 128,
           lambda b: isinstance(b, str) and len(b) <= 128, "files.blob")  # fmt: skip
    _check(f["size"], _counts, lambda s: is_int(s) and s >= 0, "files.size")
    _check(f["lang"], lambda c: _types(c) <= _STR, lambda s: isinstance(s, str), "files.lang")
    _check(f["strategy"], lambda c: _types(c) <= {str, type(None)}, lambda s: s is None or isinstance(s, str),
           "files.strategy")  # fmt: skip
    _check(f["ids"], lambda c: _sized(c, 8), lambda b: isinstance(b, bytes) and len(b) % 8 == 0, "files.ids")
    _check(f["namespaces"], _strings, _string_list, "files.namespaces")
    for col in ("defs_h", "refs_h"):
        _check(
            f[col], lambda c: _sized(c, 4), lambda b: isinstance(b, bytes) and len(b) % 4 == 0, f"files.{col}"
        )
    import numpy as np

    # sorted and compared, not np.unique: its first call in a process costs ~20 ms at 50k chunks
    flat = np.sort(np.frombuffer(b"".join(f["ids"]), dtype="<u8"))
    need(not bool((flat[1:] == flat[:-1]).any()), "files.ids: chunk ids are not unique")
    return len(flat)


def _check_shards(v: Any) -> int:
    """The shard list (one name or None per bucket); returns the number of buckets."""
    need(isinstance(v, list) and 1 <= len(v) <= MAX_BUCKETS, f"shards: expected 1..{MAX_BUCKETS} buckets")
    need(len(v) & (len(v) - 1) == 0, "shards: the bucket count is not a power of two")
    for b, name in enumerate(v):
        need(name is None or name == f"shards/{b:03d}.msgpack", f"shards[{b}]: unexpected name {name!r}")
    return len(v)


def _check_lexical(v: Any, buckets: int, chunks: int) -> None:
    lex = _map(v, "lexical", ("buckets", "segments"))
    need(lex["buckets"] == buckets, f"lexical.buckets: {lex['buckets']!r}, the manifest has {buckets} shards")
    segs = lex["segments"]
    need(isinstance(segs, list) and len(segs) == buckets, "lexical.segments: one per bucket expected")
    ok = all(s is None or (isinstance(s, list) and len(s) == 2 and hex_str(s[0], 32) and is_int(s[1])
             and s[1] > 0) for s in segs)  # fmt: skip
    need(ok, "lexical.segments: expected [32 hex digits, documents] or nil")
    docs = sum(s[1] for s in segs if s is not None)
    need(docs == chunks, f"lexical.segments: {docs} documents for {chunks} chunks")


def _check_artifacts(v: Any) -> None:
    need(isinstance(v, dict), "artifacts: expected a map")
    for rel, want in v.items():
        need(safe_relpath(rel) and rel.count("/") < 4, f"artifacts: unsafe file name {rel!r}")
        need(rel not in ("manifest.msgpack", "manifest.sha256"), f"artifacts: {rel} cannot be listed")
        a = _map(want, f"artifacts[{rel}]", ("sha256", "size"))
        need(
            hex_str(a["sha256"], 64) and is_int(a["size"]) and a["size"] >= 0,
            f"artifacts[{rel}]: bad checksum",
        )


def check_shard_files(v: Any, names: tuple[str, ...], paths: list[str]) -> dict[str, list[Any]]:
    """A shard's file table: the files `paths` (the top manifest's, for this bucket)."""
    f = _columns(v, "files", names, len(paths))
    need(f["path"] == paths, "its files differ from the manifest's")
    _check(f["diagnostics"], _COLUMN_CHECKS["diagnostics"], _diagnostics, "files.diagnostics")
    _check(f["imports"], _strings, _string_list, "files.imports")
    _check(f["data"], lambda c: _types(c) <= _BYTES, lambda b: isinstance(b, bytes), "files.data")
    _check(f["texts"], _counts, lambda n: is_int(n) and n >= 0, "files.texts")
    return f


def check_blocks(blocks: Any, counts: Any) -> tuple[list[bytes], list[int]]:
    """A shard's text blocks (bytes) and how many files each holds (`blocks.pack`); that they
    hold the files' texts is checked as each is decompressed (`blocks.BlockTexts`)."""
    need(isinstance(blocks, list) and _types(blocks) <= _BYTES, "blocks: expected a list of bytes")
    need(isinstance(counts, list) and _counts(counts), "block_files: expected a list of counts")
    return blocks, counts


def unpack_plain(data: bytes) -> Any:
    """msgpack without extension types (an ext value is refused, never turned into an object)."""
    return msgpack.unpackb(data, raw=False, strict_map_key=False, ext_hook=no_ext)


def no_ext(code: int, data: bytes) -> Any:
    raise ValueError(f"msgpack extension type {code} is not allowed")


_CHUNK_CHECKS: dict[str, Any] = {
    "kind": lambda v: v in KINDS,
    "symbols": _string_list,
    "anchors": _string_list,
    "hierarchy": _string_list,
    "parent": lambda v: v is None or is_int(v),
    "start_line": lambda v: is_int(v) and 1 <= v < 1 << 31,
    "end_line": lambda v: is_int(v) and 1 <= v < 1 << 31,
    "tokens": lambda v: is_int(v) and v >= 0,
    "header": lambda v: isinstance(v, str),
    "diagnostics": _diagnostics,
    "elided": lambda v: (
        isinstance(v, _SEQ)
        and all(isinstance(r, _SEQ) and len(r) == 2 and is_int(r[0]) and is_int(r[1]) for r in v)
    ),
    "text": lambda v: isinstance(v, str),
}


def _lines(col: list[Any]) -> bool:
    return _types(col) <= _INT and (not col or (min(col) >= 1 and max(col) < 1 << 31))


def _pairs(col: list[Any]) -> bool:
    if not _types(col) <= _LIST:
        return False
    rs = list(itertools.chain.from_iterable(col))
    flat = itertools.chain.from_iterable(rs)
    return _types(rs) <= _LIST and all(len(r) == 2 for r in rs) and _types(flat) <= _INT


# Whole-column forms of `_CHUNK_CHECKS` (see `_check`): a cold query checks the columns of every
# file it reads, ~8,000 chunks.
_KINDS = frozenset(KINDS)
_COLUMN_CHECKS: dict[str, Any] = {
    "kind": lambda col: _types(col) <= _STR and set(col) <= _KINDS,
    "symbols": _strings,
    "anchors": _strings,
    "hierarchy": _strings,
    "parent": lambda col: _types(col) <= {int, type(None)},
    "start_line": _lines,
    "end_line": _lines,
    "tokens": _counts,
    "header": lambda col: _types(col) <= _STR,
    "diagnostics": lambda col: _types(col) <= _LIST and all(_diagnostics(v) for v in col if v),
    "elided": _pairs,
    "text": lambda col: _types(col) <= _STR,
}


def check_chunk_columns(cols: Any, names: tuple[str, ...], ids: list[int]) -> dict[str, list[Any]]:
    """A file's chunk columns (those in `names`): one value per chunk of the file, each well typed,
    parents among the file's chunks, lines in order."""
    c = _columns(cols, "chunks", names, len(ids))
    for name in names:
        _check(c[name], _COLUMN_CHECKS[name], _CHUNK_CHECKS[name], f"chunks.{name}")
    if "parent" in c:
        mine = set(ids)
        if not set(c["parent"]) - {None} <= mine:
            _each(c["parent"], lambda p: p is None or p in mine, "chunks.parent")
    if "start_line" in c and "end_line" in c and any(map(operator.gt, c["start_line"], c["end_line"])):
        bad = [i for i, (a, b) in enumerate(zip(c["start_line"], c["end_line"], strict=True)) if a > b]
        need(False, f"chunks: start_line after end_line at {bad[:1]}")
    return c


def check_links(v: Any, n: int) -> list[Any]:
    """A file's stored graph links (`[defs, refs, skip]`, by chunk position; see `file_row`)."""
    need(isinstance(v, list) and len(v) == 3, "links: expected [defs, refs, skip]")
    defs, refs, skip = v
    names_ok = isinstance(defs, dict) and _types(defs) <= _STR
    need(names_ok and _positions(defs.values(), n), "links: bad definitions")
    need(isinstance(refs, list) and len(refs) == n, "links: one reference list per chunk expected")
    places = _types(itertools.chain.from_iterable(refs))  # checked as decoded (`ref_words`)
    need(_types(refs) <= _LIST and places <= _INT | _STR, "links.refs: expected lists of places and names")
    need(isinstance(skip, list) and len(skip) == n and _positions(skip, n), "links: bad skips")
    return [defs, refs, skip]


def _positions(lists: Iterable[Any], n: int) -> bool:
    """Every value a list of chunk positions (ints in [0, n)), checked in C loops: an update and a
    query's test lending read the links of hundreds of files."""
    lists = list(lists)
    if not _types(lists) <= _LIST:
        return False
    flat = list(itertools.chain.from_iterable(lists))
    return _counts(flat) and max(flat, default=-1) < n
