"""`cora-ci query`, `show` and `pack` as a user runs them, offline and read-only."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import CORA, cora, dedent_files, git

from cora_ci.errors import CODES

FILES = {
    "src/auth.py": '''\
        """Authentication helpers."""
        import os


        class Auth:
            """Checks credentials."""

            def login(self, user, password):
                """Log a user in. Returns True on success."""
                token = os.environ.get("TOKEN")
                return password == token

            def logout(self, user):
                """Log a user out."""
                print("bye", user)
                return None


        def parse_header_links(value):
            """Split a Link header into its URLs."""
            return [v.strip("<>") for v in value.split(",")]
        ''',
    "web/api.ts": """\
        export function fetchUser(id: number) {
          return { id, name: "n" + id };
        }
        """,
    "README.md": "# Demo\n\nSome text about login.\n\n## Install\n\nRun it.\n",
}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CACHE_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}


@pytest.fixture
def repo(make_repo: Callable[[dict[str, str]], Path], env: dict[str, str]) -> Path:
    repo = make_repo(dedent_files(FILES))
    out = cora("index", "--model", "none", "-q", cwd=repo, **env)
    assert out.returncode == 0, out.stderr
    return repo


def test_query_json_from_the_repository_uses_its_bundle(repo: Path, env: dict[str, str]) -> None:
    out = cora("query", "login", "--format", "json", "-k", "3", cwd=repo / "src", **env)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["query"] == "login" and doc["bundle"] == str(repo / ".cora" / "index")
    first = doc["results"][0]
    assert first["anchor"] == "src/auth.py::Auth.login" and first["stale"] is None and not first["elided"]
    assert "return password == token" in first["text"] and first["text"].startswith("    def login(")
    assert first["parent"]["anchor"] == "src/auth.py::Auth" and first["parent"]["text"] == "class Auth:"
    keys = {"path", "start_line", "end_line", "symbol", "anchor", "kind", "score", "text", "elided", "stale",
            "parent"}  # fmt: skip
    assert all(set(r) == keys for r in doc["results"])


def test_a_query_from_standard_input_or_beginning_with_a_dash(repo: Path, env: dict[str, str]) -> None:
    """A ripgrep trial: a report titled by a flag (`--max-columns off by one`) was an unknown option,
    CORA-CLI-001, and a report in a file had no way in but the shell's quoting."""
    report = "--link-header splits a URL at its comma\n\nSplit a Link header into its URLs.\n"
    piped = subprocess.run([CORA, "query", "-", "--format", "json", "-k", "1"], cwd=repo, input=report,
                           capture_output=True, text=True, env={**os.environ, **env}, check=False)  # fmt: skip
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["query"] == report.strip()
    dashed = cora("query", "--format", "json", "-k", "1", "--", report, cwd=repo, **env)
    assert dashed.returncode == 0, dashed.stderr
    assert (
        json.loads(dashed.stdout)["results"][0]["anchor"] == json.loads(piped.stdout)["results"][0]["anchor"]
    )


def test_query_in_a_pipe_prints_cora_blocks_and_text_on_request(repo: Path, env: dict[str, str]) -> None:
    out = cora("query", "parse header links", "-k", "2", cwd=repo, **env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("<cora:chunk>\n  <cora:metadata>\n    file=")
    assert 'anchor="src/auth.py::parse_header_links"' in out.stdout
    text = cora("query", "parse header links", "-k", "2", "--format", "text", cwd=repo, **env)
    assert text.returncode == 0 and "\x1b[" not in text.stdout
    assert re.search(r"^\d+ │ def parse_header_links\(value\):$", text.stdout, re.MULTILINE)


def test_budget_boosts_filters_and_explain(repo: Path, env: dict[str, str]) -> None:
    base = ("query", "login user", "--format", "json", "--bundle", str(repo / ".cora" / "index"))
    tight = json.loads(cora(*base, "--budget", "30", cwd=repo, **env).stdout)["results"]
    assert tight and any(r["elided"] for r in tight)
    boosted = json.loads(cora(*base, "--boost", "path:README.md", "--budget", "1", cwd=repo, **env).stdout)
    readme = [r for r in boosted["results"] if r["path"] == "README.md"]
    assert readme and not any(r["elided"] for r in readme)
    only_ts = json.loads(cora(*base, "--lang", "typescript", cwd=repo, **env).stdout)["results"]
    assert all(r["path"].endswith(".ts") for r in only_ts)
    no_src = json.loads(cora(*base, "--exclude", "src/**", cwd=repo, **env).stdout)["results"]
    assert no_src and not any(r["path"].startswith("src/") for r in no_src)
    explained = json.loads(cora(*base, "--explain", cwd=repo, **env).stdout)["results"]
    assert explained and "bm25_rank" in explained[0]["explain"]
    cora_out = cora(*base[:2], "--explain", "--format", "cora", cwd=repo, **env).stdout
    assert "    Explain: " in cora_out


def test_results_follow_edits_in_the_working_tree(repo: Path, env: dict[str, str]) -> None:
    auth = repo / "src" / "auth.py"
    text = auth.read_text()
    auth.write_text(text.replace("import os\n", "import os\nimport sys\n\nDEBUG = sys.argv\n"))
    doc = json.loads(cora("query", "login", "--format", "json", "-k", "1", cwd=repo, **env).stdout)
    first = doc["results"][0]
    assert first["stale"] == "moved" and first["start_line"] == 11
    lines = auth.read_text().splitlines()
    assert (
        first["text"].splitlines() == lines[10:14] and first["end_line"] == 14
    )  # its own lines, not logout's
    assert first["parent"]["start_line"] == 8
    start = text.index("    def login")
    auth.write_text(text[:start] + text[text.index("    def logout") :])
    doc = json.loads(cora("query", "login", "--format", "json", "-k", "1", cwd=repo, **env).stdout)
    gone = next(r for r in doc["results"] if r["anchor"] == "src/auth.py::Auth.login")
    assert gone["stale"] == "missing" and "return password == token" in gone["text"]
    elsewhere = cora("query", "login", "--format", "json", "-k", "1", "--bundle", str(repo / ".cora" / "index"),
                     cwd=repo.parent, **env)  # fmt: skip
    assert json.loads(elsewhere.stdout)["results"][0]["stale"] is None  # not the bundle's source: as indexed
    explicit = cora("query", "login", "--format", "json", "-k", "1", "--bundle", str(repo / ".cora" / "index"),
                    "--repo", str(repo), cwd=repo.parent, **env)  # fmt: skip
    assert json.loads(explicit.stdout)["results"][0]["stale"] == "missing"


def test_show_prints_the_current_code_of_one_symbol(repo: Path, env: dict[str, str]) -> None:
    out = cora("show", "src/auth.py::Auth.login", cwd=repo, **env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "    def login(self, user, password):"
    assert out.stdout.rstrip().endswith("return password == token") and out.stderr == ""
    whole = cora("show", "src/auth.py::Auth", "--format", "json", cwd=repo, **env)
    doc = json.loads(whole.stdout)
    assert doc["start_line"] == 5 and doc["end_line"] == 16 and doc["stale"] is None
    assert doc["text"] == "\n".join((repo / "src/auth.py").read_text().splitlines()[4:16])
    auth = repo / "src" / "auth.py"
    auth.write_text(auth.read_text().replace("token = os", "token = 'x' or os"))
    moved = cora("show", "src/auth.py::Auth.login", cwd=repo, **env)
    assert moved.returncode == 0 and "token = 'x' or os" in moved.stdout and "moved" in moved.stderr
    auth.write_text("")
    gone = cora("show", "src/auth.py::Auth.login", cwd=repo, **env)
    assert gone.returncode == CODES["CORA-QRY-003"].exit_status
    assert gone.stderr.startswith("error: CORA-QRY-003: ") and gone.stderr.count("\n") == 1


def test_pack_writes_an_archive_that_query_and_show_read(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    archive = tmp_path / "out" / "bundle.tar.gz"
    out = cora("pack", str(repo / ".cora" / "index"), str(archive), cwd=repo, **env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("packed ") and "sha256 " in out.stdout and archive.is_file()
    doc = json.loads(
        cora("query", "login", "--bundle", str(archive), "--format", "json", cwd=tmp_path, **env).stdout
    )
    assert doc["bundle"] == str(archive) and doc["results"][0]["anchor"] == "src/auth.py::Auth.login"
    shown = cora("show", "web/api.ts::fetchUser", "--bundle", str(archive), cwd=tmp_path, **env)
    assert shown.returncode == 0 and shown.stdout.startswith("export function fetchUser")


def test_pack_writes_a_readable_archive_and_to_stdout_with_a_dash(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    archive = tmp_path / "bundle.tar.gz"
    assert cora("pack", ".cora/index", str(archive), cwd=repo, **env).returncode == 0
    assert stat.S_IMODE(archive.stat().st_mode) == 0o666 & ~_umask()  # as any new file, not 0600
    out = subprocess.run([CORA, "pack", ".cora/index", "-o", "-"], cwd=repo, capture_output=True, check=False,
                         env={**os.environ, **env})  # fmt: skip
    assert out.returncode == 0 and out.stdout == archive.read_bytes()  # the same deterministic bytes
    assert out.stderr.decode().startswith("packed .cora/index -> stdout: ")
    assert not (repo / "-").exists()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# ---- offline and read-only -------------------------------------------------------------------

NO_NETWORK = """\
import socket


def _refuse(*args, **kwargs):
    raise OSError("network disabled by the test")


class _NoSocket(socket.socket):
    def __init__(self, *args, **kwargs):
        _refuse()


socket.socket = _NoSocket
socket.create_connection = _refuse
socket.getaddrinfo = _refuse
socket.socketpair = _refuse
"""


def _listing(*roots: Path) -> dict[str, tuple[int, int, int]]:
    out = {}
    for root in roots:
        for p in [root, *sorted(root.rglob("*"))]:
            st = p.lstat()
            out[str(p)] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return out


@pytest.fixture
def read_only() -> Iterator[Callable[[Path], None]]:
    locked: list[Path] = []

    def lock(root: Path) -> None:
        for p in [*sorted(root.rglob("*"), reverse=True), root]:
            p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        locked.append(root)

    yield lock
    for root in locked:
        for p in [root, *sorted(root.rglob("*"))]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)


def test_query_is_offline_and_writes_nothing_into_the_bundle(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path, read_only: Callable[[Path], None]
) -> None:
    repo = make_repo(dedent_files(FILES))
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}
    assert cora("index", "-q", cwd=repo, **env).returncode == 0  # the default model: vectors too
    bundle = repo / ".cora" / "index"
    archive = tmp_path / "dl" / "bundle.tar.gz"
    assert cora("pack", str(bundle), str(archive), cwd=repo, **env).returncode == 0
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(NO_NETWORK)
    offline = {**env, "PYTHONPATH": str(guard)}
    probe = subprocess.run([sys.executable, "-c", "import socket; socket.socket()"], env={**os.environ, **offline},
                           capture_output=True, text=True, check=False)  # fmt: skip
    assert probe.returncode != 0 and "network disabled" in probe.stderr  # the guard is in force
    read_only(repo / ".cora")
    read_only(archive.parent)
    before = _listing(repo / ".cora", archive.parent)
    for target in (str(bundle), str(archive), str(archive)):  # the archive twice: extracted once
        out = cora(
            "query", "how does a user log in", "--bundle", target, "--format", "json", cwd=repo, **offline
        )
        assert out.returncode == 0, out.stderr
        results = json.loads(out.stdout)["results"]
        assert results and any(r["anchor"] == "src/auth.py::Auth.login" for r in results)
        shown = cora("show", "src/auth.py::Auth.login", "--bundle", target, cwd=repo, **offline)
        assert shown.returncode == 0, shown.stderr
    assert _listing(repo / ".cora", archive.parent) == before
    assert git(repo, "status", "--porcelain") == ""


# ---- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["query", "login", "--bundle", "nowhere"], "CORA-BND-001"),
        (["query", "login", "--boost", "colour:red"], "CORA-CFG-002"),
        (["query", "login", "--path", "!"], "CORA-CFG-002"),
        (["query", "login", "--lang", "pythn"], "CORA-CFG-002"),
        (["query", "login", "--boost", "path:src/auht.py"], "CORA-CFG-002"),
        (["query", "login", "--boost", "dir:lib"], "CORA-CFG-002"),
        (["query", "login", "--boost", "symbol:Authh"], "CORA-CFG-002"),
        (["query", "   "], "CORA-QRY-001"),
        (["query", "login", "--repo", "no/such/dir"], "CORA-IO-001"),
        (["query", "login", "--bundle", "README.md"], "CORA-BND-009"),
        (["show", "src/auth.py::Auth.logn"], "CORA-QRY-002"),
        (["show", "nothing-like-it"], "CORA-QRY-002"),
        (["pack", "nowhere", "out.tar.gz"], "CORA-BND-001"),
    ],
)
def test_bad_input_is_one_line_with_its_code(
    repo: Path, env: dict[str, str], args: list[str], code: str
) -> None:
    out = cora(*args, cwd=repo, **env)
    assert out.returncode == CODES[code].exit_status, out.stderr
    assert out.stderr.startswith(f"error: {code}: ") and out.stderr.count("\n") == 1, out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


def test_a_mistyped_language_names_the_ones_there_are(repo: Path, env: dict[str, str]) -> None:
    out = cora("query", "login", "--lang", "pythn", cwd=repo, **env)
    assert "(hint: it has: markdown, python, typescript)" in out.stderr


def test_a_mistyped_anchor_gets_suggestions(repo: Path, env: dict[str, str]) -> None:
    out = cora("show", "src/auth.py::Auth.logn", cwd=repo, **env)
    assert "did you mean" in out.stderr and "src/auth.py::Auth.login" in out.stderr


_MODEL_LOADED = """
import sys
from cora_ci.cli import cli
cli.main(sys.argv[1:], standalone_mode=False)
print("\\nloaded:", " ".join(m for m in ("onnxruntime", "tokenizers", "cora_ci.embedding.static") if m in sys.modules))
"""


@pytest.mark.parametrize(
    ("model", "runtime"),
    [("default", ["cora_ci.embedding.static"]), ("minilm", ["onnxruntime", "tokenizers"])],
)
def test_an_identifier_found_by_name_loads_no_model(
    make_repo: Callable[[dict[str, str]], Path], env: dict[str, str], model: str, runtime: list[str]
) -> None:
    """An identifier query weighs the vectors at nothing when BM25 finds the name: the model (the
    static table's 7.9 MB, or ~0.1 s of onnxruntime and 22 MB) is not loaded; a question in words
    loads it, and so does a name nothing in the bundle is called (the vectors then answer alone)."""
    repo = make_repo(dedent_files(FILES))
    assert cora("index", "-q", "--model", model, cwd=repo, **env).returncode == 0

    def loaded(query: str) -> list[str]:
        out = subprocess.run([sys.executable, "-c", _MODEL_LOADED, "query", query, "-k", "2"], cwd=repo,
                             capture_output=True, text=True, env={**os.environ, **env}, check=True)  # fmt: skip
        return out.stdout.rsplit("loaded:", 1)[1].split()

    assert loaded("parse_header_links") == []
    assert loaded("Auth.login") == []
    assert loaded("split a link header into urls") == runtime
    assert loaded("NothingIsCalledThis") == runtime


_IMPORTED = """
import sys
from cora_ci.cli import cli
cli.main(sys.argv[1:], standalone_mode=False)
print("\\nimported:", " ".join(m for m in ("pathspec", "numpy.ma", "tree_sitter") if m in sys.modules))
"""


def test_a_query_imports_what_it_uses(
    make_repo: Callable[[dict[str, str]], Path], env: dict[str, str]
) -> None:
    """A query without globs imports no glob matcher (pathspec, ~17 ms of a ~0.3 s process), and
    numpy's masked arrays never; a path filter brings pathspec in. No parser either while the
    working tree is as indexed: tree-sitter comes in to re-bind a result whose file changed."""
    repo = make_repo(dedent_files(FILES))
    assert cora("index", "-q", cwd=repo, **env).returncode == 0

    def imported(*args: str) -> list[str]:
        out = subprocess.run([sys.executable, "-c", _IMPORTED, "query", *args], cwd=repo,
                             capture_output=True, text=True, env={**os.environ, **env}, check=True)  # fmt: skip
        return out.stdout.rsplit("imported:", 1)[1].split()

    assert imported("split a link header into urls") == []
    assert imported("split a link header into urls", "--path", "src/*") == ["pathspec"]
    for path in FILES:
        if path.startswith("src/"):
            (repo / path).write_text("# edited since the bundle was built\n\n" + (repo / path).read_text())
    assert "tree_sitter" in imported("split a link header into urls")
