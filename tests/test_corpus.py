"""Nothing lost on real code: every non-blank line of every text file of this repository and of
the installed packages' sources lies in some chunk."""

from __future__ import annotations

import subprocess
import sysconfig
from pathlib import Path

import pytest
from conftest import uncovered

from cora_ci.chunking import chunk_file
from cora_ci.config import Config

REPO = Path(__file__).resolve().parent.parent
SITE = Path(sysconfig.get_paths()["purelib"])
SOURCE_SUFFIXES = {
    ".py",
    ".pyi",
    ".js",
    ".ts",
    ".md",
    ".toml",
    ".json",
    ".yaml",
    ".yml",
    ".txt",
    ".cfg",
    ".rs",
    ".c",
    ".h",
}


def _files(root: Path, limit_bytes: int) -> list[Path]:
    out = []
    for p in sorted(root.rglob("*")):
        if ".git" in p.parts or not p.is_file() or p.is_symlink() or p.suffix not in SOURCE_SUFFIXES:
            continue
        if p.stat().st_size <= limit_bytes:
            out.append(p)
    return out


def _own_files(limit_bytes: int) -> list[Path]:
    """This repository's files as git lists them (tracked, or new and not ignored): not the venv
    or benchmark caches in the working tree, which other tests cover or which change under a test
    while a benchmark runs beside it. Outside a git checkout, every file under the root."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=False)  # fmt: skip
    if listed.returncode != 0:
        return _files(REPO, limit_bytes)
    paths = sorted(REPO / n for n in listed.stdout.decode().split("\0") if n)
    return [p for p in paths if p.suffix in SOURCE_SUFFIXES and p.is_file() and not p.is_symlink()
            and p.stat().st_size <= limit_bytes]  # fmt: skip


def _check(paths: list[Path], root: Path) -> None:
    cfg = Config()
    failures = []
    for p in paths:
        data = p.read_bytes()
        r = chunk_file(p.relative_to(root).as_posix(), data, cfg)
        if r.strategy is None:
            continue
        missing = uncovered(r, data)
        if missing:
            failures.append(f"{p}: lines {missing[:10]}")
    assert not failures, "\n".join(failures[:20])


def test_every_line_of_this_repository_is_chunked() -> None:
    files = _own_files(2_000_000)
    assert len(files) > 20
    _check(files, REPO)


def _packages() -> list[str]:
    return sorted(p.name for p in SITE.iterdir() if p.is_dir() and not p.name.endswith((".dist-info", ".egg-info"))
                  and p.name != "__pycache__")  # fmt: skip


@pytest.mark.parametrize("package", _packages())
def test_every_line_of_installed_package_sources_is_chunked(package: str) -> None:
    _check(_files(SITE / package, 2_000_000), SITE)


def test_the_check_can_fail() -> None:
    from conftest import run_chunk

    src = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
    r = run_chunk("m.py", src, min_tokens=0)
    r.chunks.pop()
    assert uncovered(r, src.encode()) == [5, 6]
