"""Sharded indexing: a full build, N shard builds, and `cora-ci merge` of them, timed; the merged
bundle is checked to be the full build's bytes.

A CI matrix runs the shards in parallel, so what a sharded build costs in wall time is the slowest
shard plus the merge. Repository: a git repository made from the source of an installed package
(`--package NAME`, default `hypothesis`). Run: python bench/merge_speed.py [--shards 4] [--model none]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from index_speed import package_repo

from cora_ci.build import build
from cora_ci.files.shard import ShardSpec
from cora_ci.merge import merge


def same_bytes(a: Path, b: Path) -> bool:
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    if files != sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()):
        return False
    return all((a / f).read_bytes() == (b / f).read_bytes() for f in files)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--package", default="hypothesis")
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--model", default="none")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        repo = package_repo(args.package, base)
        t = time.perf_counter()
        full = build(repo, base / "full", model=args.model)
        t_full = time.perf_counter() - t
        print(f"{args.package}: {full.files} files, {full.chunks} chunks, model {args.model}")
        print(f"full build        {t_full:7.2f} s")
        shard_times = []
        outs = []
        for i in range(1, args.shards + 1):
            t = time.perf_counter()
            s = build(repo, base / f"s{i}", model=args.model, shard=ShardSpec(i, args.shards))
            shard_times.append(time.perf_counter() - t)
            outs.append(base / f"s{i}")
            print(f"shard {i}/{args.shards} {shard_times[-1]:14.2f} s  {s.files} files, {s.chunks} chunks")
        t = time.perf_counter()
        m = merge(outs, base / "merged")
        t_merge = time.perf_counter() - t
        stages = ", ".join(f"{k} {v:.2f}" for k, v in m.stages.items())
        print(f"merge             {t_merge:7.2f} s  ({stages})")
        print(f"slowest shard + merge {max(shard_times) + t_merge:7.2f} s vs full {t_full:.2f} s")
        print(f"merged == full build, byte for byte: {same_bytes(base / 'merged', base / 'full')}")


if __name__ == "__main__":
    main()
