"""Hostile inputs: time and peak memory of `cora-ci index` (BM25 only) on a 50 MB one-line file
(chunked, and skipped at the default max_file_bytes), 10,000-level nested expressions and a 1 GB
file, each in a fresh git repository.

    python bench/hostile.py [--skip-gb] [--keep DIR]

Peak RSS is the cora-ci process's, from wait4 (git's own is printed apart: RUSAGE_CHILDREN of
this script covers the `git add` of the fixtures too, so it is measured before the index runs).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

MB = 1 << 20


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _repo(root: Path, name: str, write: Callable[[Path], None], config: str = "") -> Path:
    repo = root / name
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "b@example.com")
    _git(repo, "config", "user.name", "b")
    (repo / "small.py").write_text("def ok():\n    return 1\n")
    if config:
        (repo / ".cora.toml").write_text(config)
    write(repo)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "fixture")
    return repo


def _write_repeated(path: Path, unit: bytes, size: int, end: bytes = b"\n") -> None:
    block = unit * max(1, (4 * MB) // len(unit))
    with open(path, "wb") as f:
        left = size
        while left > 0:
            f.write(block[:left])
            left -= len(block)
        f.write(end)


def _one_line(repo: Path) -> None:
    _write_repeated(repo / "min.js", b"var a=1;", 50 * MB)


def _nested(repo: Path) -> None:
    (repo / "deep.py").write_text("x = " + "(" * 10_000 + "1" + ")" * 10_000 + "\n")
    (repo / "deep_lines.py").write_text("x = " + "(\n" * 10_000 + "1" + "\n)" * 10_000 + "\n")
    (repo / "deep.json").write_text("[" * 10_000 + "]" * 10_000 + "\n")
    (repo / "deep_lines.json").write_text("[\n" * 10_000 + "]\n" * 10_000)


def _gigabyte(repo: Path) -> None:
    _write_repeated(repo / "huge.log", b"0123456789 abcdef\n", 1024 * MB)


def _index(repo: Path, *extra: str) -> tuple[float, float, int]:
    """Seconds, peak RSS (MB) of the cora-ci process, exit status."""
    t = time.perf_counter()
    cmd = [sys.executable, "-m", "cora_ci", "index", "--model", "none", "-q", *extra]
    proc = subprocess.Popen(cmd, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode:
        print(f"    exit {proc.returncode}: {err.strip()}")
    return time.perf_counter() - t, usage.ru_maxrss / 1024, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-gb", action="store_true", help="leave out the 1 GB file")
    ap.add_argument("--keep", type=Path, help="build the fixtures here and keep them")
    args = ap.parse_args()
    root = Path(args.keep or tempfile.mkdtemp(prefix="cora-hostile-"))
    root.mkdir(parents=True, exist_ok=True)
    print(f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus, python {platform.python_version()}")
    big = 64 * MB
    cases: list[tuple[str, Callable[[Path], None], str, tuple[str, ...]]] = [
        ("50 MB one-line JS, max_file_bytes 64 MB (chunked)", _one_line, f"max_file_bytes = {big}\n", ()),
        ("50 MB one-line JS, default config (skipped)", _one_line, "", ()),
        ("10,000-level nesting: Python ((..)) and JSON [[..]], one line and one per level", _nested, "", ()),
    ]
    if not args.skip_gb:
        cases.append(("1 GB file, default config (skipped, never read whole)", _gigabyte, "", ()))
        cases.append(("1 GB file, --worktree, default config (skipped)", _gigabyte, "", ("--worktree",)))
    for n, (label, write, config, extra) in enumerate(cases):
        t = time.perf_counter()
        repo = _repo(root, f"case{n}", write, config)
        setup = time.perf_counter() - t
        secs, rss, code = _index(repo, *extra)
        verify = subprocess.run([sys.executable, "-m", "cora_ci", "verify"], cwd=repo, capture_output=True)
        print(f"{label}: {secs:.1f} s, peak RSS {rss:.0f} MB, exit {code}, verify exit "
              f"{verify.returncode} (fixture {setup:.1f} s)")  # fmt: skip


if __name__ == "__main__":
    main()
