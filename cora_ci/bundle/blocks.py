"""A shard's chunk texts, compressed together in blocks of neighbouring files (format 9.0).

Each file's texts (its chunks' code, headers and hierarchies: `manifest.file_row`) made a zlib
stream of their own before, and every stream began with an empty window: the texts were half of a
bundle and the reason a small repository's bundle outweighed its source (axum 1.15x). Files in
path order share names, imports and idioms, so a block of ~32-128 KB of neighbouring files, one
zstd frame, is ~30% smaller than the same texts compressed file by file, and decodes in ~0.1 ms
(bench/RESULTS.md, 2026-12-01). Only rendering reads texts: ranking reads the per-file blobs.

A block ends after a file whose path hash says so once it holds `MIN_BLOCK` bytes, or at
`MAX_BLOCK`: the ends depend on the files themselves, not on their count before them, so an edit
changes its own block and seldom the next, and an update compresses again only the blocks whose
bytes changed (`pack(..., reuse)`): the cost of a shard's rewrite follows the change.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from typing import Any, overload

from cora_ci.bundle.schema import MAX_BLOB_BYTES, need

MIN_BLOCK = 32 << 10
MAX_BLOCK = 128 << 10
_LEVEL = 9  # zstd: 47 MB/s; 12 was 1% smaller at a third of the speed, 19 5% at a twentieth
_CUT_MASK = 7  # after MIN_BLOCK, a block ends at one file in eight (by path)
_KEPT = 8  # blocks a reader keeps decompressed (a query's hits cluster; ChunkTable keeps files)


_MAGIC = b"\x28\xb5\x2f\xfd"  # a zstd frame's first bytes; a file's texts begin with a msgpack map's


def held(texts: bytes) -> bytes:
    """A fresh file's texts as a build holds them until its shard is written: a zstd frame of
    their own at level 1 (0.30x their bytes at 180 MB/s, where chunking makes ~2 MB/s), as a
    100k-file build holding them whole would near the 2 GB its peak memory must stay within.
    Copied to its own size (`own`): that copy is what makes holding them compressed pay."""
    import zstandard

    return own(zstandard.ZstdCompressor(level=1).compress(texts))


def own(frame: bytes) -> bytes:
    """`frame` copied to a bytes object of its own size: python-zstandard's `compress` returns one
    that keeps the allocation of the frame's bound, as large as its input, for as long as it lives."""
    return bytes(memoryview(frame))


def plain(texts: bytes) -> bytes:
    """A file's texts as msgpack: those `held` decompressed, those read from a block as they are."""
    return inflate(texts) if texts[:4] == _MAGIC else texts


def key(raw: bytes) -> bytes:
    """What identifies a block's uncompressed bytes in `reuse`."""
    return hashlib.blake2b(raw, digest_size=16).digest()


def cuts(paths: Sequence[str], sizes: Sequence[int]) -> list[int]:
    """How many files each block holds, for files `paths` (in shard order) of texts `sizes` bytes."""
    counts: list[int] = []
    n = held = 0
    for path, size in zip(paths, sizes, strict=True):
        n, held = n + 1, held + size
        if held >= MAX_BLOCK or (held >= MIN_BLOCK and zlib.crc32(path.encode()) & _CUT_MASK == 0):
            counts.append(n)
            n = held = 0
    return [*counts, n] if n else counts


def pack(
    paths: Sequence[str], texts: Sequence[bytes], reuse: Mapping[bytes, bytes]
) -> tuple[list[bytes], list[int]]:
    """The compressed blocks of files `paths` with texts `texts` (msgpack: `plain`), and how many
    files each holds.
    A block that `reuse` holds (`key` of its bytes -> compressed) is not compressed again."""
    import zstandard

    compressor = zstandard.ZstdCompressor(level=_LEVEL)  # writes each frame's size: `inflate` needs it
    counts = cuts(paths, [len(t) for t in texts])
    blocks, start = [], 0
    for n in counts:
        raw = b"".join(texts[start : start + n])
        start += n
        done = reuse.get(key(raw)) if reuse else None
        blocks.append(done if done is not None else compressor.compress(raw))
    return blocks, counts


class BlockTexts(Sequence[bytes]):
    """A shard's texts column read from its blocks: a file's texts are cut from its block, which is
    decompressed when first needed (the last `_KEPT` are kept). Each decompressed block is noted in
    `seen` (`key` -> compressed), so that writing a shard anew can reuse the frames it read.
    ValueError where the blocks do not hold the files' texts (a damaged or hostile shard)."""

    def __init__(self, blocks: list[bytes], counts: list[int], sizes: list[int],
                 seen: MutableMapping[bytes, bytes] | None = None) -> None:  # fmt: skip
        need(len(blocks) == len(counts) and sum(counts) == len(sizes), "blocks do not fit the files")
        need(all(c > 0 for c in counts), "an empty block")
        self._blocks = blocks
        self._sizes = sizes
        self._block: list[int] = []  # each file's block
        self._offset: list[int] = []  # and where its texts begin there
        self._held: list[int] = []  # each block's bytes, decompressed
        for b, n in enumerate(counts):
            at = 0
            for size in sizes[len(self._block) : len(self._block) + n]:
                self._block.append(b)
                self._offset.append(at)
                at += size
            self._held.append(at)
        self._raw: dict[int, bytes] = {}
        self._seen = seen

    def __len__(self) -> int:
        return len(self._sizes)

    @overload
    def __getitem__(self, i: int) -> bytes: ...
    @overload
    def __getitem__(self, i: slice) -> list[bytes]: ...
    def __getitem__(self, i: int | slice) -> bytes | list[bytes]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        raw = self.block(self._block[i])
        return raw[self._offset[i] : self._offset[i] + self._sizes[i]]

    def __iter__(self) -> Iterator[bytes]:
        return (self[i] for i in range(len(self)))

    def block(self, b: int) -> bytes:
        """Block `b` decompressed, checked to hold exactly its files' texts."""
        if b not in self._raw:
            raw = inflate(self._blocks[b])
            need(len(raw) == self._held[b], f"block {b} holds {len(raw)} bytes, its files {self._held[b]}")
            if len(self._raw) >= _KEPT:
                del self._raw[next(iter(self._raw))]
            self._raw[b] = raw
            if self._seen is not None:
                self._seen[key(raw)] = self._blocks[b]
        return self._raw[b]


def inflate(block: bytes, limit: int = MAX_BLOB_BYTES, decompressor: Any = None) -> bytes:
    """A zstd frame decompressed (by `decompressor`, one with a dictionary, else a plain one),
    refused (ValueError) before any allocation if it says it holds more than `limit` bytes or does
    not say: a small hostile frame cannot inflate to gigabytes."""
    import zstandard

    try:
        size = zstandard.frame_content_size(block)
        need(0 <= size <= limit, f"a frame of {size} bytes (at most {limit}, and said)")
        d = decompressor if decompressor is not None else zstandard.ZstdDecompressor()
        out: bytes = d.decompress(block, max_output_size=size)
    except zstandard.ZstdError as e:
        raise ValueError(f"a damaged frame: {e}") from None
    need(len(out) == size, "a frame shorter than it says")
    return out
