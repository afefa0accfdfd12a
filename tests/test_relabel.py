"""A commit that changes none of a bundle's files: the bundle is relabelled without listing the tree,
and only when a full build would find exactly its files."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from conftest import git, init_repo

from cora_ci.build import build
from cora_ci.build.previous import untouched
from cora_ci.bundle import manifest as mf

pytestmark = pytest.mark.usefixtures("private_cache")

FILES = {
    ".cora.toml": 'model = "none"\nexclude = ["notes/", ".cora.toml"]\n',
    "src/app.py": "def main():\n    return 1\n",
    "gen/made.py": "def made():\n    return 2\n",
}


def commit(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "c", "--allow-empty")


def full_build(repo: Path, tmp: Path) -> Path:
    out = tmp / "full"
    shutil.rmtree(out, ignore_errors=True)
    build(repo, out, full=True)
    return out


def same_bundle(a: Path, b: Path) -> bool:
    return (a / mf.MANIFEST).read_bytes() == (b / mf.MANIFEST).read_bytes()


def test_a_commit_of_left_out_files_relabels_the_bundle_as_a_full_build_would(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", FILES)
    out = tmp_path / "inc"
    build(repo, out)
    commit(repo, {"notes/todo.py": "def later():\n    pass\n"})
    done = untouched(repo, out, None, time.perf_counter())
    assert done is not None and done.rechunked == done.removed == 0 and done.files == 2
    head = git(repo, "rev-parse", "HEAD").strip()
    assert done.source == f"rev {head[:12]}"
    assert same_bundle(out, full_build(repo, tmp_path))
    commit(repo, {})  # an empty commit, then the same commit again: nothing to write
    assert untouched(repo, out, None, time.perf_counter()) is not None
    assert same_bundle(out, full_build(repo, tmp_path))


@pytest.mark.parametrize(
    "change",
    [
        {"src/app.py": "def main():\n    return 3\n"},  # an indexed file
        {"src/new.py": "X = 1\n"},  # a new one
        {".cora.toml": 'model = "none"\nexclude = ["notes/", ".cora.toml", "gen/"]\n'},  # the selection
        {".cora-boosts": "dir:src\n"},  # what the bundle records
    ],
)
def test_a_commit_that_may_change_the_bundle_is_listed_in_full(
    tmp_path: Path, change: dict[str, str]
) -> None:
    """The config leaves itself out, yet its change reselects files that did not change (`gen/`):
    only a full listing sees that."""
    repo = init_repo(tmp_path / "repo", FILES)
    out = tmp_path / "inc"
    build(repo, out)
    commit(repo, change)
    assert untouched(repo, out, None, time.perf_counter()) is None
    build(repo, out)
    assert same_bundle(out, full_build(repo, tmp_path))


def test_a_bundle_of_staged_files_or_of_a_tree_git_lacks_is_listed_in_full(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", FILES)
    out = tmp_path / "inc"
    build(repo, out, kind="staged")
    assert untouched(repo, out, None, time.perf_counter()) is None
    elsewhere = init_repo(
        tmp_path / "other", {**FILES, "notes/x.py": "Y = 2\n"}
    )  # another tree, unknown here
    build(repo, out)
    shutil.copytree(out, tmp_path / "copy")
    assert untouched(elsewhere, tmp_path / "copy", None, time.perf_counter()) is None
    build(elsewhere, tmp_path / "copy")  # the same files: listed, then relabelled
    assert same_bundle(tmp_path / "copy", full_build(elsewhere, tmp_path))
