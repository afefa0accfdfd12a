"""An update lists only what a commit changed since its bundle's commit, and gives the bundle a full
listing would: a relabel when no file of it changed, an update of the changed files otherwise."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import git, init_repo

from cora_ci.build import build
from cora_ci.bundle import manifest as mf
from cora_ci.bundle import open_bundle
from cora_ci.errors import CoraError

pytestmark = pytest.mark.usefixtures("private_cache")

FILES = {
    ".cora.toml": 'model = "none"\nexclude = ["notes/", ".cora.toml"]\n',
    "src/app.py": "def main():\n    return 1\n",
    "gen/made.py": "def made():\n    return 2\n",
}


def commit(repo: Path, files: dict[str, str | None]) -> None:
    for name, text in files.items():
        if text is None:
            (repo / name).unlink()
            continue
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "c", "--allow-empty")


def same_as_full_build(repo: Path, out: Path) -> bool:
    full = out.with_name("full")
    shutil.rmtree(full, ignore_errors=True)
    build(repo, full, full=True)
    return (out / mf.MANIFEST).read_bytes() == (full / mf.MANIFEST).read_bytes()


def tree_of(out: Path) -> str:
    return str(open_bundle(out).manifest["source"]["tree"])


def test_a_commit_of_left_out_files_relabels_the_bundle_as_a_full_build_would(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", FILES)
    out = tmp_path / "inc"
    build(repo, out)
    before = tree_of(out)
    commit(repo, {"notes/todo.py": "def later():\n    pass\n"})
    s = build(repo, out)
    assert s.since == before and s.rechunked == s.removed == 0 and s.files == 2
    assert s.source == f"rev {git(repo, 'rev-parse', 'HEAD')[:12]}"
    assert same_as_full_build(repo, out)
    commit(repo, {})  # an empty commit (the model named, as the bundle has it), then no commit
    assert build(repo, out, model="none").since and same_as_full_build(repo, out)
    assert build(repo, out).since and same_as_full_build(repo, out)


@pytest.mark.parametrize(
    ("change", "rechunked", "removed"),
    [
        ({"src/app.py": "def main():\n    return 3\n"}, 1, 0),
        ({"src/new.py": "X = 1\n", "notes/n.py": "Y = 2\n"}, 1, 0),
        ({"gen/made.py": None}, 0, 1),
        ({"gen/made.py": None, "gen/moved.py": "def made():\n    return 2\n"}, 1, 1),  # a rename
    ],
)
def test_a_commit_of_indexed_files_updates_only_them(
    tmp_path: Path, change: dict[str, str | None], rechunked: int, removed: int
) -> None:
    repo = init_repo(tmp_path / "repo", FILES)
    out = tmp_path / "inc"
    build(repo, out)
    before = tree_of(out)
    commit(repo, change)
    s = build(repo, out)
    assert (s.since, s.rechunked, s.removed) == (before, rechunked, removed)
    assert same_as_full_build(repo, out)


@pytest.mark.parametrize(
    "change",
    [
        {".cora.toml": 'model = "none"\nexclude = ["notes/", ".cora.toml", "gen/"]\n'},  # drops gen/
        {".cora-boosts": "dir:src\n"},
    ],
)
def test_a_commit_that_changes_the_config_is_listed_in_full(
    tmp_path: Path, change: dict[str, str | None]
) -> None:
    """The config leaves itself out, yet its change drops files that did not change (`gen/`):
    only a full listing sees that."""
    repo = init_repo(tmp_path / "repo", FILES)
    out = tmp_path / "inc"
    build(repo, out)
    commit(repo, change)
    assert build(repo, out).since == ""
    assert same_as_full_build(repo, out)


def test_a_bundle_of_staged_files_or_of_a_tree_git_lacks_is_listed_in_full(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", FILES)
    out = tmp_path / "inc"
    build(repo, out, kind="staged")
    assert build(repo, out).since == ""
    elsewhere = init_repo(tmp_path / "other", {**FILES, "notes/x.py": "Y = 2\n"})  # a tree unknown here
    shutil.copytree(out, tmp_path / "copy")
    s = build(elsewhere, tmp_path / "copy")
    assert s.since == "" and s.rechunked == 0  # the same files: listed, then relabelled
    assert same_as_full_build(elsewhere, tmp_path / "copy")


def test_a_revision_that_names_no_commit_is_an_error_with_a_bundle_to_update_too(tmp_path: Path) -> None:
    """`--rev` goes through `git rev-parse --verify` on either listing: `--all` is not an option
    that picks some branch's newest commit."""
    repo = init_repo(tmp_path / "repo", FILES)
    out = tmp_path / "inc"
    build(repo, out)
    for rev in ("--all", "no-such-branch"):
        with pytest.raises(CoraError) as e:
            build(repo, out, rev=rev)
        assert e.value.code == "CORA-IO-003" and "revision not found" in e.value.message


@pytest.mark.parametrize("model", ["none", "static"])
def test_a_bundle_checked_once_is_not_opened_again_to_be_updated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    """A bundle this machine did not write (another cache: downloaded, built in CI) has its BM25 and
    vectors checked before its first update; once they passed, the next runs trust the record,
    also for a bundle without vectors (there were none to check)."""
    import cora_ci.bundle.lexical_reader as lexical

    repo = init_repo(tmp_path / "repo", {"a.py": "def f():\n    return 1\n"})
    build(repo, model=model)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "another-cache"))
    opened: list[Path] = []
    real = lexical.LexicalIndex.__init__

    def counting(self: lexical.LexicalIndex, directory: Path, *args: object, **kwargs: object) -> None:
        opened.append(directory)
        real(self, directory, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(lexical.LexicalIndex, "__init__", counting)
    assert build(repo, model=model).rechunked == 0 and len(opened) == 1  # checked, then noted
    assert build(repo, model=model).rechunked == 0 and len(opened) == 1  # trusted: not opened again


def test_only_new_paths_go_through_the_configs_filters(tmp_path: Path) -> None:
    """A path the previous build listed was selected by the same config: only new paths are
    filtered, as a full build would (a lock file, an excluded directory), and a commit that adds
    none imports no pathspec (~10 ms of a sync that relabels the bundle)."""
    import subprocess
    import sys

    code = ("import sys; from pathlib import Path; from cora_ci.build import build; "
            "s = build(Path(sys.argv[1])); print(s.rechunked, 'pathspec' in sys.modules)")  # fmt: skip

    def update(repo: Path) -> list[str]:
        out = subprocess.run(
            [sys.executable, "-c", code, str(repo)], capture_output=True, text=True, check=True
        )
        return out.stdout.split()

    plain = init_repo(tmp_path / "plain", {"src/app.py": "def main():\n    return 1\n"})
    build(plain)
    commit(plain, {"src/app.py": "def main():\n    return 2\n"})
    assert update(plain)[0] == "1"
    commit(plain, {})  # nothing indexed changed: relabelled
    assert update(plain) == ["0", "False"]
    commit(plain, {"src/new.py": "def new():\n    return 3\n", "uv.lock": "version = 1\n"})
    assert update(plain)[0] == "1"
    assert "uv.lock" not in open_bundle(plain / ".cora" / "index").manifest["files"]["path"]
    globbed = init_repo(tmp_path / "globbed", FILES)
    build(globbed)
    commit(globbed, {"src/app.py": "def main():\n    return 2\n"})
    assert update(globbed)[0] == "1"
    commit(globbed, {"src/new.py": "def new():\n    return 3\n", "notes/todo.py": "def todo():\n    pass\n"})
    assert update(globbed)[0] == "1"
    for repo in (plain, globbed):
        out = repo / ".cora" / "index"
        assert "notes/todo.py" not in open_bundle(out).manifest["files"]["path"]
        assert same_as_full_build(repo, out)
