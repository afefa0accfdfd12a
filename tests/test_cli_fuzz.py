"""Whatever bytes reach an argument or a config value, the answer is a result or one coded line.

Random bytes (not UTF-8 included) go into each argument slot of each command, and into each
configuration key; the process must exit with a registered status and, when it fails, print one
line `error: CORA-...: ...` on stderr: never a traceback, never CORA-INT-001.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import init_repo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cora_ci.errors import CODES

CORA = shutil.which("cora-ci", path=os.path.dirname(sys.executable)) or "cora-ci"
STATUSES = {0} | {c.exit_status for c in CODES.values()} - {CODES["CORA-INT-001"].exit_status}

# `{}` is where the random argument goes; the bundle and repository are the fixture's.
COMMANDS = [
    ["query", "{}"],
    ["query", "login", "--lang", "{}"],
    ["query", "login", "--boost", "{}"],
    ["query", "login", "--path", "{}"],
    ["query", "login", "-k", "{}"],
    ["query", "login", "--bundle", "{}"],
    ["show", "{}"],
    ["related", "{}"],
    ["outline", "{}"],
    ["info", "{}"],
    ["verify", "{}"],
    ["index", "--rev", "{}", "--model", "none", "--out", "{out}"],
    ["diff", ".cora/index", "{}"],
    ["chunk", "{}"],
    ["unpack", "{}", "-o", "{out}"],
]
CONFIG_KEYS = ["include", "exclude", "max_tokens", "min_tokens", "secrets", "secret_files", "model", "bundles",
               "lock_files", "languages", "nonsense"]  # fmt: skip

arg_bytes = st.binary(min_size=0, max_size=40).filter(lambda b: b"\0" not in b)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("fuzz")
    repo = init_repo(
        tmp / "repo", {"src/auth.py": "class Auth:\n    def login(self, user):\n        return user\n"}
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp / "cache"), "NO_COLOR": "1"}
    subprocess.run(
        [CORA, "index", "--model", "none", "-q"], cwd=repo, env=env, check=True, capture_output=True
    )
    return repo, env


def _check(p: subprocess.CompletedProcess[bytes]) -> None:
    err = p.stderr.decode("utf-8", "replace")
    assert p.returncode in STATUSES, (p.returncode, err)
    assert "Traceback" not in err and "CORA-INT-001" not in err, err
    if p.returncode:
        assert err.startswith("error: CORA-") and err.count("\n") == 1, err


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(COMMANDS), raw=arg_bytes)
def test_any_bytes_in_any_argument(repo: tuple[Path, dict[str, str]], tmp_path: Path, command: list[str],
                                   raw: bytes) -> None:  # fmt: skip
    root, env = repo
    out = tmp_path / f"out-{abs(hash(raw))}"
    args = [os.fsdecode(raw) if a == "{}" else str(out) if a == "{out}" else a for a in command]
    p = subprocess.run([CORA, *args], cwd=root, env=env, capture_output=True, timeout=120, check=False)
    _check(p)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(CONFIG_KEYS), raw=st.binary(max_size=60), quoted=st.booleans())
def test_any_bytes_in_any_config_value(repo: tuple[Path, dict[str, str]], tmp_path: Path, key: str,
                                       raw: bytes, quoted: bool) -> None:  # fmt: skip
    root, env = repo
    value = b'"' + raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"' if quoted else raw
    (root / ".cora.toml").write_bytes(key.encode() + b" = " + value + b"\n")
    try:
        out = tmp_path / f"cfg-{abs(hash((key, raw, quoted)))}"
        p = subprocess.run([CORA, "index", "--worktree", "--model", "none", "-q", "--out", str(out)], cwd=root,
                           env=env, capture_output=True, timeout=120, check=False)  # fmt: skip
        _check(p)
    finally:
        (root / ".cora.toml").unlink()
