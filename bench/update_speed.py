"""Cost of updating a bundle per commit, as a hook pays it: a fresh `cora-ci index` process.

Repositories of N files made by bench/corpora.py from the pinned public corpora (the same bytes
every time: 1,000 files are the corpora's code files plus renamed copies; 10,000 are twelve copies),
indexed once (wall time and peak RSS of that process); then commits that edit 1, 5, 10 and 100
files (a new function appended to each), a no-op update, and the breakdown of the fixed costs
(process start and imports, model load). Targets (issue 4): 5 files <= 1.0 s, no-op <= 0.3 s,
start-up + model load <= 0.4 s, and the cost must follow the change, not the repository.
Run: python bench/update_speed.py [--sizes 1000,10000] [--model default|none] [--runs 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import corpora
from benchlib import Figures, json_option, load_average, measured_run

CHANGES = (1, 5, 10, 100)
NOOP_TARGET, FIVE_TARGET, START_TARGET, RSS_TARGET = 0.3, 1.0, 0.4, 800.0
GROWTH_TARGET = 2.0  # our bound: the same change on 10x the files may cost at most 2x
TABLE = "updates (seconds, a fresh `cora-ci index` process per commit, median)"
# The console script, not `python -m`: the copied packages in the repository would shadow imports.
CORA = [shutil.which("cora-ci", path=os.path.dirname(sys.executable)) or "cora-ci"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@e.x",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@e.x",
}


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                         env={**os.environ, **GIT_ENV})  # fmt: skip
    return out.stdout


def timed(cmd: list[str], cwd: Path, stages: list[dict[str, float]] | None = None) -> float:
    """Wall time of one process; `stages` collects the in-process breakdown of `index --timings`."""
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t
    if stages is not None:
        line = next(ln for ln in out.splitlines() if ln.startswith("stages: "))
        parts = [p.rsplit(" ", 1) for p in line[len("stages: ") :].replace(";", ",").split(", ")]
        stages.append({k: float(v) for k, v in parts})
    return wall


def breakdown(stages: list[dict[str, float]], wall: float) -> str:
    """Median seconds per stage; what the process spent outside `build` is start-up and model load."""
    med = {k: statistics.median(s.get(k, 0.0) for s in stages) for k in stages[0]}
    outside = wall - med["total"]
    return (
        ", ".join(f"{k} {v:.3f}" for k, v in med.items() if k != "total") + f"; outside build {outside:.3f}"
    )


def edit(repo: Path, k: int, round_no: int) -> None:
    files = sorted(git(repo, "ls-files", "*.py").split())
    step = max(1, len(files) // k)
    for i, name in enumerate(files[::step][:k]):
        with open(repo / name, "a") as f:
            f.write(f"\n\ndef bench_added_{round_no}_{i}(values):\n    total = 0\n    for v in values:\n"
                    f"        total += v * {i}\n    return total\n")  # fmt: skip
    git(repo, "commit", "-qam", f"edit {k}")


def bench_size(fig: Figures, tmp: Path, n: int, model: str, runs: int) -> dict[int, float]:
    """First build, no-op and 1/5/10/100-file updates of an n-file repository; medians by change size."""
    repo = corpora.synthetic_repo(tmp, n)
    index = [*CORA, "index", "-q", "--timings", "--model", model]
    first = measured_run(index, repo)
    print(f"\n== {n} files, model {model}: first build {first.wall:.1f} s, peak RSS {first.rss_mb:.0f} MB ==")
    tag = f"{n // 1000}k"
    fig.add(f"update.{tag}.first_build", f"first build, {n:,} files ({model} model)", first.wall, "s")
    fig.add(f"update.{tag}.first_build_rss", f"first build peak RSS, {n:,} files", first.rss_mb, "MB",
            ("<=", RSS_TARGET), "issue 3")  # fmt: skip
    stages: list[dict[str, float]] = []
    wall = statistics.median(timed(index, repo, stages) for _ in range(runs))
    print(f"  no-op update:       median {wall:.3f} s  (target <= {NOOP_TARGET} s)")
    print(f"      stages: {breakdown(stages, wall)}")
    fig.add(f"update.{tag}.noop", f"no-op update, {n:,} files", wall, "s", ("<=", NOOP_TARGET), "issue 4",
            cell=(TABLE, "no-op update", f"{n:,} files"))  # fmt: skip
    medians: dict[int, float] = {}
    for k in CHANGES:
        times: list[float] = []
        stages = []
        for r in range(runs):
            edit(repo, k, r)
            times.append(timed(index, repo, stages))
        wall = medians[k] = statistics.median(times)
        target = f"  (target <= {FIVE_TARGET} s)" if k == 5 else ""
        print(f"  {k:3} files changed:  median {wall:.3f} s{target}")
        print(f"      stages: {breakdown(stages, wall)}")
        fig.add(f"update.{tag}.changed{k}", f"update, {k} file{'s' * (k > 1)} changed of {n:,}", wall, "s",
                ("<=", FIVE_TARGET) if k == 5 else None, "issue 4" if k == 5 else "",
                cell=(TABLE, f"{k} file{'s' * (k > 1)} changed", f"{n:,} files"))  # fmt: skip
    return medians


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000")
    ap.add_argument("--model", default="default")
    ap.add_argument("--runs", type=int, default=3)
    json_option(ap)
    args = ap.parse_args()
    fig = Figures("update_speed")
    now = datetime.datetime.now(datetime.timezone.utc)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{now:%Y-%m-%dT%H:%M}Z, load {load_average()}")  # fmt: skip
    imports = statistics.median(timed([*CORA, "--version"], Path.cwd()) for _ in range(5))
    model = "from cora_ci.embedding import load_embedder as l; l('default').embed_documents(['x'])"
    load = statistics.median(timed([sys.executable, "-c", model], Path.cwd()) for _ in range(3))
    print(f"process start + CLI imports: {imports:.3f} s; + default model load and first call: {load:.3f} s")
    fig.add("update.start", "process start + CLI imports", imports, "s")
    fig.add("update.start_model", "process start + model load and first embedding", load, "s",
            ("<=", START_TARGET), "issue 4")  # fmt: skip
    sizes = [int(x) for x in args.sizes.split(",")]
    by_size: dict[int, dict[int, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = tmp
        for n in sizes:
            by_size[n] = bench_size(fig, Path(tmp), n, args.model, args.runs)
    growth(fig, by_size)
    for n in (1000, 10000):
        if n not in sizes:
            fig.skip(f"update.{n // 1000}k", f"updates of a {n:,}-file repository", "not in --sizes")
    fig.write(args.json)


def growth(fig: Figures, by_size: dict[int, dict[int, float]]) -> None:
    """The same change on the largest repository against the smallest: what the size itself costs."""
    if len(by_size) < 2:
        fig.skip("update.growth", "update cost, larger vs smaller repository", "one repository size only")
        return
    small, large = min(by_size), max(by_size)
    for k in CHANGES:
        ratio = by_size[large][k] / by_size[small][k]
        print(f"  {k:3} files changed: {large:,} files / {small:,} files = {ratio:.2f}x")
        fig.add(f"update.growth.changed{k}", f"update time, {k} changed: {large:,} / {small:,} files", ratio,
                "x", ("<=", GROWTH_TARGET), "issue 4: follows the change (2x: our bound)",
                cell=(TABLE, f"{k} file{'s' * (k > 1)} changed", f"{large // small}x the files"))  # fmt: skip


if __name__ == "__main__":
    main()
