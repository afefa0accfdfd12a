"""A file's `data` blob and a shard's imports: msgpack compressed as one zstd frame each, with a
dictionary that ships in the wheel (format 10.0).

A file's blob (its chunks' light columns and its graph links, ~1.7 KB of msgpack) is read on its
own by ranking, so it cannot share a block with its neighbours as texts do (`blocks.py`); alone,
zlib started every one from an empty window. Its keys, kinds, anchors' shapes and common names
recur in every file of every repository: a dictionary trained on other repositories' blobs gives
each frame them for free (axum's blobs 294 -> 231 KB, a fifth smaller; bench/RESULTS.md,
2026-12-02), and a frame decodes in ~6 us against zlib's ~35. The dictionary is part of the
format: a bundle's bytes depend on its commit and config alone, an update compresses only the
files it changed, and a reader needs nothing but this package. `tools/blob_dict.py` made it from
the repositories it names; another dictionary is another major format (`DICT_SHA256`).
"""

from __future__ import annotations

import threading
from functools import cache
from importlib import resources
from typing import Any

from cora_ci.bundle.blocks import inflate, own
from cora_ci.bundle.schema import MAX_BLOB_BYTES

DICT_FILE = "blob.dict"
# tests/test_blobs.py checks the file against it
DICT_SHA256 = "1f8d7e2b4d0f700a7b8cb21db32040f39f947d018e441f8fb106a75b2cfae198"
_LEVEL = 9  # axum: ~120 us a blob (zlib 6 took as long), 231 KB; 3: 46 us, 249 KB; 19: 1.2 ms, 227 KB
_local = threading.local()  # zstd's contexts are not to be shared between threads


@cache
def dictionary() -> Any:
    """The shipped dictionary, digested once a process for compressing and for decompressing."""
    import zstandard

    data = resources.files("cora_ci.bundle").joinpath(DICT_FILE).read_bytes()
    return zstandard.ZstdCompressionDict(data, dict_type=zstandard.DICT_TYPE_FULLDICT)


def compress(raw: bytes) -> bytes:
    """`raw` as a zstd frame that says its size (`inflate` needs it) and not its dictionary."""
    c = getattr(_local, "compressor", None)
    if c is None:
        import zstandard

        c = _local.compressor = zstandard.ZstdCompressor(
            level=_LEVEL, dict_data=dictionary(), write_dict_id=False, write_checksum=False
        )
    return own(c.compress(raw))


def decompress(blob: bytes, limit: int = MAX_BLOB_BYTES) -> bytes:
    """A blob made by `compress`, refused (ValueError) if it is damaged or says it holds more than
    `limit` bytes."""
    d = getattr(_local, "decompressor", None)
    if d is None:
        import zstandard

        d = _local.decompressor = zstandard.ZstdDecompressor(dict_data=dictionary())
    return inflate(blob, limit, d)
