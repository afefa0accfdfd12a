"""What one touched bucket costs an update, for the bucket cap of today and larger ones.

An update rewrites, per bucket holding a changed file, one BM25 segment and one manifest shard;
with at most 128 buckets a bucket of a 10k-file repository holds ~1,100 chunks. This takes a built
bundle (`cora-ci index --model none` of a large repository), and for caps of 128, 256 and 512
buckets rewrites one bucket's worth of its files (the segment from their chunks, the shard from
their rows), median of 3. Queries pay per segment instead; this script does not measure that.
Run: python bench/bucket_size.py BUNDLE
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from cora_ci.bundle import manifest as mf
from cora_ci.bundle import open_bundle
from cora_ci.bundle.lexical import LexicalDoc, row_docs, write_index


def timed(f: Callable[[], object], runs: int = 3) -> float:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("bundle", type=Path)
    args = ap.parse_args()
    b = open_bundle(args.bundle)
    top = b.manifest["files"]
    n_files, n_chunks = len(top["path"]), b.manifest["stats"]["chunks"]
    print(f"bundle: {n_files} files, {n_chunks} chunks; load {os.getloadavg()[0]:.2f}")
    rows = [b.shards.row(fi) for fi in range(n_files)]
    for count in (128, 256, 512):
        group = [r for r in rows if mf.bucket_of(r["path"], count) == 0]
        docs = [d for r in group for d in row_docs(r)]
        with tempfile.TemporaryDirectory() as tmp:

            def segment(tmp: str = tmp, docs: list[LexicalDoc] = docs) -> None:
                target = Path(tempfile.mkdtemp(dir=tmp)) / "bm25"
                write_index(target, {0: len(docs)}, lambda b: docs, 1)

            seg = timed(segment)
        shard = timed(lambda group=group, count=count: mf.pack_shard(0, count, group))
        print(f"cap {count:3}: bucket of {len(group)} files, {len(docs)} chunks: "
              f"BM25 segment {seg:.3f} s, shard {shard:.3f} s")  # fmt: skip


if __name__ == "__main__":
    main()
