"""The git hooks, run for real: the pre-commit framework installing this checkout as a hook repository,
and the plain scripts that `cora-ci install-hooks` puts into a repository.

The pre-commit tests point a `.pre-commit-config.yaml` at a snapshot of this checkout's working tree
(committed into a scratch repository, as `pre-commit try-repo` does), so uncommitted work is what
runs; pre-commit installs it into its own virtualenv once per module (PRE_COMMIT_HOME is shared).
"""

from __future__ import annotations

import os
import pty
import re
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cora_ci.bundle import open_bundle
from cora_ci.hooks import FAILED, HOOK_NAMES
from cora_ci.lock import acquire

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
CORA = shutil.which("cora-ci", path=str(BIN)) or "cora-ci"
PRE_COMMIT = shutil.which("pre-commit", path=str(BIN)) or "pre-commit"
ALL_HOOK_TYPES = "[pre-commit, post-checkout, post-merge, post-rewrite, post-commit]"


@pytest.fixture(scope="module")
def base_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Git and pre-commit isolated from the machine's config; this venv's tools first on PATH."""
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / "gitconfig"
    gitconfig.write_text("[user]\n\temail = t@example.com\n\tname = t\n[init]\n\tdefaultBranch = main\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT", "CORA_"))}
    env.update(GIT_CONFIG_GLOBAL=str(gitconfig), GIT_CONFIG_NOSYSTEM="1", XDG_CACHE_HOME=str(home / "cache"),
               PRE_COMMIT_HOME=str(home / "pre-commit"), PATH=f"{BIN}{os.pathsep}{env['PATH']}")  # fmt: skip
    return env


@pytest.fixture(autouse=True)
def _isolated(base_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", base_env["XDG_CACHE_HOME"])  # open_bundle's verified-file record


def run(
    cwd: Path, env: dict[str, str], *args: str, ok: bool = True, **extra: str
) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(list(args), cwd=cwd, env={**env, **extra}, capture_output=True, text=True,
                         check=False, start_new_session=True)  # no terminal, however pytest runs  # fmt: skip
    if ok:
        assert out.returncode == 0, f"{args}: {out.returncode}\n{out.stdout}\n{out.stderr}"
    return out


def run_on_terminal(cwd: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    """Run `args` as a user at a terminal does: in a new session whose controlling terminal is a
    pty. Its exit status, and all that reached the terminal (with git's and pre-commit's output)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child never returns into pytest
        try:
            os.chdir(cwd)
            os.execvpe(args[0], list(args), {**env, "PRE_COMMIT_COLOR": "never"})
        finally:
            os._exit(127)
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: every process holding the terminal has ended
            break
        if not data:
            break
        chunks.append(data)
    os.close(fd)
    status = os.waitpid(pid, 0)[1]
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")


def write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)


def new_repo(path: Path, env: dict[str, str]) -> Path:
    path.mkdir()
    run(path, env, "git", "init", "-q")
    write(path, {".cora.toml": 'model = "none"\n'})  # BM25 only: fast
    return path


def git_blobs(repo: Path, env: dict[str, str], *listing: str) -> dict[str, str]:
    """path -> blob id of `git ls-tree -r HEAD` or `git ls-files -s` (paths after the tab)."""
    out = run(repo, env, "git", *listing).stdout
    return {line.split("\t", 1)[1]: line.split("\t", 1)[0].split()[2 if listing[0] == "ls-tree" else 1]
            for line in out.splitlines()}  # fmt: skip


def settle(repo: Path) -> None:
    """Wait for the background sync a hook started: the hook hands it the bundle's lock, held, and
    it holds it until its bundle is swapped in."""
    os.close(acquire(repo / ".cora" / "index", wait=60))


def bundle(repo: Path) -> tuple[dict[str, object], dict[str, str], set[str]]:
    """The bundle's source record, its files (path -> blob) and every chunk anchor, once any
    background sync is done."""
    settle(repo)
    b = open_bundle(repo / ".cora" / "index")
    files = dict(zip(b.manifest["files"]["path"], b.manifest["files"]["blob"], strict=True))
    anchors = {a for r in range(len(b.chunks)) for a in b.chunks.chunk(r).anchors}
    return b.manifest["source"], files, anchors


def assert_at_head(repo: Path, env: dict[str, str]) -> set[str]:
    """The bundle holds exactly HEAD's files; returns its anchors."""
    source, files, anchors = bundle(repo)
    assert source["kind"] == "rev"
    assert source["commit"] == run(repo, env, "git", "rev-parse", "HEAD").stdout.strip()
    assert files == git_blobs(repo, env, "ls-tree", "-r", "HEAD")
    return anchors


# -- the pre-commit framework -------------------------------------------------------------------


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory, base_env: dict[str, str]) -> tuple[Path, str]:
    """This checkout's working tree (tracked and untracked, not ignored) committed into a scratch
    repository, the way `pre-commit try-repo` shadows uncommitted work: pre-commit clones a rev."""
    shadow = tmp_path_factory.mktemp("hook-repo")
    listed = run(ROOT, base_env, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (shadow / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, shadow / name)
    run(shadow, base_env, "git", "init", "-q")
    run(shadow, base_env, "git", "add", "-A")
    run(shadow, base_env, "git", "commit", "-qm", "snapshot of the cora-ci checkout under test")
    return shadow, run(shadow, base_env, "git", "rev-parse", "HEAD").stdout.strip()


def pc_config(hook_repo: tuple[Path, str], index: str | None = None, *, default_stages: bool = True,
              more: str = "") -> str:  # fmt: skip
    """The set-up of docs/hooks.md: all five hook types installed, the sync hook, and stage-less
    hooks (`more`, a repository entry of the user's own) kept at pre-commit by `default_stages`;
    `index`: the pre-commit hook too, with these args."""
    pre = "" if index is None else f"  - id: cora-ci-index\n    args: {index}\n"
    return (f"default_install_hook_types: {ALL_HOOK_TYPES}\n"
            + ("default_stages: [pre-commit]\n" if default_stages else "")
            + f"repos:\n- repo: {hook_repo[0]}\n  rev: {hook_repo[1]}\n  hooks:\n"
            f"{pre}  - id: cora-ci-sync\n{more}")  # fmt: skip


@pytest.fixture
def pc_repo(tmp_path: Path, base_env: dict[str, str], hook_repo: tuple[Path, str]) -> Iterator[Path]:
    """A repository using the pre-commit framework with both hooks installed for every git event."""
    repo = new_repo(tmp_path / "repo", base_env)
    write(repo, {".pre-commit-config.yaml": pc_config(hook_repo)})
    run(repo, base_env, PRE_COMMIT, "install")
    run(repo, base_env, PRE_COMMIT, "install-hooks")  # the slow part, once per module
    yield repo


def test_pre_commit_hooks_follow_commits_and_branches(pc_repo: Path, base_env: dict[str, str]) -> None:
    repo, env = pc_repo, base_env
    write(repo, {
        "src/app.py": "def greet(name):\n    return 'hi ' + name\n",
        "web/api.ts": "export function fetchUser(id: string): string {\n  return id\n}\n",
        "README.md": "# Demo\n\nSome words.\n\n## Install\n\nRun it.\n",
    })  # fmt: skip
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "first")
    assert {"src/app.py::greet", "web/api.ts::fetchUser", "README.md::Demo/Install"} <= assert_at_head(
        repo, env
    )

    # edit, delete, rename, add: the next commit
    write(repo, {"src/app.py": "def greet(name):\n    return 'hi ' + name\n\n\ndef farewell(name):\n    return name\n",
                 "web/client.ts": "export class Client {\n  get(): number {\n    return 1\n  }\n}\n"})  # fmt: skip
    run(repo, env, "git", "rm", "-q", "web/api.ts")
    (repo / "docs").mkdir()
    run(repo, env, "git", "mv", "README.md", "docs/guide.md")
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "second")
    anchors = assert_at_head(repo, env)
    assert {"src/app.py::farewell", "web/client.ts::Client", "docs/guide.md::Demo/Install"} <= anchors
    assert not any(a.startswith(("web/api.ts", "README.md")) for a in anchors)

    # a branch with its own file, switched away from and back, then merged
    run(repo, env, "git", "checkout", "-q", "-b", "feature")
    write(repo, {"src/extra.py": "class Extra:\n    pass\n"})
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "extra")
    assert "src/extra.py::Extra" in assert_at_head(repo, env)
    run(repo, env, "git", "checkout", "-q", "main")  # post-checkout
    assert "src/extra.py::Extra" not in assert_at_head(repo, env)
    run(repo, env, "git", "merge", "-q", "feature")  # post-merge (fast-forward)
    assert "src/extra.py::Extra" in assert_at_head(repo, env)

    # a rebase onto a moved main: post-rewrite brings the bundle to the rebased HEAD
    run(repo, env, "git", "checkout", "-q", "-b", "topic")
    write(repo, {"src/topic.py": "def topical():\n    return 1\n"})
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "topic")
    run(repo, env, "git", "checkout", "-q", "main")
    write(repo, {"docs/more.md": "# More\n\nText.\n"})
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "more")
    run(repo, env, "git", "checkout", "-q", "topic")
    run(repo, env, "git", "rebase", "-q", "main")
    assert {"src/topic.py::topical", "docs/more.md::More"} <= assert_at_head(repo, env)


def test_pre_commit_hook_indexes_only_the_staged_content(
    tmp_path: Path, base_env: dict[str, str], hook_repo: tuple[Path, str]
) -> None:
    repo, env = new_repo(tmp_path / "repo", base_env), base_env
    write(repo, {".pre-commit-config.yaml": pc_config(hook_repo, "[]")})
    run(repo, env, PRE_COMMIT, "install", "--hook-type", "pre-commit")  # no post-commit sync here
    write(repo, {"mod.py": "def staged_one():\n    return 1\n"})
    run(repo, env, "git", "add", "-A")
    write(repo, {"mod.py": "def staged_one():\n    return 1\n\n\ndef unstaged_two():\n    return 2\n"})
    run(repo, env, "git", "commit", "-qm", "partial")
    source, files, anchors = bundle(repo)
    assert source["kind"] == "staged"
    assert files == git_blobs(repo, env, "ls-files", "-s")
    assert files["mod.py"] != run(repo, env, "git", "hash-object", "mod.py").stdout.strip()
    assert "mod.py::staged_one" in anchors and "mod.py::unstaged_two" not in anchors
    assert "unstaged_two" in (repo / "mod.py").read_text()  # pre-commit's stash came back


def test_pre_commit_hook_fails_open_unless_strict(
    pc_repo: Path, base_env: dict[str, str], hook_repo: tuple[Path, str]
) -> None:
    repo, env = pc_repo, base_env
    write(repo, {"a.py": "def a():\n    return 1\n"})
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "good")
    settle(repo)
    sums = (repo / ".cora" / "index" / "manifest.sha256").read_bytes()
    head = run(repo, env, "git", "rev-parse", "HEAD").stdout

    write(repo, {".cora.toml": "model = [\n"})  # not TOML: every build fails
    run(repo, env, "git", "add", "-A")
    status, said = run_on_terminal(repo, env, "git", "commit", "-qm", "broken config")
    assert status == 0 and "cora-ci: warning" not in said  # the sync fails in the background
    assert run(repo, env, "git", "rev-parse", "HEAD").stdout != head  # the commit went through
    settle(repo)
    assert (repo / ".cora" / "index" / "manifest.sha256").read_bytes() == sums
    # the next hook tells it: pre-commit hides a passing hook's output, so the warning goes to the
    # terminal, saying what to do
    status, said = run_on_terminal(repo, env, "git", "commit", "-qm", "still broken", "--allow-empty")
    warning = "(bundle left as it was; fix the TOML syntax; `cora-ci index` then updates it)"
    assert re.search(r"^cora-ci: warning: the last sync failed: CORA-CFG-003: .*" + re.escape(warning) + "$",
                     said, re.M), said  # fmt: skip
    assert re.search(r"^cora-ci index \(HEAD\)\.+\ncora-ci: warning: .*\nPassed$", said, re.M), said
    settle(repo)
    head = run(repo, env, "git", "rev-parse", "HEAD").stdout

    write(repo, {".pre-commit-config.yaml": pc_config(hook_repo, "[--strict]"), "b.py": "B = 1\n"})
    run(repo, env, "git", "add", "-A")
    out = run(repo, env, "git", "commit", "-m", "blocked", ok=False)
    said = out.stdout + out.stderr  # a failing hook's output is shown by pre-commit itself
    assert out.returncode != 0 and "cora-ci: error: CORA-CFG-003:" in said and "--strict)" in said
    assert run(repo, env, "git", "rev-parse", "HEAD").stdout == head
    assert (repo / ".cora" / "index" / "manifest.sha256").read_bytes() == sums


MINE = """\
- repo: local
  hooks:
  - id: mine
    name: my own hook
    entry: sh -c 'echo ran >> "$0"' {log}
    language: system
    always_run: true
    pass_filenames: false
"""


def test_pre_commit_set_up_leaves_the_users_other_hooks_alone(
    tmp_path: Path, base_env: dict[str, str], hook_repo: tuple[Path, str]
) -> None:
    """docs/hooks.md's set-up: a stage-less hook of the user's runs at pre-commit only, as before
    cora-ci, while ours follow every commit, checkout and merge; a successful commit shows one
    line per cora-ci hook (pre-commit's status line) and nothing else of ours."""
    repo, env, log = new_repo(tmp_path / "repo", base_env), base_env, tmp_path / "mine.log"
    write(repo, {".pre-commit-config.yaml": pc_config(hook_repo, more=MINE.format(log=log))})
    run(repo, env, PRE_COMMIT, "install")
    run(repo, env, PRE_COMMIT, "install-hooks")
    write(repo, {"a.py": "def a():\n    return 1\n"})
    run(repo, env, "git", "add", "-A")
    status, said = run_on_terminal(repo, env, "git", "commit", "-qm", "first")
    assert status == 0
    shown = [re.sub(r"\.{3,}", "...", line) for line in said.splitlines()]
    assert shown == ["my own hook...Passed", "cora-ci index (HEAD)...Passed"]  # one cora-ci process
    assert log.read_text() == "ran\n"
    assert_at_head(repo, env)

    run(repo, env, "git", "checkout", "-q", "-b", "feature")  # post-checkout
    write(repo, {"b.py": "def b():\n    return 2\n"})
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "b")
    run(repo, env, "git", "checkout", "-q", "main")  # post-checkout: ours syncs, mine does not run
    assert "b.py::b" not in assert_at_head(repo, env)
    run(repo, env, "git", "merge", "-q", "feature")  # post-merge
    assert "b.py::b" in assert_at_head(repo, env)
    assert log.read_text() == "ran\n" * 2  # the two commits' pre-commit runs, nothing else

    # without `default_stages`, the same hook would run at every installed hook type
    write(repo, {".pre-commit-config.yaml": pc_config(hook_repo, default_stages=False,
                                                      more=MINE.format(log=log))})  # fmt: skip
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "no default_stages")
    assert log.read_text() == "ran\n" * 4  # pre-commit and post-commit


def test_pre_commit_manifest_is_valid_and_runs_once_per_event() -> None:
    from pre_commit.clientlib import load_manifest

    hooks = {h["id"]: h for h in load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))}
    assert hooks["cora-ci-index"]["stages"] == ["pre-commit"]
    assert set(hooks["cora-ci-sync"]["stages"]) == {
        "post-checkout",
        "post-merge",
        "post-rewrite",
        "post-commit",
    }
    for h in hooks.values():
        assert h["language"] == "python" and h["entry"].startswith("cora-ci hook ")
        assert h["pass_filenames"] is False and h["always_run"] is True


# -- cora-ci hook -------------------------------------------------------------------------------


def test_sync_skips_file_checkouts_and_rebase_steps(tmp_path: Path, base_env: dict[str, str]) -> None:
    repo, env = new_repo(tmp_path / "repo", base_env), base_env
    for n in (1, 2):
        write(repo, {"m.py": f"def f{n}():\n    return {n}\n"})
        run(repo, env, "git", "add", "-A")
        run(repo, env, "git", "commit", "-qm", f"c{n}")
    out = run(repo, env, CORA, "hook", "sync", PRE_COMMIT_CHECKOUT_TYPE="0")  # a file checkout
    assert out.stdout == "" and not (repo / ".cora").exists()
    run(repo, env, CORA, "hook", "sync", PRE_COMMIT_CHECKOUT_TYPE="1")
    settle(repo)
    sums = (repo / ".cora" / "index" / "manifest.sha256").read_bytes()
    # stop a real rebase at its first step: post-commit/post-checkout would fire on every step
    run(repo, env, "git", "rebase", "-q", "-i", "HEAD~1", GIT_SEQUENCE_EDITOR="sed -i s/^pick/edit/")
    write(repo, {"m.py": "def edited():\n    return 3\n"})
    run(repo, env, "git", "commit", "-qam", "edited")
    run(repo, env, CORA, "hook", "sync")
    assert (repo / ".cora" / "index" / "manifest.sha256").read_bytes() == sums
    run(repo, env, CORA, "hook", "sync", "--rewrite-command", "rebase")  # post-rewrite: the end
    assert "m.py::edited" in assert_at_head(repo, env)
    run(repo, env, "git", "rebase", "--abort")


def test_hook_prints_one_line_when_the_bundle_changed_and_none_otherwise(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    repo, env = new_repo(tmp_path / "repo", base_env), base_env
    write(repo, {"a.py": "def a():\n    return 1\n", "b.py": "def b():\n    return 2\n"})
    run(repo, env, "git", "add", "-A")
    out = run(repo, env, CORA, "hook", "index")  # pre-commit: the first build
    assert out.stderr == "" and re.fullmatch(r"cora-ci: \.cora/index at staged: 3 files changed "
                                             r"\(3 indexed, \d+ chunks\), [\d.]+ s\n", out.stdout)  # fmt: skip
    run(repo, env, "git", "commit", "-qm", "first")
    assert run(repo, env, CORA, "hook", "sync").stdout == ""  # post-commit: only the commit moved
    write(repo, {"a.py": "def a():\n    return 3\n", "notes.bin": "\0"})
    run(repo, env, "git", "add", "-A")
    assert ": 2 files changed (3 indexed," in run(repo, env, CORA, "hook", "index").stdout  # one binary
    run(repo, env, "git", "commit", "-qm", "second")
    write(repo, {"README": "x"})
    run(repo, env, "git", "commit", "-qm", "nothing indexed", "--allow-empty")
    for action in ("sync", "index"):
        out = run(repo, env, CORA, "hook", action)
        assert (out.stdout, out.stderr) == ("", ""), action


def test_hook_failure_is_one_warning_line_or_a_strict_exit(tmp_path: Path, base_env: dict[str, str]) -> None:
    repo, env = new_repo(tmp_path / "repo", base_env), base_env
    write(repo, {".cora.toml": "[tool\n"})
    run(repo, env, "git", "add", "-A")
    out = run(repo, env, CORA, "hook", "index")
    assert out.stdout == "" and out.stderr.count("\n") == 1
    assert out.stderr.startswith("cora-ci: warning: CORA-CFG-003: ")
    for strict in ({"CORA_HOOK_STRICT": "1"}, {}):
        args = () if strict else ("--strict",)
        out = run(repo, env, CORA, "hook", "index", *args, ok=False, **strict)
        assert out.returncode == 3 and out.stderr.startswith("cora-ci: error: CORA-CFG-003: ")
    out = run(tmp_path, env, CORA, "hook", "sync", ok=False, CORA_HOOK_STRICT="1")  # not a repository
    assert out.returncode == 4 and "CORA-IO-003" in out.stderr
    assert not (repo / ".cora").exists()


def test_a_sync_returns_before_its_update_and_the_next_hook_tells_its_failure(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    """git waits for the hook, not for the update: with the bundle's lock held elsewhere, `hook
    sync` still returns at once, and the process it started updates the bundle once the lock is
    free. A background failure is no output of its own: the next hook says it, until a sync works."""
    repo, env = new_repo(tmp_path / "repo", base_env), base_env
    write(repo, {"a.py": "def a():\n    return 1\n"})
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "first")
    held = acquire(repo / ".cora" / "index")  # an update in progress, as far as any hook can tell
    try:
        out = run(repo, env, CORA, "hook", "sync")
        assert (out.stdout, out.stderr) == ("", "") and not (repo / ".cora" / "index").exists()
    finally:
        os.close(held)
    deadline = time.monotonic() + 60
    while not (repo / ".cora" / "index").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "a.py::a" in assert_at_head(repo, env)

    record = repo / ".git" / FAILED
    write(repo, {".cora.toml": "model = [\n"})  # not TOML: the update fails
    run(repo, env, "git", "commit", "-qam", "broken")
    out = run(repo, env, CORA, "hook", "sync")
    assert (out.stdout, out.stderr) == ("", "")
    settle(repo)
    said = record.read_text()
    assert said.startswith("cora-ci: warning: the last sync failed: CORA-CFG-003: ") and said.count("\n") == 1
    out = run(repo, env, CORA, "hook", "sync")
    assert out.returncode == 0 and (out.stdout, out.stderr) == ("", said)
    settle(repo)
    write(repo, {".cora.toml": 'model = "none"\n', "b.py": "def b():\n    return 2\n"})
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "fixed")
    run(repo, env, CORA, "hook", "sync")
    assert "b.py::b" in assert_at_head(repo, env) and not record.exists()
    out = run(repo, env, CORA, "hook", "sync")
    assert (out.stdout, out.stderr) == ("", "")


def test_a_hook_git_waits_for_waits_for_a_sync_still_running(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    """A commit right after another: its pre-commit update (or a `--wait` sync) waits for the
    previous commit's background sync instead of failing with CORA-BND-007."""
    repo, env = new_repo(tmp_path / "repo", base_env), base_env
    write(repo, {"a.py": "def a():\n    return 1\n"})
    run(repo, env, "git", "add", "-A")
    held = acquire(repo / ".cora" / "index")
    try:
        waiting = subprocess.Popen([CORA, "hook", "index", "--strict"], cwd=repo, env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        time.sleep(0.5)
        assert waiting.poll() is None  # still waiting for its turn
    finally:
        os.close(held)
    said, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0 and err == "" and ": 2 files changed (2 indexed," in said
    assert bundle(repo)[0]["kind"] == "staged"


# -- plain git hooks ----------------------------------------------------------------------------


def test_hook_scripts_ship_in_the_package_and_match_hooks_dir() -> None:
    shipped = ROOT / "cora_ci" / "hook_scripts"
    assert sorted(p.name for p in (ROOT / "hooks").iterdir()) == sorted(HOOK_NAMES)
    for name in HOOK_NAMES:
        assert (ROOT / "hooks" / name).read_bytes() == (shipped / name).read_bytes(), name
        assert os.access(ROOT / "hooks" / name, os.X_OK) and os.access(shipped / name, os.X_OK)
        assert subprocess.run(["sh", "-n", str(shipped / name)], check=False).returncode == 0


def hooks_state(d: Path) -> dict[str, tuple[bytes, bool]]:
    return {p.name: (p.read_bytes(), bool(p.stat().st_mode & stat.S_IXUSR)) for p in sorted(d.iterdir())}


LEGACY = (
    '#!/bin/sh\necho "legacy $*" >> "$(git rev-parse --git-dir)/legacy.log"\nexit "${LEGACY_STATUS:-0}"\n'
)


def test_install_hooks_chains_existing_hook_and_uninstalls_cleanly(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    repo, env = new_repo(tmp_path / "repo", base_env), base_env
    hooks = repo / ".git" / "hooks"
    for sample in hooks.glob("*.sample"):
        sample.unlink()
    (hooks / "pre-commit").write_text(LEGACY)
    (hooks / "pre-commit").chmod(0o755)
    before = hooks_state(hooks)

    out = run(repo, env, CORA, "install-hooks")
    assert "pre-commit.cora-chained" in out.stdout
    installed = hooks_state(hooks)
    assert installed["pre-commit.cora-chained"] == before["pre-commit"]
    for name in HOOK_NAMES:
        assert installed[name] == ((ROOT / "hooks" / name).read_bytes(), True)
    out = run(repo, env, CORA, "install-hooks")  # idempotent
    assert hooks_state(hooks) == installed and out.stdout.count("unchanged") == len(HOOK_NAMES)

    write(repo, {"x.py": "def x():\n    return 1\n"})
    run(repo, env, "git", "add", "-A")
    out = run(repo, env, "git", "commit", "-qm", "blocked", ok=False, LEGACY_STATUS="3")
    assert out.returncode != 0  # the chained hook's failure blocks the commit...
    assert run(repo, env, "git", "rev-list", "--all").stdout == "" and not (repo / ".cora").exists()
    run(repo, env, "git", "commit", "-qm", "ok")  # ...and its success lets ours run
    assert "x.py::x" in assert_at_head(repo, env)
    assert (repo / ".git" / "legacy.log").read_text() == "legacy \nlegacy \n"

    out = run(repo, env, CORA, "install-hooks", "--uninstall")
    assert hooks_state(hooks) == before and "restored" in out.stdout
    out = run(repo, env, CORA, "install-hooks", "--uninstall")
    assert hooks_state(hooks) == before and out.stdout == ""


def test_install_hooks_respects_core_hooks_path_and_refuses_to_clobber(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    repo, env = new_repo(tmp_path / "repo", base_env), base_env
    run(repo, env, "git", "config", "core.hooksPath", "githooks")
    run(repo, env, CORA, "install-hooks")
    assert sorted(p.name for p in (repo / "githooks").iterdir()) == sorted(HOOK_NAMES)
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    run(repo, env, CORA, "install-hooks", "--uninstall")
    assert list((repo / "githooks").iterdir()) == []

    (repo / "githooks" / "post-merge").write_text("#!/bin/sh\nexit 0\n")
    (repo / "githooks" / "post-merge.cora-chained").write_text("#!/bin/sh\nexit 0\n")
    before = hooks_state(repo / "githooks")
    out = run(repo, env, CORA, "install-hooks", ok=False)
    assert out.returncode == 4 and out.stderr.startswith("error: CORA-HOOK-001: ")
    assert hooks_state(repo / "githooks") == before


def test_plain_hook_fails_open_without_cora_ci(tmp_path: Path, base_env: dict[str, str]) -> None:
    repo, env = new_repo(tmp_path / "repo", base_env), base_env
    for name, extra in (("post-commit", {}), ("pre-commit", {"CORA_HOOK_STRICT": "1"})):
        hook = ROOT / "hooks" / name
        out = run(repo, env, str(hook), CORA_CI=str(tmp_path / "missing-cora-ci"), **extra)
        assert out.stderr.startswith("cora-ci: warning: ") and "not found on PATH" in out.stderr
        out = run(repo, {**env, "PATH": "/nonexistent"}, "/bin/sh", str(hook), **extra)
        assert "cora-ci: warning: cora-ci not found on PATH" in out.stderr


def test_plain_pre_commit_hook_leaves_the_update_to_post_commit_unless_strict(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    """One cora-ci process per commit: the post-commit script updates the bundle; the pre-commit one
    runs cora-ci only to block a commit whose update fails (CORA_HOOK_STRICT=1)."""
    repo, env = new_repo(tmp_path / "repo", base_env), base_env
    log = tmp_path / "calls.log"
    spy = tmp_path / "cora-spy"
    spy.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {CORA} "$@"\n')
    spy.chmod(0o755)
    run(repo, env, CORA, "install-hooks")
    write(repo, {"x.py": "def x():\n    return 1\n"})
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "one", CORA_CI=str(spy))
    assert log.read_text() == "hook sync\n"
    assert "x.py::x" in assert_at_head(repo, env)
    write(repo, {".cora.toml": "model = [\n"})  # not TOML: the update fails
    run(repo, env, "git", "add", "-A")
    out = run(repo, env, "git", "commit", "-qm", "two", ok=False, CORA_CI=str(spy), CORA_HOOK_STRICT="1")
    assert out.returncode != 0 and "CORA-CFG-003" in out.stderr
    assert log.read_text() == "hook sync\nhook index\n"


_LOADED = """
import sys
from pathlib import Path
from cora_ci.hooks import run_hook
out = run_hook(sys.argv[1], Path('.'), strict=True)
assert out.status == 0, out.line
heavy = ('tree_sitter', 'tree_sitter_language_pack', 'onnxruntime', 'numpy', 'tantivy',
         'cora_ci.chunking.secret_rules')
print(' '.join(m for m in heavy if m in sys.modules))
"""
_WRITERS = ["numpy", "tantivy", "cora_ci.chunking.secret_rules"]  # an update that writes: screen, rows, BM25


def test_a_hook_that_chunks_a_few_files_starts_no_worker_processes(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    """A commit's few files are chunked in the hook's own process: neither `multiprocessing` nor a
    process pool is imported (~10 ms every commit), only a large change forks workers."""
    repo, env = new_repo(tmp_path / "repo", base_env), base_env
    write(repo, {".cora.toml": 'model = "static"\n', "a.py": "def a():\n    return 1\n"})
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "first")
    run(repo, env, CORA, "index", "-q")
    write(repo, {"a.py": "def a():\n    return 2\n", "b.py": "def b():\n    return a()\n"})
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "second")
    script = _LOADED.replace("heavy = (", "heavy = ('multiprocessing', 'concurrent.futures.process', ")
    loaded = run(repo, env, sys.executable, "-c", script, "sync").stdout.split()
    assert "tree_sitter" in loaded  # the files were chunked, here
    assert "multiprocessing" not in loaded and "concurrent.futures.process" not in loaded


def test_a_hook_that_updates_a_file_never_imports_numpys_masked_arrays(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    """An update compares id and key sets by sort and binary search (`cora_ci.arrays`): np.isin and
    np.unique on arrays this size import `numpy.ma`, ~16 ms of every such commit."""
    repo, env = new_repo(tmp_path / "repo", base_env), base_env
    funcs = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(60))
    write(repo, {".cora.toml": 'model = "static"\n', "a.py": funcs})
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "first")
    run(repo, env, CORA, "index", "-q")
    write(repo, {"a.py": funcs.replace("x + ", "x * "), "b.py": funcs.replace("def f", "def g")})
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "second")
    script = _LOADED.replace("heavy = (", "heavy = ('numpy.ma', ")
    loaded = run(repo, env, sys.executable, "-c", script, "sync").stdout.split()
    assert "numpy" in loaded and "tantivy" in loaded  # an update that wrote
    assert "numpy.ma" not in loaded
    assert "a.py::f59" in assert_at_head(repo, env)


def test_a_hook_with_nothing_to_index_loads_no_parser_stemmer_or_model(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    """A commit that touches nothing indexed (and the sync after every commit) costs what reading the
    manifest costs: no parser, stemmer or model is imported (each is tens of milliseconds), and a
    sync that finds the bundle's own files imports neither numpy nor tantivy nor the secret rules."""
    repo, env = new_repo(tmp_path / "repo", base_env), base_env
    write(repo, {".cora.toml": 'model = "static"\n', "a.py": "def a():\n    return 1\n"})
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "first")
    run(repo, env, CORA, "index", "-q")
    assert run(repo, env, sys.executable, "-c", _LOADED, "sync").stdout.split() == []
    write(repo, {"notes.bin": "\0"})  # staged, not indexed
    run(repo, env, "git", "add", "-A")
    assert run(repo, env, sys.executable, "-c", _LOADED, "index").stdout.split() == _WRITERS
    run(repo, env, "git", "commit", "-qm", "second")
    assert run(repo, env, sys.executable, "-c", _LOADED, "sync").stdout.split() == []
    token = "gh" + "p_" + "Zq3" * 12  # a GitHub token's shape, built so no scanner flags this file
    write(repo, {f"keys/{token}.py": "X = 1\n"})  # left out by its name: the screen runs, nothing is written
    run(repo, env, "git", "add", "-A")
    run(repo, env, "git", "commit", "-qm", "third")
    assert run(repo, env, sys.executable, "-c", _LOADED, "sync").stdout.split() == [
        "cora_ci.chunking.secret_rules"
    ]


def test_a_background_sync_lets_the_lock_go_only_with_the_bundle_at_head(
    tmp_path: Path, base_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """HEAD moved (a checkout) while a commit's background sync updated the bundle: the checkout's
    own sync waited for the lock, and whoever else waited for it could take it first and find the
    bundle a commit behind (the pre-commit set-up test failed so in a CI run under load). The sync
    updates again before it lets the lock go."""
    from cora_ci import hooks

    for key, value in base_env.items():  # git's isolated config for the sync's own git calls
        monkeypatch.setenv(key, value)
    repo = new_repo(tmp_path / "repo", base_env)
    write(repo, {"a.py": "def a():\n    return 1\n"})
    run(repo, base_env, "git", "add", "-A")
    run(repo, base_env, "git", "commit", "-qm", "a")
    real, kinds = hooks._update, []

    def moved_after_the_first(at: Path, kind: str, wait: float) -> str | None:
        got = real(at, kind, wait)
        kinds.append(kind)
        if len(kinds) == 1:  # the user commits on while the first update finishes
            write(repo, {"b.py": "def b():\n    return 2\n"})
            run(repo, base_env, "git", "add", "-A")
            run(repo, base_env, "git", "commit", "-qm", "b")
        return got

    monkeypatch.setattr(hooks, "_update", moved_after_the_first)
    monkeypatch.setenv("CORA_HOOK_LOCK", str(acquire(repo / ".cora" / "index")))  # as the hook hands it
    hooks.background_sync(repo)
    assert kinds == ["rev", "rev"]
    assert "b.py::b" in assert_at_head(repo, base_env)
    assert not (repo / ".git" / FAILED).exists()
