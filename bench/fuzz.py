"""Fuzz the bundle readers: N mutated bundles and archives (tests/bundle_fuzz.py), each read as
`info`, `verify`, `query` and an update read it. Prints the count of each outcome per kind of
mutation; any outcome other than success or a clean CoraError stops the run with its traceback
(a crash of the process would show as one too).

    python bench/fuzz.py [--examples 10000] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cora-fuzz-") as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        from bundle_fuzz import make_fixture, run_one  # type: ignore[import-not-found]
        from hypothesis import HealthCheck, given, seed, settings
        from hypothesis import strategies as st

        fx = make_fixture(Path(tmp))
        seen: Counter[tuple[str, str]] = Counter()

        @seed(args.seed)
        @settings(
            max_examples=args.examples, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        @given(st.data())
        def one(data: st.DataObject) -> None:
            seen[run_one(fx, data)] += 1

        print(
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"load {os.getloadavg()[0]:.1f}; {args.examples} examples, seed {args.seed}"
        )
        t = time.perf_counter()
        one()
        took = time.perf_counter() - t
    total = sum(seen.values())
    print(
        f"{total} inputs in {took:.0f} s ({total / took:.0f}/s); "
        "outcomes other than success or a clean error: 0"
    )
    for kind in sorted({k for k, _ in seen}):
        row = {o: n for (k, o), n in seen.items() if k == kind}
        print(f"{kind:18} {sum(row.values()):6}  " + ", ".join(f"{o} {n}" for o, n in sorted(row.items())))
    outcomes: Counter[str] = Counter()
    for (_, o), n in seen.items():
        outcomes[o] += n
    print(f"{'all':18} {total:6}  " + ", ".join(f"{o} {n}" for o, n in sorted(outcomes.items())))


if __name__ == "__main__":
    main()
