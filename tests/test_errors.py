"""Every error the CLI can print: a registered code with a one-line message, a hint and a non-zero
exit status, documented in the error table of docs/errors.md; and printed as one line, never a traceback."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import cora_ci
from cora_ci.errors import CODES

ROOT = Path(cora_ci.__file__).parent
ERRORS_DOC = ROOT.parent / "docs" / "errors.md"


def _raised_codes() -> dict[str, list[str]]:
    """Each code passed to `CoraError(...)` in cora_ci/, with where; a code that is not a literal
    must be a caught error's own (`e.code`), so no raise escapes this walk."""
    found: dict[str, list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "CoraError"):
                continue
            where = f"{path.relative_to(ROOT.parent)}:{node.lineno}"
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.setdefault(first.value, []).append(where)
            else:
                assert isinstance(first, ast.Attribute) and first.attr == "code", (
                    f"{where}: code not a literal"
                )
    return found


def _readme_table() -> dict[str, int]:
    rows = re.findall(r"^\| `(CORA-[A-Z]+-\d{3})` \| .+ \| (\d+) \|$", ERRORS_DOC.read_text(), re.MULTILINE)
    return {code: int(status) for code, status in rows}


def test_every_raised_code_is_registered_documented_and_exits_non_zero() -> None:
    raised = _raised_codes()
    table = _readme_table()
    assert len(raised) >= 20, raised  # the walk sees the raises
    for code, where in sorted(raised.items()):
        assert code in CODES, f"{code} ({where}) is not registered in cora_ci/errors.py"
        c = CODES[code]
        assert c.exit_status > 0, f"{code}: an error needs a non-zero exit status"
        assert c.summary and "\n" not in c.summary and c.hint and "\n" not in c.hint, code
        assert table.get(code) == c.exit_status, f"{code}: docs/errors.md says {table.get(code)}"


def test_the_readme_table_and_the_registry_agree() -> None:
    table = _readme_table()
    assert table == {code: c.exit_status for code, c in CODES.items()}


@pytest.fixture
def run(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("CORA_DEBUG", None)

    def go(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cora_ci", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip

    return go


def _one_line_error(p: subprocess.CompletedProcess[str], code: str) -> None:
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {code}: ") and "(hint: " in lines[0], p.stderr
    assert "Traceback" not in p.stderr + p.stdout
    assert p.returncode == CODES[code].exit_status, (p.returncode, p.stderr)


def test_failing_commands_print_one_line_and_exit_as_documented(
    run: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def helper():\n    return 1\n")
    (tmp_path / "bad.toml").write_text("[tool.cora-ci\n")
    (tmp_path / "unknown.toml").write_text("[tool.cora-ci]\nmax_tokenz = 3\n")
    (tmp_path / "junk.tar.gz").write_bytes(b"not an archive")
    bundle = str(repo / ".cora" / "index")
    assert run("index", str(repo), "--model", "none", "-q").returncode == 0
    _one_line_error(run("query", "x", "--bundle", str(tmp_path / "nowhere")), "CORA-BND-001")
    _one_line_error(run("index", str(tmp_path / "nowhere")), "CORA-IO-001")
    _one_line_error(run("index", str(repo), "--config", str(tmp_path / "bad.toml")), "CORA-CFG-003")
    _one_line_error(run("index", str(repo), "--config", str(tmp_path / "unknown.toml")), "CORA-CFG-001")
    _one_line_error(run("query", "  ", "--bundle", bundle), "CORA-QRY-001")
    _one_line_error(run("query", "x", "--bundle", bundle, "--path", "[z-a]"), "CORA-CFG-002")
    _one_line_error(run("show", "a.py::nothing_here", "--bundle", bundle), "CORA-QRY-002")
    _one_line_error(run("unpack", str(tmp_path / "junk.tar.gz")), "CORA-BND-009")
    _one_line_error(run("ci", "prepare"), "CORA-CI-001")
    meta = repo / ".cora" / "index" / "bm25" / "meta.json"
    meta.write_text(meta.read_text() + " ")
    _one_line_error(run("info", bundle), "CORA-BND-003")
    _one_line_error(run("query", "helper", "--bundle", bundle), "CORA-BND-003")
