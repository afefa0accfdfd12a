"""What an update pays for its vectors whatever its change: reading the whole codes file and writing it.

`update_vectors` reads the previous `vectors.codes` (memory-mapped), takes the kept rows and the
new codes in the new manifest's chunk order and writes the file again: O(index) bytes, no graph. This
writes the vector file of N random unit vectors (384-d, the bundle's settings) and times a
5-vector change, median of 3.
Run: python bench/vector_save.py [--sizes 16000,48000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from cora_ci.bundle.vectors import update_vectors, write_vectors


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="16000,48000")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"load {os.getloadavg()[0]:.2f}")
    for n in (int(x) for x in args.sizes.split(",")):
        vecs = rng.standard_normal((n + 5, 384)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        ids = np.arange(n, dtype=np.uint64)
        with tempfile.TemporaryDirectory() as tmp:
            old = Path(tmp) / "old"
            old.mkdir()
            t = time.perf_counter()
            write_vectors(old, ids, ids, vecs[:n])
            built = time.perf_counter() - t
            times = []
            for r in range(3):
                new_dir = Path(tmp) / f"new{r}"
                new_dir.mkdir()
                t = time.perf_counter()
                new = np.arange(n + r * 5, n + r * 5 + 5, dtype=np.uint64)
                rows = np.r_[ids[r * 5 + 5 :], new]  # 5 removed, 5 added
                update_vectors(old, ids, new_dir, rows, [(new, vecs[n:])])
                times.append(time.perf_counter() - t)
            size = sum(p.stat().st_size for p in old.iterdir()) / 1e6
            print(f"{n} vectors ({size:.1f} MB): first build {built:.1f} s; "
                  f"update of 5 (read, remove, add, write) {statistics.median(times):.3f} s")  # fmt: skip


if __name__ == "__main__":
    main()
