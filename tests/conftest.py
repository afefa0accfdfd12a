from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from cora_ci.chunking import FileResult, chunk_file
from cora_ci.chunking.model import Chunk
from cora_ci.config import from_mapping


def run_chunk(path: str, source: str | bytes, **cfg: object) -> FileResult:
    data = source if isinstance(source, bytes) else textwrap.dedent(source).lstrip("\n").encode()
    return chunk_file(path, data, from_mapping(cfg))


def by_anchor(result: FileResult) -> dict[str, Chunk]:
    return {a: c for c in result.chunks for a in c.anchors}


def uncovered(result: FileResult, data: bytes) -> list[int]:
    """Non-blank lines of the file that no chunk holds verbatim."""
    from cora_ci.files.text import decode

    lines = decode(data).lines
    covered = bytearray(len(lines) + 2)
    for c in result.chunks:
        for a, b in c.verbatim_ranges():
            covered[a : b + 1] = b"\1" * (b - a + 1)
    return [i + 1 for i, line in enumerate(lines) if line.strip() and not covered[i + 1]]


CORA = shutil.which("cora-ci", path=os.path.dirname(sys.executable)) or "cora-ci"


def cora(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`cora-ci ARGS` as a user runs it, in `cwd`, with `env` over this process's environment."""
    return subprocess.run([CORA, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **env}, check=False)  # fmt: skip


def first_result(repo: Path, words: str, env: dict[str, str]) -> dict[str, object]:
    """The first result of `cora-ci query WORDS --format json` in `repo`."""
    out = cora("query", words, "--format", "json", "-k", "3", cwd=repo, **env)
    assert out.returncode == 0, out.stderr
    first: dict[str, object] = json.loads(out.stdout)["results"][0]
    return first


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def init_repo(repo: Path, files: dict[str, str]) -> Path:
    """A real git repository at `repo` (created) with the given files committed."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    for name, text in files.items():
        p = repo / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    return repo


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[[dict[str, str]], Path]:
    """A real git repository with the given files committed."""
    return lambda files: init_repo(tmp_path / "repo", files)


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Verification records, checked versions and unpacked archives in this test's own cache, and
    build times from the commit (no SOURCE_DATE_EPOCH from the environment)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)


def dedent_files(files: dict[str, str]) -> dict[str, str]:
    """Test sources written indented in the test file, as they stand in a repository."""
    return {k: textwrap.dedent(v) for k, v in files.items()}
