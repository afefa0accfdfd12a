"""Cost of updating a bundle per commit, as a hook pays it: a fresh `cora-ci index` process.

Repositories of N real files (Python and Markdown copied from the installed site-packages, one
commit), indexed once; then commits that edit 1, 10 and 100 files (a new function appended to
each), a no-op update, and the breakdown of the fixed costs (process start and imports, model load).
Run: python bench/update_speed.py [--sizes 1000,10000] [--model default|none] [--runs 3]
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
import sysconfig
import tempfile
import time
from pathlib import Path

SITE = Path(sysconfig.get_paths()["purelib"])
# The console script, not `python -m`: the copied packages in the repository would shadow imports.
CORA = [shutil.which("cora-ci", path=os.path.dirname(sys.executable)) or "cora-ci"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@e.x",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@e.x",
}


def make_repo(dest: Path, n: int) -> Path:
    """A git repository of `n` real source files (sorted walk of site-packages, small files only)."""
    repo = dest / f"repo{n}"
    repo.mkdir()
    found = 0
    for p in sorted(SITE.rglob("*.py")):
        if found >= n:
            break
        if "cora_ci" in p.parts or not 200 < p.stat().st_size < 40_000:
            continue
        target = repo / p.relative_to(SITE)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, target)
        found += 1
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "import")
    return repo


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000")
    ap.add_argument("--model", default="default")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    now = datetime.datetime.now(datetime.timezone.utc)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{now:%Y-%m-%dT%H:%M}Z, load {os.getloadavg()[0]:.2f}")  # fmt: skip
    imports = statistics.median(timed([*CORA, "--version"], Path.cwd()) for _ in range(5))
    model = "from cora_ci.embedding import load_embedder as l; l('default').embed_documents(['x'])"
    load = statistics.median(timed([sys.executable, "-c", model], Path.cwd()) for _ in range(3))
    print(f"process start + CLI imports: {imports:.3f} s; + default model load and first call: {load:.3f} s")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = tmp
        for n in (int(x) for x in args.sizes.split(",")):
            repo = make_repo(Path(tmp), n)
            index = [*CORA, "index", "-q", "--timings", "--model", args.model]
            first = timed(index, repo)
            print(f"\n== {n} files, model {args.model}: first build {first:.1f} s ==")
            stages: list[dict[str, float]] = []
            noop = [timed(index, repo, stages) for _ in range(args.runs)]
            wall = statistics.median(noop)
            print(f"  no-op update:       median {wall:.3f} s  (target <= 0.3 s)")
            print(f"      stages: {breakdown(stages, wall)}")
            for k in (1, 5, 10, 100):
                times: list[float] = []
                stages = []
                for r in range(args.runs):
                    edit(repo, k, r)
                    times.append(timed(index, repo, stages))
                wall = statistics.median(times)
                target = "  (target <= 1.0 s)" if k == 5 else ""
                print(f"  {k:3} files changed:  median {wall:.3f} s{target}")
                print(f"      stages: {breakdown(stages, wall)}")


if __name__ == "__main__":
    main()
