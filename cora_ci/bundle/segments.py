"""Cheap checks of a bundle's BM25 files before tantivy opens them (a bundle may come from anywhere).

tantivy trusts its files: most damage makes it return an error or panic (both caught, see
`panics`), but a few reads size an allocation from the file, and Rust aborts the whole process
when an allocation fails. Opening an index parses the doc store's skip index, whose first number
is such a size (`Vec::with_capacity`). The rest of the doc store is never read (ids come from the
fast field) and its other parts are checked here too, so nothing there can reach tantivy; the
fast field's column dictionary must hold no zstd frame, whose header sizes another allocation. What
these checks cannot see (postings altered behind consistent checksums) `verify` catches by
writing every segment again (`lexical.rebuilt_problems`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cora_ci.bundle import schema
from cora_ci.bundle.schema import need

_FOOTER_MAGIC = 1337  # tantivy's footer: JSON, its length (u32), this (u32)
_FOOTER_MAX = 50_000
_STORE_FOOTER = 28  # doc store version (u32), skip index offset (u64), compressor (u8), 15 zeros
_STORE_VERSIONS = (1, 2)
_LZ4 = 1  # the doc store compressor of our index settings (meta.json, checked)
_MAX_LAYERS = 16  # skip index layers: one per factor of 8 of the doc store's blocks
_MAX_SKIP_BYTES = 16 << 20  # a few bytes per block of ~16 KB: a doc store of gigabytes needs ~1 MB
_COLUMNAR_FOOTER = 20  # column dictionary length (u64), rows (u32), version (u32), magic
_COLUMNAR_MAGIC = bytes([2, 113, 119, 66])
_MAX_COLUMNS_BYTES = 1 << 20  # the dictionary of our one column takes ~50 bytes
# zstd's frame magic (0xFD2FB528) and those of the legacy formats zstd still decodes (v0.5-0.7)
_ZSTD_MAGICS = tuple(bytes([b, 0xB5, 0x2F, 0xFD]) for b in (0x25, 0x26, 0x27, 0x28))


def uuid(hex32: str) -> str:
    return f"{hex32[:8]}-{hex32[8:12]}-{hex32[12:16]}-{hex32[16:20]}-{hex32[20:]}"


def check_meta(directory: Path, segments: list[Any], template: dict[str, Any]) -> None:
    """meta.json must be exactly what `lexical.write_index` writes for the manifest's `segments`
    (`template`: an empty index's meta.json): our schema and settings, the listed segments and
    nothing else. tantivy opens the files meta.json names, so nothing a hostile bundle writes there
    can point it elsewhere (ValueError)."""
    try:
        fd = os.open(directory / "meta.json", os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            raw = f.read(schema.MAX_META_BYTES + 1)
        meta = json.loads(raw) if len(raw) <= schema.MAX_META_BYTES else None
    except (OSError, ValueError) as e:
        raise ValueError(f"meta.json unreadable: {e}") from None
    except RecursionError:  # json parses nested arrays recursively: a hostile file nests deep
        raise ValueError("meta.json unreadable: nested too deeply") from None
    if not isinstance(meta, dict):
        raise ValueError("meta.json: expected a JSON object")
    want = dict(template)
    want["segments"] = [{"deletes": None, "max_doc": s[1], "segment_id": uuid(s[0])} for s in segments if s]
    for key in ("index_settings", "schema", "segments"):
        need(meta.get(key) == want[key], f"meta.json: {key} differ from the manifest's index")


def check_store(path: Path) -> None:
    """A segment's doc store (`.store`) as tantivy opens it: its footers, and a skip index of a
    few layers whose offsets stay within it (ValueError naming the file otherwise)."""
    with _opened(path) as (fd, body):
        need(body >= _STORE_FOOTER, f"{path.name}: shorter than its doc store footer")
        foot = os.pread(fd, _STORE_FOOTER, body - _STORE_FOOTER)
        version, offset, compressor = (
            int.from_bytes(foot[:4], "little"), int.from_bytes(foot[4:12], "little"), foot[12],
        )  # fmt: skip
        need(version in _STORE_VERSIONS and compressor == _LZ4 and foot[13:] == bytes(15),
             f"{path.name}: not a doc store of this index")  # fmt: skip
        need(body - _STORE_FOOTER - _MAX_SKIP_BYTES <= offset <= body - _STORE_FOOTER,
             f"{path.name}: skip index out of place")  # fmt: skip
        index = os.pread(fd, body - _STORE_FOOTER - offset, offset)
    layers, at = _vint(index, 0, path.name)
    need(1 <= layers <= _MAX_LAYERS, f"{path.name}: {layers} skip index layers")
    ends = []
    for _ in range(layers):
        end, at = _vint(index, at, path.name)
        ends.append(end)
    need(ends == sorted(ends) and ends[-1] == len(index) - at, f"{path.name}: skip index layers out of place")


def check_fast(path: Path) -> None:
    """A segment's fast fields (`.fast`): its footers, and no zstd frame in the dictionary of its
    columns. tantivy sizes a buffer from a zstd frame's header before decompressing it, and our
    single small column's dictionary is never compressed (ValueError otherwise)."""
    with _opened(path) as (fd, body):
        need(body >= _COLUMNAR_FOOTER, f"{path.name}: shorter than its columnar footer")
        foot = os.pread(fd, _COLUMNAR_FOOTER, body - _COLUMNAR_FOOTER)
        size = int.from_bytes(foot[:8], "little")
        need(foot[16:] == _COLUMNAR_MAGIC and size <= min(body - _COLUMNAR_FOOTER, _MAX_COLUMNS_BYTES),
             f"{path.name}: bad columnar footer")  # fmt: skip
        columns = os.pread(fd, size, body - _COLUMNAR_FOOTER - size)
    need(not any(m in columns for m in _ZSTD_MAGICS), f"{path.name}: compressed column dictionary")


@contextmanager
def _opened(path: Path) -> Iterator[tuple[int, int]]:
    """A segment file opened without following a link, and the length of its body once its
    footer passed `_body` (ValueError naming the file otherwise)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as e:
        raise ValueError(f"{path.name}: unreadable ({e.strerror or e})") from None
    try:
        yield fd, _body(fd, os.fstat(fd).st_size, path.name)
    finally:
        os.close(fd)


def _body(fd: int, size: int, name: str) -> int:
    """The length of a tantivy file without its footer, after the footer's own checks."""
    need(size >= 8, f"{name}: shorter than its footer")
    tail = os.pread(fd, 8, size - 8)
    length, magic = int.from_bytes(tail[:4], "little"), int.from_bytes(tail[4:], "little")
    need(magic == _FOOTER_MAGIC and length <= _FOOTER_MAX and length + 8 <= size, f"{name}: bad footer")
    return size - 8 - length


def _vint(data: bytes, at: int, name: str) -> tuple[int, int]:
    """tantivy's variable-length integer at `at` (7 bits a byte, the last one's high bit set)."""
    value = shift = 0
    while at < len(data) and shift < 64:
        b = data[at]
        at += 1
        value |= (b & 0x7F) << shift
        if b & 0x80:
            return value, at
        shift += 7
    raise ValueError(f"{name}: truncated skip index")
