"""`cora-ci index` on every kind of repository a user or a CI runner has: bare, shallow, a linked
worktree, with submodules, a sparse checkout, from a subdirectory, outside git, empty."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, init_repo

from cora_ci.files.source import snapshot
from cora_ci.files.text import Unread

CORA = shutil.which("cora-ci", path=os.path.dirname(sys.executable)) or "cora-ci"


def cora(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CORA, *args], cwd=cwd, capture_output=True, text=True, check=False,
                          env={**os.environ, "NO_COLOR": "1"})  # fmt: skip


def _anchors(bundle: Path, cwd: Path) -> set[str]:
    out = cora("query", "value", "--bundle", str(bundle), "--format", "json", "-k", "20", cwd=cwd)
    assert out.returncode == 0, out.stderr
    return {r["anchor"] for r in json.loads(out.stdout)["results"]}


@pytest.fixture
def origin(tmp_path: Path, private_cache: None) -> Path:
    """Two commits: `one` (tagged v1, a.py and docs) and `two` (adds b.py), on main."""
    repo = init_repo(
        tmp_path / "origin", {"pkg/a.py": "def a_value():\n    return 1\n", "docs/x.md": "# Doc\n\nvalue\n"}
    )
    git(repo, "tag", "v1")
    (repo / "pkg" / "b.py").write_text("def b_value():\n    return 2\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    return repo


def test_a_bare_repository_by_commit_branch_or_tag(origin: Path, tmp_path: Path) -> None:
    bare = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(bare))
    first = git(origin, "rev-parse", "v1").strip()
    for rev, has_b in (("v1", False), ("main", True), (first, False), ("HEAD", True)):
        out = tmp_path / f"bundle-{rev[:8]}"
        done = cora(
            "index", str(bare), "--rev", rev, "--out", str(out), "--model", "none", "-q", cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        assert ("pkg/b.py::b_value" in _anchors(out, tmp_path)) == has_b, rev
    inside = cora("index", "--out", str(tmp_path / "b-in"), "--model", "none", "-q", cwd=bare)  # HEAD
    assert inside.returncode == 0, inside.stderr
    wrong = cora("index", str(bare), "--worktree", "--out", str(tmp_path / "x"), cwd=tmp_path)
    assert wrong.returncode == 4 and "bare repository" in wrong.stderr and wrong.stderr.count("\n") == 1


def test_a_shallow_clone_builds_and_updates(origin: Path, tmp_path: Path) -> None:
    """CI's default clone has one commit: a bundle is built, and updated after the next fetch."""
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(clone))
    assert cora("index", "--model", "none", "-q", cwd=clone).returncode == 0
    (origin / "pkg" / "c.py").write_text("def c_value():\n    return 3\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "three")
    git(clone, "fetch", "-q", "--depth", "1", "origin", "main")
    git(clone, "reset", "-q", "--hard", "FETCH_HEAD")
    out = cora("index", "--model", "none", "-q", cwd=clone)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("updated: 1 file(s) re-chunked, 0 removed"), out.stdout
    assert "pkg/c.py::c_value" in _anchors(clone / ".cora" / "index", clone)


def test_a_linked_worktree_and_a_subdirectory(origin: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    git(origin, "worktree", "add", "-q", str(wt), "v1")
    assert cora("index", "--model", "none", "-q", cwd=wt).returncode == 0
    assert "pkg/b.py::b_value" not in _anchors(wt / ".cora" / "index", wt)  # the worktree's own commit
    sub = cora("index", "--model", "none", "-q", cwd=origin / "pkg")  # from inside: the whole repository
    assert (
        sub.returncode == 0
        and (origin / ".cora" / "index").is_dir()
        and not (origin / "pkg" / ".cora").exists()
    )
    assert "docs/x.md::Doc" in _anchors(origin / ".cora" / "index", origin)


def test_submodules_are_skipped_with_a_diagnostic(origin: Path, tmp_path: Path) -> None:
    app = init_repo(tmp_path / "app", {"main.py": "def main_value():\n    return 0\n"})
    git(app, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(origin), "vendor/lib")
    git(app, "commit", "-qm", "submodule")
    out = cora("index", "--model", "none", "-q", cwd=app)
    assert out.returncode == 0, out.stderr
    assert "  vendor/lib: CORA-CHK-009 submodule at commit" in out.stdout
    assert not any(a.startswith("vendor/") for a in _anchors(app / ".cora" / "index", app))


def test_a_sparse_checkout_indexes_the_whole_commit(origin: Path, tmp_path: Path) -> None:
    clone = tmp_path / "sparse"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "sparse-checkout", "set", "pkg")
    assert not (clone / "docs").exists()
    for kind in ("--worktree", "--staged", "--rev=HEAD"):
        out = clone / f".cora/{kind.strip('-').split('=')[0]}"
        done = cora("index", kind, "--out", str(out), "--model", "none", "-q", cwd=clone)
        assert done.returncode == 0, (kind, done.stderr)
        assert "docs/x.md::Doc" in _anchors(out, clone), kind  # left out of the disk, not of the commit


def test_a_file_gone_while_the_worktree_is_read_is_skipped_with_a_note(origin: Path) -> None:
    (origin / "new.py").write_text("def new_value():\n    return 4\n")  # untracked: on disk only
    snap = snapshot(origin, "worktree")
    (origin / "new.py").unlink()
    got = dict((e.path, data) for e, data in snap.read(list(snap.entries)))
    assert isinstance(got["new.py"], Unread) and got["new.py"].code == "CORA-CHK-011"
    assert got["pkg/a.py"] == b"def a_value():\n    return 1\n"


def test_outside_git_and_empty_directories(tmp_path: Path, private_cache: None) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("def plain_value():\n    return 5\n")
    out = cora("index", str(plain), "--model", "none", "-q", cwd=tmp_path)
    assert out.returncode == 0 and "indexed dir (not a git repository: its files as they are)" in out.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = cora("index", str(empty), cwd=tmp_path)
    assert nothing.returncode == 4 and nothing.stderr.startswith("error: CORA-IO-004: nothing to index in ")
    assert (
        "it holds no file" in nothing.stderr and not (empty / ".cora" / "index" / "manifest.msgpack").exists()
    )
    (empty / "notes.txt").write_text("hello\n")
    (empty / ".cora.toml").write_text('exclude = ["*.txt", ".cora.toml"]\n')
    excluded = cora("index", str(empty), cwd=tmp_path)
    assert excluded.returncode == 4 and "every file is excluded by the config" in excluded.stderr
