"""What every bench script shares: its figures as JSON for bench/run.py, the machine, child processes.

Each script keeps its human output and, given `--json FILE`, also writes the figures it measured
(value, unit, target, pass/fail) and the ones it skipped, so `bench/run.py` can put every figure
next to its target without parsing prose.
"""

from __future__ import annotations

import argparse
import compileall
import json
import operator
import os
import platform
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Processes are timed as a user runs them: with compiled bytecode cached. A shell that sets
# PYTHONDONTWRITEBYTECODE (some CI images and sandboxes do) would make every child compile
# cora-ci's modules from source, ~80-100 ms of each process start; so the children write and
# reuse bytecode like a default installation, and the package is compiled once up front.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# In-process figures are taken as the command line runs cora-ci's code, numpy's BLAS on one thread
# (`cora_ci.cli._one_blas_thread`): every script imports this module before numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "cora_ci"), quiet=1)

Target = tuple[str, float]  # (comparison, bound), e.g. ("<=", 0.3): the value must satisfy it
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
}


@dataclass
class Figures:
    """The figures of one script run; `write` saves them where `--json` says (nothing without it)."""

    script: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)  # free-form extras (the quality plot's points)

    def add(self, key: str, label: str, value: float, unit: str = "", target: Target | None = None,
            source: str = "", cell: tuple[str, str, str] | None = None) -> None:  # fmt: skip
        """One measured figure; with a target, pass/fail is decided here, once, for every reader.

        `cell` = (table title, row, column) puts the figure in a matrix instead of a row of its own
        (the quality metrics of each ranker).
        """
        ok = None if target is None else _OPS[target[0]](value, target[1])
        self.rows.append({"key": key, "label": label, "value": value, "unit": unit,
                          "target": None if target is None else [target[0], target[1]],
                          "target_source": source, "ok": ok, "cell": cell})  # fmt: skip

    def skip(self, key: str, label: str, why: str) -> None:
        """A figure this run did not measure (quick mode, missing tool): said, never silently absent."""
        self.skipped.append({"key": key, "label": label, "why": why})

    def write(self, path: Path | None) -> None:
        if path is None:
            return
        doc = {"script": self.script, "figures": self.rows, "skipped": self.skipped, "data": self.data}
        path.write_text(json.dumps(doc, indent=1) + "\n")


def json_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the figures as JSON (bench/run.py)")


def model_tag(model: str) -> str:
    """A model option as a cache directory's suffix: the named tiers as they are, a directory by name
    (so two models' bundles never share a cache entry)."""
    named = ("default", "none", "static", "minilm")
    return model if model in named else "dir-" + "".join(c if c.isalnum() else "-" for c in Path(model).name)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> str:
    """Other work on the machine skews every figure; the load average tells a reader when it did."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"


@dataclass(frozen=True)
class Run:
    wall: float  # seconds
    rss_mb: float  # peak RSS of this child alone (ru_maxrss from wait4)
    stdout: str
    cpu: float = 0.0  # user + system seconds of this child: what load from other work inflates least


def measured_run(
    cmd: Sequence[str | Path], cwd: Path | None = None, env: dict[str, str] | None = None
) -> Run:
    """Run a child to completion; wait4 gives its own peak RSS (RUSAGE_CHILDREN is a max over all).

    Fails loudly with the child's stderr, since a figure from a failed run would be a lie.
    """
    t = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(list(map(str, cmd)), cwd=cwd, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        raise SystemExit(
            f"failed ({proc.returncode}): {' '.join(map(str, cmd))}\n{stdout[-2000:]}{stderr[-2000:]}"
        )
    rss = usage.ru_maxrss / 1024  # KiB on Linux
    return Run(wall, rss, stdout, usage.ru_utime + usage.ru_stime)


def pct(xs: Sequence[float], p: float) -> float:
    """The p-th percentile by nearest rank (no interpolation: every value reported was measured)."""
    s = sorted(xs)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def bm25(postings: Mapping[str, Mapping[int, int]], lengths: Any, query: Mapping[str, int], k1: float,
         b: float) -> Any:  # fmt: skip
    """BM25 scores of every document (numpy array, by document number) for `query` (word ->
    times it is asked for): Lucene's idf, `lengths` the documents' word counts."""
    import math

    import numpy as np

    n = len(lengths)
    scores = np.zeros(n)
    avg = float(lengths.mean()) if n else 1.0
    for w, qtf in query.items():
        post = postings.get(w)
        if not post:
            continue
        idf = math.log(1 + (n - len(post) + 0.5) / (len(post) + 0.5))
        ids = np.fromiter(post.keys(), dtype=np.int64, count=len(post))
        tf = np.fromiter(post.values(), dtype=np.float64, count=len(post))
        norm = k1 * (1 - b + b * lengths[ids] / avg)
        scores[ids] += qtf * idf * tf * (k1 + 1) / (tf + norm)
    return scores
