"""`cora-ci unpack`: the archive's bundle, extracted with archive.py's checks, as a user runs it."""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from test_archive import _member, _tar

from cora_ci.build import build
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.archive import MAX_MEMBER_BYTES, write_archive
from cora_ci.errors import CODES

CORA = shutil.which("cora-ci", path=os.path.dirname(sys.executable)) or "cora-ci"
FILES = {"src/app.py": "def greet(name):\n    return 'hi ' + name\n", "README.md": "# Demo\n\nSome text.\n"}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}


def unpack(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CORA, "unpack", *args], capture_output=True, text=True, env=env, cwd=cwd, check=False
    )


@pytest.fixture
def archive(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repo = make_repo(FILES)
    build(repo, model="none")
    return write_archive(repo / ".cora" / "index", tmp_path / "dl" / "bundle.tar.gz").path


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_unpack_prints_the_read_only_cached_copy(archive: Path, tmp_path: Path, env: dict[str, str]) -> None:
    out = unpack(str(archive), env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    root = Path(out.stdout.strip())
    assert root.parent == tmp_path / "cache" / "cora-ci" / "bundles" and (root / mf.MANIFEST).is_file()
    assert all(not p.stat().st_mode & stat.S_IWUSR for p in [root, *root.rglob("*")])
    assert unpack(str(archive), env=env, cwd=tmp_path).stdout == out.stdout  # cached by digest


def test_unpack_to_a_directory_gives_a_writable_bundle_that_index_updates(
    archive: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    repo = tmp_path / "repo"  # where the archive's bundle was built (make_repo)
    target = repo / ".cora" / "copy"
    out = unpack(str(archive), "-o", str(target), env=env, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == str(target), out.stderr
    with tarfile.open(archive) as tar:
        packed = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
    assert _tree(target) == packed
    assert not [p for p in target.parent.iterdir() if ".tmp-" in p.name]  # no temporary left beside it
    assert (target / mf.MANIFEST).stat().st_mode & stat.S_IWUSR
    s = build(repo, target, model="none")  # the repository the archive came from: nothing to redo
    assert not s.rebuilt and s.rechunked == 0 and s.files == 2


@pytest.mark.parametrize(
    ("member", "why"),
    [
        (_member("../evil"), ".."),
        (_member("bm25/../../evil"), ".."),
        (_member("/tmp/evil-abs"), "absolute"),
        (_member("link", kind=tarfile.SYMTYPE, linkname="../evil"), "links"),
        (_member("dev", kind=tarfile.CHRTYPE, devmajor=1, devminor=3), "devices"),
    ],
)
def test_hostile_archives_are_refused_and_nothing_is_written(
    tmp_path: Path, env: dict[str, str], member: tuple[tarfile.TarInfo, bytes | None], why: str
) -> None:
    evil = tmp_path / "dl" / "evil.tar.gz"
    evil.parent.mkdir()
    evil.write_bytes(_tar([_member("manifest.msgpack", b"m"), member]))
    work = tmp_path / "work"
    work.mkdir()
    for args in ([str(evil), "-o", str(work / "out" / "bundle")], [str(evil)]):
        out = unpack(*args, env=env, cwd=work)
        assert out.returncode == CODES["CORA-BND-008"].exit_status, out.stderr
        assert out.stderr.startswith("error: CORA-BND-008: ") and why in out.stderr
        assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    left = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.parts[-1] != "cache")
    assert [p for p in left if not p.startswith("cache/")] == ["dl", "dl/evil.tar.gz", "work", "work/out"]
    assert (
        not any((tmp_path / "cache" / "cora-ci" / "bundles").glob("*")) and not Path("/tmp/evil-abs").exists()
    )


def test_an_oversized_member_is_refused(tmp_path: Path, env: dict[str, str]) -> None:
    info = tarfile.TarInfo("vectors.usearch")
    info.size = MAX_MEMBER_BYTES + 1
    bomb = tmp_path / "bomb.tar.gz"
    bomb.write_bytes(gzip.compress(info.tobuf(format=tarfile.GNU_FORMAT) + b"\0" * 1024, mtime=0))
    out = unpack(str(bomb), "-o", str(tmp_path / "b"), env=env, cwd=tmp_path)
    assert out.stderr.startswith("error: CORA-BND-008: ") and "limit" in out.stderr
    assert not (tmp_path / "b").exists() or not list((tmp_path / "b").iterdir())


def test_unpack_refuses_to_overwrite_and_reports_bad_input(
    archive: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    cases = [
        ([str(archive), "-o", str(full)], "CORA-BND-010"),
        ([str(archive), "-o", str(full / "keep.txt")], "CORA-BND-010"),
        ([str(tmp_path / "missing.tar.gz")], "CORA-IO-001"),
        ([str(full / "keep.txt"), "-o", str(tmp_path / "x")], "CORA-BND-009"),
    ]
    for args, code in cases:
        out = unpack(*args, env=env, cwd=tmp_path)
        assert out.returncode == CODES[code].exit_status and out.stderr.startswith(f"error: {code}: "), (
            args,
            out.stderr,
        )
    assert (full / "keep.txt").read_text() == "mine" and not (tmp_path / "x").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert unpack(str(archive), "-o", str(empty), env=env, cwd=tmp_path).returncode == 0
    assert (empty / mf.MANIFEST).is_file()


def test_pack_takes_the_archive_as_an_argument_or_with_o(
    archive: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    bundle = Path(unpack(str(archive), env=env, cwd=tmp_path).stdout.strip())
    for args in (["-o", str(tmp_path / "a.tar.gz")], [str(tmp_path / "b.tar.gz")]):
        out = subprocess.run(
            [CORA, "pack", str(bundle), *args], capture_output=True, text=True, env=env, check=False
        )
        assert out.returncode == 0, out.stderr
    assert (
        (tmp_path / "a.tar.gz").read_bytes() == (tmp_path / "b.tar.gz").read_bytes() == archive.read_bytes()
    )
    both = subprocess.run([CORA, "pack", str(bundle), "x.tar.gz", "-o", "y.tar.gz"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, check=False)  # fmt: skip
    assert both.returncode == 2 and not (tmp_path / "x.tar.gz").exists()
