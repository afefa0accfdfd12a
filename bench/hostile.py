"""Hostile inputs: time and peak memory of `cora-ci index` (BM25 only) on a 50 MB one-line file
(chunked, and skipped at the default max_file_bytes), 10,000-level nested expressions and a 1 GB
file, each in a fresh git repository; then the time of a query whose text is built to make a
report's readers backtrack (100,000 blank lines, 40,000 dotted words, ...: a pasted report is read
for clues up to 100,000 characters), in process, on a small bundle.

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


# (label, query text): what a report's regular expressions might take quadratic time over
QUERIES = (
    ("100,000 blank lines", "bug\n" + "\n" * 100_000),
    ("30,000 lines of a tab and a space", "bug\n" + "\t \n" * 30_000),
    ("100,000 spaces", "bug " + " " * 100_000),
    ("40,000 dotted words", "a." * 40_000),
    ("30,000 lines `#1`", "#1\n" * 30_000),
    ("20,000 lines `  at `", "  at \n" * 20_000),
    ("8,000 unfinished Ruby frames", "a.rb:1:in '\n" * 8_000),
    ("7,000 diagnostic codes", "(models.W042) " * 7_000),
    ("60,000 `@`", "bug " + "@" * 60_000),
    ("20,000 `a.a/`", "bug " + "a.a/" * 20_000),
    ("10,000 `Warning `", "bug " + "Warning " * 10_000),
    ("15,000 `a.b(`", "bug " + "a.b(" * 15_000),
)


def _queries(root: Path) -> None:
    from cora_ci.build import build
    from cora_ci.bundle import open_bundle
    from cora_ci.retrieval import search

    code = "def total(lines):\n    return sum(lines)\n"
    repo = _repo(root, "queries", lambda r: (r / "shop.py").write_text(code))
    build(repo, model="none")
    bundle = open_bundle(repo / ".cora" / "index")
    search(bundle, "warm up", k=10)
    for label, text in QUERIES:
        t = time.perf_counter()
        search(bundle, text, k=10)
        print(f"query of {label}: {(time.perf_counter() - t) * 1000:.0f} ms")


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
    _queries(root)


if __name__ == "__main__":
    main()
