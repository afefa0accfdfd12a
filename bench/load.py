"""Load: N concurrent `cora-ci query` processes and one updater (a commit, then `cora-ci index`,
in a loop) against the same bundle. Prints queries done, errors, latency under load, updates done,
and torn reads. Exit status 1 if there was any error or torn read.

    python bench/load.py [--seconds 60] [--queries 8] [--model default|none] [--source DIR]

Each query runs with `--format json`, which names the version of the bundle that answered
(`bundle_id`, the sha256 of its manifest). The updater records the id of every version it made
and the commit it indexed. A query is torn if its version is not one of those, or if any line of
a result's text (`. . .` elision lines aside) is not a line of that file at that version's commit:
each commit appends a new function to a probe file, so a result mixing versions shows it.
Queries run outside the repository, so nothing is re-bound to the (changing) working tree.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

QUERIES = [
    "probe function returning its number",
    "load_probe_3",
    "parse header links",
    "how is a bundle verified",
    "write the manifest atomically",
    "Auth login",
    "render results as json",
    "bucket of a file",
]
PROBE = "pkg/load_probe.py"
CLI = [sys.executable, "-m", "cora_ci"]


@dataclass
class Report:
    queries: int = 0
    errors: list[str] = field(default_factory=list)
    torn: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    updates: int = 0
    update_seconds: list[float] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)  # queries answered per bundle version

    def lines(self) -> list[str]:
        lat = sorted(self.latencies) or [0.0]
        p95 = lat[min(len(lat) - 1, round(0.95 * (len(lat) - 1)))]
        upd = statistics.median(self.update_seconds) if self.update_seconds else 0.0
        return [
            f"queries {self.queries}, errors {len(self.errors)}, torn reads {len(self.torn)}",
            f"latency p50 {statistics.median(lat):.2f} s, p95 {p95:.2f} s, max {lat[-1]:.2f} s",
            f"updates {self.updates} (median {upd:.2f} s), versions answered by queries {len(self.seen)}",
            *[f"error: {e}" for e in self.errors[:5]],
            *[f"torn: {t}" for t in self.torn[:5]],
        ]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def make_repo(root: Path, source: Path | None) -> Path:
    """A git repository: a copy of `source`'s tracked files (default: a small generated package)."""
    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "load@example.com")
    _git(repo, "config", "user.name", "load")
    if source is not None:
        for rel in _git(source, "ls-files").splitlines():
            if (source / rel).is_file() and not (source / rel).is_symlink():
                (repo / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source / rel, repo / rel)
    else:
        for i in range(40):
            body = "".join(
                f"def parse_header_{i}_{j}(value):\n    '''Split header {j}.'''\n"
                f"    return value.split({j!r})\n\n\n"
                for j in range(8)
            )
            (repo / "pkg" / f"m{i}.py").parent.mkdir(parents=True, exist_ok=True)
            (repo / "pkg" / f"m{i}.py").write_text(body)
    (repo / PROBE).parent.mkdir(parents=True, exist_ok=True)
    (repo / PROBE).write_text('"""Functions the load test appends, one per commit."""\n')
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "start")
    return repo


def bundle_id(bundle: Path) -> str:
    return hashlib.sha256((bundle / "manifest.msgpack").read_bytes()).hexdigest()


class Load:
    def __init__(self, repo: Path, bundle: Path, model: str, env: dict[str, str], away: Path) -> None:
        self.repo, self.bundle, self.model, self.env, self.away = repo, bundle, model, env, away
        self.versions: dict[str, str] = {}  # bundle id -> commit
        self.answers: list[tuple[str, list[dict[str, object]]]] = []
        self.report = Report()
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def index(self) -> None:
        t = time.perf_counter()
        p = subprocess.run(
            [*CLI, "index", str(self.repo), "--out", str(self.bundle), "--model", self.model, "-q"],
            capture_output=True,
            text=True,
            env=self.env,
        )
        with self.lock:
            if p.returncode != 0:
                self.report.errors.append(f"index: {p.stderr.strip()}")
                return
            self.report.update_seconds.append(time.perf_counter() - t)
            self.versions[bundle_id(self.bundle)] = _git(self.repo, "rev-parse", "HEAD").strip()

    def updater(self) -> None:
        n = 0
        while not self.stop.is_set():
            n += 1
            with (self.repo / PROBE).open("a") as f:
                f.write(
                    f"\n\ndef load_probe_{n}():\n    '''Probe function returning its number, {n}.'''\n"
                    f"    return {n}\n"
                )
            _git(self.repo, "commit", "-qam", f"probe {n}")
            self.index()
            with self.lock:
                self.report.updates += 1

    def querier(self, k: int) -> None:
        i = k
        while not self.stop.is_set():
            text = QUERIES[i % len(QUERIES)]
            i += 1
            t = time.perf_counter()
            p = subprocess.run(
                [*CLI, "query", text, "--bundle", str(self.bundle), "--format", "json", "-k", "8"],
                capture_output=True,
                text=True,
                env=self.env,
                cwd=self.away,
            )
            took = time.perf_counter() - t
            with self.lock:
                self.report.queries += 1
                self.report.latencies.append(took)
                if p.returncode != 0 or p.stderr.strip():
                    self.report.errors.append(f"query {text!r}: exit {p.returncode}: {p.stderr.strip()}")
                    continue
                doc = json.loads(p.stdout)
                self.answers.append((doc["bundle_id"], doc["results"]))

    def check(self) -> None:
        """Each answer's version is one the updater made, and its texts are that commit's lines."""
        files: dict[tuple[str, str], set[str] | None] = {}
        for bid, results in self.answers:
            self.report.seen[bid] = self.report.seen.get(bid, 0) + 1
            commit = self.versions.get(bid)
            if commit is None:
                self.report.torn.append(f"bundle {bid[:12]} is not a version the updater made")
                continue
            for r in results:
                path = str(r["path"])
                if (commit, path) not in files:
                    try:
                        files[commit, path] = set(_git(self.repo, "show", f"{commit}:{path}").splitlines())
                    except subprocess.CalledProcessError:
                        files[commit, path] = None
                lines = files[commit, path]
                bad = [
                    ln
                    for ln in str(r["text"]).splitlines()
                    if ln.strip() != ". . ." and (lines is None or ln not in lines)
                ]
                if bad:
                    self.report.torn.append(f"{path} in {bid[:12]} ({commit[:12]}): {bad[0]!r}")


def run_load(seconds: float, queries: int, model: str, source: Path | None, root: Path) -> Report:
    """Build the bundle, then run `queries` query loops and the update loop for `seconds`."""
    repo = make_repo(root, source)
    bundle = root / "bundle"
    env = {**os.environ, "XDG_CACHE_HOME": str(root / "cache"), "NO_COLOR": "1"}
    env.pop("CORA_DEBUG", None)
    (root / "away").mkdir()
    load = Load(repo, bundle, model, env, root / "away")
    load.index()
    if load.report.errors:
        return load.report
    threads = [threading.Thread(target=load.querier, args=(k,)) for k in range(queries)]
    threads.append(threading.Thread(target=load.updater))
    for t in threads:
        t.start()
    time.sleep(seconds)
    load.stop.set()
    for t in threads:
        t.join()
    load.check()
    return load.report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--queries", type=int, default=8)
    ap.add_argument("--model", default="default")
    ap.add_argument(
        "--source",
        type=Path,
        default=Path(__file__).resolve().parent.parent,
        help="a git repository whose tracked files make the indexed repository (default: cora-ci)",
    )
    args = ap.parse_args()
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}; "
        f"{args.queries} query processes + 1 updater for {args.seconds:.0f} s, model {args.model}"
    )
    with tempfile.TemporaryDirectory(prefix="cora-load-") as tmp:
        report = run_load(args.seconds, args.queries, args.model, args.source, Path(tmp))
    for line in report.lines():
        print(line)
    sys.exit(1 if report.errors or report.torn else 0)


if __name__ == "__main__":
    main()
