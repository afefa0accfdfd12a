"""The installed `cora-ci` console script, run as a user runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cora_ci.errors import CODES

CORA = shutil.which("cora-ci", path=os.path.dirname(sys.executable)) or "cora-ci"
README = Path(__file__).resolve().parent.parent / "README.md"


def cora(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CORA, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **env}, check=False)  # fmt: skip


def test_chunk_json_has_every_field(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo({"src/auth.py": "class Auth:\n    def login(self, user):\n        return user\n"})
    out = cora("chunk", "src/auth.py", "--format", "json", cwd=repo)
    assert out.returncode == 0, out.stderr
    chunks = json.loads(out.stdout)
    fields = {"id", "path", "lang", "kind", "symbol", "symbols", "anchor", "hierarchy", "parent", "children",
              "start_line", "end_line", "tokens", "header", "text", "strategy", "diagnostics"}  # fmt: skip
    assert chunks and all(fields <= set(c) for c in chunks)
    assert {c["anchor"] for c in chunks} >= {"src/auth.py::Auth"}


def test_chunk_text_is_plain_without_a_tty_or_with_no_color(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo({"a.py": "def f():\n    return 1\n"})
    out = cora("chunk", "a.py", "--format", "text", cwd=repo, NO_COLOR="1")
    assert out.returncode == 0 and "\x1b[" not in out.stdout
    assert "a.py:1-2" in out.stdout and "1 │ def f():" in out.stdout


def test_skipped_files_are_reported_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "x.bin").write_bytes(b"\x00\x01\x02" * 100)
    out = cora("chunk", str(tmp_path / "x.bin"), cwd=tmp_path)
    assert out.returncode == 0 and json.loads(out.stdout) == []
    assert "CORA-CHK-003" in out.stderr


@pytest.mark.parametrize(
    ("args", "setup", "code"),
    [
        (["chunk", "missing.py"], None, "CORA-IO-001"),
        (["chunk", "--config", "pyproject.toml", "."], "[tool.cora-ci]\nmax_tokenz = 1\n", "CORA-CFG-001"),
        (["chunk", "--config", "pyproject.toml", "."], "[tool.cora-ci]\nmax_tokens = 'x'\n", "CORA-CFG-002"),
    ],
)
def test_errors_are_one_line_with_code_and_exit_status(
    tmp_path: Path, args: list[str], setup: str | None, code: str
) -> None:
    if setup:
        (tmp_path / "pyproject.toml").write_text(setup)
    out = cora(*args, cwd=tmp_path)
    assert out.returncode == CODES[code].exit_status
    assert out.stderr.count("\n") == 1 and out.stderr.startswith(f"error: {code}: ")
    assert "Traceback" not in out.stderr


def test_readme_error_table_lists_every_code() -> None:
    text = README.read_text()
    for code in CODES.values():
        assert f"| `{code.code}` |" in text, code.code
