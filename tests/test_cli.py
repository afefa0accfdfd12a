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
ERRORS_DOC = Path(__file__).resolve().parent.parent / "docs" / "errors.md"


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


def test_a_file_that_cannot_be_read_fails_in_one_line_after_skipped_ones(tmp_path: Path) -> None:
    """The fuzz test's `cora-ci chunk /`: binary files skipped were printed, then /proc's
    `attr/current` failed to read, so the error came after dozens of lines."""
    unreadable = Path("/proc/self/attr/current")
    try:
        unreadable.read_bytes()
        pytest.skip("this kernel reads /proc/self/attr/current")
    except OSError:
        pass
    (tmp_path / "a.bin").write_bytes(b"\x00\x01\x02" * 100)  # read first: files go in name order
    out = cora("chunk", str(tmp_path / "a.bin"), str(unreadable), cwd=tmp_path)
    assert out.returncode != 0 and out.stderr.startswith("error: CORA-IO-002: ")
    assert out.stderr.count("\n") == 1, out.stderr


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


def test_the_error_table_lists_every_code() -> None:
    text = ERRORS_DOC.read_text()
    for code in CODES.values():
        assert f"| `{code.code}` |" in text, code.code


def test_index_info_verify_from_the_command_line(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo({"src/auth.py": "class Auth:\n    def login(self, user):\n        return user\n",
                      "README.md": "# Demo\n\nSome text.\n"})  # fmt: skip
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = cora("index", "--model", "none", cwd=repo, **env)
    assert out.returncode == 0, out.stderr
    assert "indexed rev" in out.stdout and "2 files (0 skipped)" in out.stdout and "bundle " in out.stdout
    assert "chunk" not in out.stderr  # no progress off a terminal (tests/test_progress.py has the terminal)
    info = cora("info", "--format", "json", cwd=repo, **env)
    assert info.returncode == 0, info.stderr
    d = json.loads(info.stdout)
    assert d["stats"]["files"] == 2 and d["model"] is None and d["source"]["kind"] == "rev"
    text = cora("info", cwd=repo, **env)
    assert "model    none (BM25 only)" in text.stdout
    ok = cora("verify", ".cora/index", cwd=repo, **env)
    assert ok.returncode == 0 and ok.stdout.startswith("ok ")
    meta = repo / ".cora" / "index" / "bm25" / "meta.json"
    meta.write_text(meta.read_text().replace("freq", "frex"))
    bad = cora("verify", ".cora/index", cwd=repo, **env)
    assert bad.returncode == 5 and "FAIL bm25/meta.json: checksum mismatch" in bad.stderr
    assert "error: CORA-BND-003" in bad.stderr and "Traceback" not in bad.stderr


def test_an_update_ends_without_teardown_its_output_whole_and_nothing_left(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`index` and `hook sync --wait` end with `os._exit` once the bundle is swapped in (freeing a large
    repository's tables took 40-75 ms of a hook): no exit handler runs, yet the output is whole,
    no scratch file is left and the lock is free for the next update."""
    repo = make_repo({"src/auth.py": "class Auth:\n    def login(self, user):\n        return user\n"})
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    code = ("import atexit, sys; atexit.register(lambda: print('teardown', file=sys.stderr)); "
            "from cora_ci.cli import main; sys.argv[0] = 'cora-ci'; main()")  # fmt: skip

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", code, *args], cwd=repo, env=env, capture_output=True,
                              text=True, check=False)  # fmt: skip

    first = run("index", "--model", "none", "--timings")
    assert first.returncode == 0 and "teardown" not in first.stderr, first.stderr
    assert first.stdout.splitlines()[-1].startswith("stages: list ")
    (repo / "src" / "auth.py").write_text("class Auth:\n    def logout(self, user):\n        return None\n")
    subprocess.run(["git", "commit", "-qam", "logout"], cwd=repo, check=True)
    hook = run("hook", "sync", "--wait")
    assert hook.returncode == 0 and "teardown" not in hook.stderr and "1 file changed" in hook.stdout
    assert sorted(p.name for p in (repo / ".cora").iterdir()) == [".gitignore", ".index.lock", "index"]
    assert not list((repo / ".cora" / "index").rglob("*.tmp*"))
    bad = run("index", "no/such/dir")  # a failure still exits through sys.exit, with its status
    assert bad.returncode == 4 and "teardown" in bad.stderr
    again = run("index", "--model", "none")
    assert again.returncode == 0 and "up to date" in again.stdout


@pytest.mark.parametrize(
    ("args", "code", "status"),
    [
        (("index", "no/such/dir"), "CORA-IO-001", 4),
        (("index", ".", "--rev", "nope", "--model", "none"), "CORA-IO-003", 4),
        (("index", ".", "--model", "no/such/model"), "CORA-MDL-001", 6),
        (("info", "missing-bundle"), "CORA-BND-001", 5),
        (("verify", "missing-bundle"), "CORA-BND-001", 5),
    ],
)
def test_index_errors_are_one_line_with_a_code(
    make_repo, args: tuple[str, ...], code: str, status: int
) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo({"a.py": "x = 1\n"})
    out = cora(*args, cwd=repo)
    assert out.returncode == status, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {code}: "), out.stderr


def test_what_was_left_out_is_named_in_the_summary_and_listed_by_info(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    aws = "AKIA" + "ABCDEFGHIJKLMNOP"  # built here, so no literal key sits in this repository
    files = {"a.py": "x = 1\n", ".env": "SECRET=1\n", "creds.py": f'AWS_KEY = "{aws}"\n',
             **{f"bad{i}.py": "def f(:\n  pass\n" for i in range(5)}}  # fmt: skip
    repo = make_repo(files)
    (repo / "blob.bin").write_bytes(bytes(range(256)) * 8)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "binary"], cwd=repo, check=True)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = cora("index", "--model", "none", "-q", cwd=repo, **env)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "8 diagnostics" in lines[0]
    named = [line.strip() for line in lines if line.startswith("  ")]
    assert named[:3] == [
        ".env: CORA-SEC-001 conventional secrets file skipped (allow_secret_files indexes it)",
        "blob.bin: CORA-CHK-003 binary file skipped",
        f"creds.py:1: CORA-SEC-002 aws-access-key-id on line 1 (fingerprint {_fp(aws)}): redacted",
    ]
    assert len(named) == 6 and named[-1] == "+3 more: cora-ci info --diagnostics"
    assert aws not in out.stdout
    listed = cora("info", "--diagnostics", cwd=repo, **env).stdout.splitlines()
    assert len(listed) == 8 and listed[:3] == named[:3] and listed[-1].startswith("bad4.py: CORA-CHK-002")
    doc = json.loads(cora("info", "--diagnostics", "--format", "json", cwd=repo, **env).stdout)
    assert doc["diagnostics"][2] == {"path": "creds.py", "line": 1, "code": "CORA-SEC-002",
                                     "message": f"aws-access-key-id on line 1 (fingerprint {_fp(aws)}): redacted"}  # fmt: skip


def _fp(secret: str) -> str:
    from cora_ci.chunking.secrets import fingerprint

    return fingerprint(secret)


def test_a_file_whose_name_holds_a_secret_stays_out_unnamed(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    token = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    repo = make_repo({f"keys/{token}.txt": "nothing here\n", "ok.py": "x = 1\n"})
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = cora("index", "--model", "none", "-q", cwd=repo, **env)
    assert out.returncode == 0, out.stderr
    assert "  (a file name): CORA-SEC-004 github-token in a file's name: file left out" in out.stdout
    assert token not in out.stdout and "1 files" in out.stdout
    for p in (repo / ".cora" / "index").rglob("*"):
        assert not p.is_file() or token.encode() not in p.read_bytes(), p


_THREADS = """
import os, sys
from cora_ci import cli
sys.argv = ["cora-ci", "--version"]
try:
    cli.main()
except SystemExit:
    pass
import numpy
print(os.environ.get("OPENBLAS_NUM_THREADS"), len(os.listdir("/proc/self/task")))
"""


@pytest.mark.skipif(
    not Path("/proc/self/task").is_dir() or (os.cpu_count() or 1) < 2, reason="Linux, 2+ cores"
)
def test_numpy_runs_one_blas_thread_under_the_command_line_unless_the_user_says() -> None:
    """OpenBLAS would start a thread a core, spinning after each call: the command line asks for one."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}

    def run(script: str, **more: str) -> list[str]:
        out = subprocess.run(
            [sys.executable, "-c", script], env={**env, **more}, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.split()[-2:]  # after `--version`'s line

    assert run(_THREADS) == ["1", "1"]  # the main thread alone
    alone = run("import os, numpy; print(len(os.listdir('/proc/self/task')))")
    assert int(alone[0]) > 1  # numpy imported without the command line: OpenBLAS's own threads
    assert run(_THREADS, OPENBLAS_NUM_THREADS="2") == ["2", "2"]  # the user's setting stands
