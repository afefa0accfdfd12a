"""Crash safety: `cora-ci index` killed with SIGKILL at random moments, full builds and updates.

After every kill the bundle is the old one or the new one (its manifest equals one of two reference
builds, byte for byte without a model), `cora-ci verify` passes, and the next update completes. Kill times are
drawn from the measured duration of an uninterrupted run, half of them from its second half,
where the indexes are written and swapped in.

CORA_CRASH_RUNS sets the number of kills with `--model none` (default 50: each costs about one
second on a small repository); two more use the default model.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git

from cora_ci.bundle import manifest as mf
from cora_ci.bundle.leftovers import LINKS, SCRATCH, SHADOW_DIR

RUNS = int(os.environ.get("CORA_CRASH_RUNS", "50"))
SEED = int(os.environ.get("CORA_CRASH_SEED", "7"))


def _module(n: int, variant: int) -> str:
    return "".join(
        f"def func_{n}_{i}(value):\n    '''Step {i} of module {n}.'''\n    return value * {i + variant}\n\n\n"
        for i in range(12)
    )


def _index(repo: Path, out: Path, rev: str, model: str, *extra: str) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "cora_ci", "index", "--rev", rev, "--out", str(out), "--model", model, "-q"]
    return subprocess.Popen([*cmd, *extra], cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _run(repo: Path, out: Path, rev: str, model: str, *extra: str) -> float:
    t = time.perf_counter()
    proc = _index(repo, out, rev, model, *extra)
    _, err = proc.communicate()
    assert proc.returncode == 0, err.decode()
    return time.perf_counter() - t


def _manifest(out: Path) -> bytes:
    """What identifies a bundle: its manifest, which holds every other file's checksum (an update
    writes the same vector file as a fresh build: codes sorted by chunk id)."""
    return (out / mf.MANIFEST).read_bytes()


def _verify(out: Path, repo: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "cora_ci", "verify", str(out)], cwd=repo, capture_output=True)
    assert res.returncode == 0, res.stdout.decode() + res.stderr.decode()


def _kill_loop(repo: Path, tmp: Path, model: str, runs: int, rng: random.Random) -> dict[str, int]:
    """Runs alternating between commits A and B, updates and full builds, until `runs` of them
    were killed; returns counts of which bundle each left (old / new), how many were killed and
    how many finished before their kill time."""
    revs = {"A": git(repo, "rev-parse", "A").strip(), "B": git(repo, "rev-parse", "B").strip()}
    ref = {}
    for name, rev in revs.items():
        _run(repo, tmp / f"ref-{model}-{name}", rev, model)
        ref[name] = _manifest(tmp / f"ref-{model}-{name}")
    out = tmp / f"bundle-{model}"
    _run(repo, out, revs["A"], model)
    at = "A"
    duration = _run(repo, tmp / "timing", revs["B"], model)  # a fresh full build: the longest kind
    seen = {"old": 0, "new": 0, "killed": 0, "finished": 0}
    killed: list[int] = []
    n = -1
    while seen["killed"] < runs:
        n += 1
        assert n < 3 * runs, f"kill times miss the runs: {seen}"
        target = "B" if at == "A" else "A"
        extra = ("--full",) if n % 3 == 2 else ()
        when = rng.uniform(duration / 2, duration) if n % 2 else rng.uniform(0.05, duration)
        proc = _index(repo, out, revs[target], model, *extra)
        time.sleep(when)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            seen["killed"] += 1
            killed.append(proc.pid)
        proc.wait()
        got = _manifest(out)
        assert got in (ref[at], ref[target]), f"run {n}: a bundle that is neither old nor new"
        if proc.returncode == 0:
            seen["finished"] += 1
        new = got == ref[target]
        seen["new" if new else "old"] += 1
        _verify(out, repo)
        at = target if new else at
        if n % 5 == 4 or seen["killed"] == runs:  # the next update completes, and cleans up after the kills
            target = "B" if at == "A" else "A"
            # an uninterrupted update's time resets the kill window: on a shared machine the
            # first timing can be far shorter than runs made when other jobs start
            duration = max(duration / 2, _run(repo, out, revs[target], model))
            if not seen["new"] and seen["killed"] >= runs // 2:  # every kill came before the swap so
                duration *= 2  # far: the machine slowed after the timing (another job), wait longer
            assert _manifest(out) == ref[target]
            at = target
            assert not list(tmp.glob(f".{out.name}.tmp-*")), "leftovers of killed updates"
            assert not _scratch_of(killed), "tmpfs scratch of killed updates"
    return seen


def _scratch_of(pids: list[int]) -> list[str]:
    """The BM25 scratch indexes and link directories in tmpfs of the processes `pids`."""
    if SHADOW_DIR is None:
        return []
    mine = tuple(f"{prefix}{pid}-" for pid in pids for prefix in (SCRATCH, LINKS))
    return [n for n in os.listdir(SHADOW_DIR) if n.startswith(mine)]


@pytest.fixture
def two_commits(make_repo: Callable[[dict[str, str]], Path]) -> Path:
    repo = make_repo({f"pkg/mod_{n}.py": _module(n, 0) for n in range(12)})
    git(repo, "tag", "A")
    for n in range(0, 12, 3):
        (repo / f"pkg/mod_{n}.py").write_text(_module(n, 1))
    (repo / "pkg/mod_1.py").unlink()
    (repo / "pkg/new.py").write_text(_module(99, 0))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "B")
    git(repo, "tag", "B")
    return repo


def test_sigkill_leaves_the_old_or_the_new_bundle(two_commits: Path, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    seen = _kill_loop(two_commits, tmp_path, "none", RUNS, rng)
    print(f"{RUNS} kills (seed {SEED}): {seen}")
    assert seen["killed"] == RUNS
    assert seen["old"] > 0 and seen["new"] > 0  # kills landed both before and after the swap


def test_sigkill_with_the_default_model(two_commits: Path, tmp_path: Path) -> None:
    _kill_loop(two_commits, tmp_path, "default", 2, random.Random(SEED))
