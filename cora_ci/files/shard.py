"""Which files shard I of N indexes (`cora-ci index --shard I/N`): a stable, balanced split of a tree.

Each path hashes to one of `SLOTS` virtual slots (the top 12 bits of its crc32, so slots do not
line up with the low bits `bucket_of` uses). A slot weighs the bytes of its files plus `FILE_COST`
per file. The slots, in order, are cut into N contiguous ranges of about equal weight: a slot goes
to the range that holds the middle of its weight. Every shard then weighs the mean W/N within the
weight of the heaviest slot, in both directions.

Why ranges rather than heaviest-slot-first to the lightest shard: the balance bound is the same,
but greedy assignment depends on the order of all slot weights, so one edited file can move slots
anywhere, while a range only moves its ends: after a commit a shard keeps nearly all its files and
its bundle updates in place. The split is a function of the paths and sizes of the whole tree, so
each job of a CI matrix computes the same one on its own.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from cora_ci.errors import CoraError

SLOTS = 4096
_SLOT_SHIFT = 32 - 12  # crc32 >> 20: one of 4096 slots
FILE_COST = 256  # bytes a file weighs beyond its size: an empty file still costs a row and a read


@dataclass(frozen=True)
class ShardSpec:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_spec(text: str) -> ShardSpec:
    """`I/N` with 1 <= I <= N <= SLOTS."""
    i, sep, n = text.partition("/")
    if sep and i.strip().isdigit() and n.strip().isdigit():
        spec = ShardSpec(int(i), int(n))
        if 1 <= spec.index <= spec.count <= SLOTS:
            return spec
    raise CoraError("CORA-CFG-002", f"shard {text!r}: expected I/N with 1 <= I <= N <= {SLOTS}", "e.g. 2/4")


def slot_of(path: str) -> int:
    return zlib.crc32(path.encode("utf-8", "surrogateescape")) >> _SLOT_SHIFT


def slot_shards(weights: Sequence[int], count: int) -> list[int]:
    """The 0-based shard of each slot: contiguous ranges of about equal total weight (integers
    only, so every machine cuts the same)."""
    total = sum(weights)
    out: list[int] = []
    before = 0
    for w in weights:
        out.append(min(count - 1, (2 * before + w) * count // (2 * total)) if total else 0)
        before += w
    return out


def assign(files: Sequence[tuple[str, int]], count: int) -> list[int]:
    """The 0-based shard of each (path, size) of a tree, in the order given."""
    weights = [0] * SLOTS
    slots = [slot_of(p) for p, _ in files]
    for s, (_, size) in zip(slots, files, strict=True):
        weights[s] += size + FILE_COST
    shard = slot_shards(weights, count)
    return [shard[s] for s in slots]


def tree_digest(files: Sequence[tuple[str, str]]) -> str:
    """sha256 of a tree's (path, blob id) list: shards cut from the same files agree on it, and
    the files of all shards together must give it again."""
    h = hashlib.sha256()
    for path, blob in sorted(files):
        h.update(f"{path}\0{blob}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()
