"""Cost of updating a bundle per commit, as a hook pays it: a fresh `cora-ci index` process.

Repositories of N files made by bench/corpora.py from the pinned public corpora (the same bytes
every time: 1,000 files are the corpora's code files plus renamed copies; 10,000 are twelve copies),
indexed once (wall time and peak RSS of that process); then a no-op update (a commit that changes
no indexed file), commits that edit 1, 5, 10 and 100 files (a new function appended to each), and
the breakdown of the fixed costs (process start and imports, model load). Targets (issue 4):
5 files <= 1.0 s, no-op <= 0.3 s, start-up + model load <= 0.4 s, and the cost must follow the
change, not the repository.

Each case is SIZE:MODEL. The default, `1000:default,300:none,3000:none,30000:none`, judges the
targets with the model at 1,000 files and the growth from 300 to 3,000 and from 3,000 to 30,000
files without one (issue 19: a one-file update on 10x the files costs at most 1.3x): an update
embeds only the chunks it changed, the same at any size, so the model would add the same seconds
to both sides while a 10k first build with it costs ~25 minutes. Each first build is kept in
bench/.cache/bundles/; `--reuse` starts from a copy of it instead of building when cora-ci finds
that copy up to date (its figures are then the cached build's, said so), and builds anew when it
does not (a new format, chunker, model or corpus).
The growth is judged on paired rounds (`paired_growth`): one-file updates of every repository in
turn, the ratio taken round by round, as the machine's drift over minutes would otherwise move it.
Run: python bench/update_speed.py [--cases 1000:default,...] [--runs 3] [--rounds 7] [--reuse] [--json FILE]
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import corpora
from benchlib import Figures, Run, json_option, load_average, measured_run

CHANGES = (1, 5, 10, 100)
NOOP_TARGET, FIVE_TARGET, START_TARGET, RSS_TARGET = 0.3, 1.0, 0.4, 800.0
CPU: dict[Case, dict[int, float]] = {}  # median CPU seconds by case and change size
GROWTH_TARGET = 1.3  # issue 19: a one-file update on 10x the files costs at most 1.3x
TABLE = "updates (seconds, a fresh `cora-ci index` process per commit, median)"
BUILDS = corpora.CACHE_ROOT / "bundles"
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
    """Wall time of one process; `stages` collects the in-process breakdown of `index --timings`
    and the process's CPU seconds (`cpu`: user + system, which other jobs on a shared machine
    inflate much less than the wall time)."""
    t, before = time.perf_counter(), os.times()
    out = subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True).stdout
    wall, after = time.perf_counter() - t, os.times()
    if stages is not None:
        line = next(ln for ln in out.splitlines() if ln.startswith("stages: "))
        parts = [p.rsplit(" ", 1) for p in line[len("stages: ") :].replace(";", ",").split(", ")]
        stages.append({k: float(v) for k, v in parts})
        stages[-1]["cpu"] = (
            after.children_user - before.children_user + after.children_system - (before.children_system)
        )
    return wall


def breakdown(stages: list[dict[str, float]], wall: float) -> str:
    """Median seconds per stage; what the process spent outside `build` is start-up and model load."""
    med = {k: statistics.median(s.get(k, 0.0) for s in stages) for k in stages[0]}
    outside = wall - med["total"]
    return (
        ", ".join(f"{k} {v:.3f}" for k, v in med.items() if k not in ("total", "cpu"))
        + f"; outside build {outside:.3f}; process CPU {med['cpu']:.3f}"
    )


def edit(repo: Path, k: int, round_no: int) -> None:
    files = sorted(git(repo, "ls-files", "*.py").split())
    step = max(1, len(files) // k)
    for i, name in enumerate(files[::step][:k]):
        with open(repo / name, "a") as f:
            f.write(f"\n\ndef bench_added_{round_no}_{i}(values):\n    total = 0\n    for v in values:\n"
                    f"        total += v * {i}\n    return total\n")  # fmt: skip
    git(repo, "commit", "-qam", f"edit {k}")


class Case(NamedTuple):
    files: int
    model: str

    @property
    def tag(self) -> str:
        return f"{self.files // 1000}k" + ("" if self.model == "default" else f".{self.model}")

    @property
    def column(self) -> str:
        return f"{self.files:,} files" + ("" if self.model == "default" else f", model {self.model}")


def parse_cases(spec: str) -> list[Case]:
    cases = []
    for part in spec.split(","):
        size, _, model = part.partition(":")
        cases.append(Case(int(size), model or "default"))
    return cases


def first_build(repo: Path, index: list[str], case: Case, reuse: bool) -> tuple[Run, str]:
    """The repository's first build, or (with `reuse`) a copy of the cached one; and where from."""
    cache = BUILDS / f"synthetic-{case.files}-{case.model}"
    if reuse and (cache / "first.json").exists():
        shutil.copytree(cache / "index", repo / ".cora" / "index")
        said = measured_run(index, repo).stdout
        if said.startswith("up to date"):
            saved = json.loads((cache / "first.json").read_text())
            return Run(saved["wall"], saved["rss_mb"], ""), f"cached build of {saved['date']}"
        print(f"  the cached build is not current ({said.splitlines()[0]}): building anew")
        shutil.rmtree(repo / ".cora")
    run = measured_run(index, repo)
    shutil.rmtree(cache, ignore_errors=True)  # kept for the next `--reuse`
    shutil.copytree(repo / ".cora" / "index", cache / "index")
    now = datetime.datetime.now(datetime.UTC)
    doc = {"wall": run.wall, "rss_mb": run.rss_mb, "date": f"{now:%Y-%m-%d %H:%M} UTC"}
    (cache / "first.json").write_text(json.dumps(doc) + "\n")
    return run, "built now"


def bench_case(fig: Figures, tmp: Path, case: Case, runs: int, reuse: bool) -> tuple[Path, dict[int, float]]:
    """First build, no-op and 1/5/10/100-file updates of one repository; the repository, and the
    medians by change size."""
    n, model, tag = case.files, case.model, case.tag
    repo = corpora.synthetic_repo(tmp / tag, n)  # its own: the updates commit edits
    index = [*CORA, "index", "-q", "--timings", "--model", model]
    first, origin = first_build(repo, index, case, reuse)
    print(f"\n== {n} files, model {model}: first build {first.wall:.1f} s, peak RSS {first.rss_mb:.0f} MB"
          f" ({origin}) ==")  # fmt: skip
    said = "" if origin == "built now" else f", {origin}"
    fig.add(f"update.{tag}.first_build", f"first build, {n:,} files ({model} model{said})", first.wall, "s")
    fig.add(f"update.{tag}.first_build_rss", f"first build peak RSS, {n:,} files ({model} model{said})",
            first.rss_mb, "MB", ("<=", RSS_TARGET), "issue 3")  # fmt: skip
    stages: list[dict[str, float]] = []
    noops = []
    for r in range(runs):  # a commit that changes no indexed file: the bundle records the new commit
        git(repo, "commit", "-q", "--allow-empty", "-m", f"no-op {r}")
        noops.append(timed(index, repo, stages))
    wall = statistics.median(noops)
    print(f"  no-op update:       median {wall:.3f} s  (target <= {NOOP_TARGET} s)")
    print(f"      stages: {breakdown(stages, wall)}")
    judged = model == "default"  # the targets are a hook's, which runs the model
    fig.add(f"update.{tag}.noop", f"no-op update, {case.column}", wall, "s",
            ("<=", NOOP_TARGET) if judged else None, "issue 4" if judged else "",
            cell=(TABLE, "no-op update", case.column))  # fmt: skip
    medians: dict[int, float] = {}
    for k in CHANGES:
        times: list[float] = []
        stages = []
        for r in range(runs):
            edit(repo, k, r)
            times.append(timed(index, repo, stages))
        wall = medians[k] = statistics.median(times)
        CPU.setdefault(case, {})[k] = statistics.median(s["cpu"] for s in stages)
        target = f"  (target <= {FIVE_TARGET} s)" if k == 5 and judged else ""
        print(f"  {k:3} files changed:  median {wall:.3f} s{target}")
        print(f"      stages: {breakdown(stages, wall)}")
        five = k == 5 and judged
        fig.add(f"update.{tag}.changed{k}", f"update, {k} file{'s' * (k > 1)} changed, {case.column}", wall,
                "s", ("<=", FIVE_TARGET) if five else None, "issue 4" if five else "",
                cell=(TABLE, f"{k} file{'s' * (k > 1)} changed", case.column))  # fmt: skip
    return repo, medians


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="1000:default,300:none,3000:none,30000:none", help="SIZE:MODEL,...")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--rounds", type=int, default=7, help="rounds of one-file updates of every repository, in turn"
    )
    ap.add_argument(
        "--reuse", action="store_true", help="start from cached first builds (bench/run.py --quick)"
    )
    json_option(ap)
    args = ap.parse_args()
    fig = Figures("update_speed")
    now = datetime.datetime.now(datetime.UTC)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{now:%Y-%m-%dT%H:%M}Z, load {load_average()}")  # fmt: skip
    imports = statistics.median(timed([*CORA, "--version"], Path.cwd()) for _ in range(5))
    model = "from cora_ci.embedding import load_embedder as l; l('default').embed_documents(['x'])"
    load = statistics.median(timed([sys.executable, "-c", model], Path.cwd()) for _ in range(3))
    print(f"process start + CLI imports: {imports:.3f} s; + default model load and first call: {load:.3f} s")
    fig.add("update.start", "process start + CLI imports", imports, "s")
    fig.add("update.start_model", "process start + model load and first embedding", load, "s",
            ("<=", START_TARGET), "issue 4")  # fmt: skip
    cases = parse_cases(args.cases)
    by_case: dict[Case, dict[int, float]] = {}
    repos: dict[Case, Path] = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = tmp
        for case in cases:
            repos[case], by_case[case] = bench_case(fig, Path(tmp), case, args.runs, args.reuse)
        growth(fig, by_case)
        paired_growth(fig, repos, args.rounds)
    if not any(c.files >= 10000 for c in cases):
        fig.skip("update.10k", "updates of a 10,000-file repository", "not in --cases")
    fig.write(args.json)


def growth(fig: Figures, by_case: dict[Case, dict[int, float]]) -> None:
    """The same change on each repository against the next smaller one, with the same model: what
    the size itself costs (300 -> 3,000 -> 30,000 files in issue 19's cases)."""
    for model in dict.fromkeys(c.model for c in by_case):
        sizes = sorted(c.files for c in by_case if c.model == model)
        for small, large in ((Case(a, model), Case(b, model)) for a, b in itertools.pairwise(sizes)):
            _growth(fig, by_case, small, large)
    if not any(len({c.files for c in by_case if c.model == m}) > 1 for m in {c.model for c in by_case}):
        fig.skip(
            "update.growth", "update cost, larger vs smaller repository", "one repository size per model"
        )


def _growth(fig: Figures, by_case: dict[Case, dict[int, float]], small: Case, large: Case) -> None:
    model, times = small.model, large.files // small.files
    for k in CHANGES:
        ratio = by_case[large][k] / by_case[small][k]
        cpu = CPU[large][k] / CPU[small][k] if CPU.get(small, {}).get(k) else float("nan")
        print(f"  {k:3} changed, model {model}: {large.files:,} / {small.files:,} files = {ratio:.2f}x "
              f"(CPU seconds {cpu:.2f}x)")  # fmt: skip
        if k == 1:
            fig.add(f"update.growth_cpu.{model}.{large.files}", f"update CPU seconds, 1 changed: "
                    f"{large.files:,} / {small.files:,} files, model {model}", cpu, "x")  # fmt: skip
        column = f"{large.files:,} / {small.files:,} files ({times}x), model {model}"
        fig.add(f"update.growth.{model}.{large.files}.changed{k}",
                f"update time, {k} changed: {large.files:,} / {small.files:,} files, model {model}",
                ratio, "x", cell=(TABLE, f"{k} file{'s' * (k > 1)} changed", column))  # fmt: skip


def paired_growth(fig: Figures, repos: dict[Case, Path], rounds: int) -> None:
    """One-file updates of every repository in turn, round after round, and each size's ratio to
    the next smaller one taken round by round (the median of the rounds' ratios): the medians
    above come minutes apart, and this machine's speed drifts by a third in minutes (bench/
    RESULTS.md), which a paired ratio leaves out. The judged growth figure (issue 19)."""
    if all(len({c.files for c in repos if c.model == m}) < 2 for m in {c.model for c in repos}):
        return  # one size per model: no ratio to take
    times: dict[Case, list[float]] = {c: [] for c in repos}
    for r in range(rounds):
        for case, repo in repos.items():
            edit(repo, 1, 1000 + r)
            times[case].append(timed([*CORA, "index", "-q", "--model", case.model], repo))
    for model in dict.fromkeys(c.model for c in repos):
        sizes = sorted(c.files for c in repos if c.model == model)
        for small, large in ((Case(a, model), Case(b, model)) for a, b in itertools.pairwise(sizes)):
            ratios = [b / a for a, b in zip(times[small], times[large], strict=True)]
            ratio = statistics.median(ratios)
            each = f"{statistics.median(times[small]):.3f} / {statistics.median(times[large]):.3f} s"
            spread = f"{min(ratios):.2f}-{max(ratios):.2f}x"
            print(f"  paired, {rounds} rounds: 1 changed, model {model}: {large.files:,} / {small.files:,} "
                  f"files = {ratio:.2f}x (rounds {spread}; medians {each})")  # fmt: skip
            fig.add(f"update.growth_paired.{model}.{large.files}",
                    f"update time, 1 changed, paired rounds: {large.files:,} / {small.files:,} files, "
                    f"model {model}", ratio, "x", ("<=", GROWTH_TARGET),
                    "issue 19: a one-file update follows the change")  # fmt: skip


if __name__ == "__main__":
    main()
