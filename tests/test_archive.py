"""Bundle archives: deterministic writing, safe and read-only extraction, refusals."""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cora_ci.build import build
from cora_ci.bundle import manifest as mf
from cora_ci.bundle import open_bundle
from cora_ci.bundle.archive import MAX_MEMBER_BYTES, MAX_MEMBERS, cache_root, limits, prune, write_archive
from cora_ci.errors import CoraError

FILES = {
    "src/app.py": "def greet(name):\n    return 'hi ' + name\n\n\nclass Store:\n    def add(self, x):\n        return x\n",
    "README.md": "# Demo\n\nSome text.\n",
}


pytestmark = pytest.mark.usefixtures("private_cache")


@pytest.fixture
def bundle_dir(make_repo: Callable[[dict[str, str]], Path]) -> Path:
    repo = make_repo(FILES)
    build(repo, model="none")
    return repo / ".cora" / "index"


def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def _member(
    name: str, data: bytes = b"x", kind: bytes = tarfile.REGTYPE, **kw: object
) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    for k, v in kw.items():
        setattr(info, k, v)
    if kind == tarfile.REGTYPE:
        info.size = len(data)
        return info, data
    return info, None


def test_archive_is_deterministic_and_normalised(bundle_dir: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    pa = write_archive(bundle_dir, a)
    os.utime(bundle_dir / mf.MANIFEST, (1, 1))  # file times never reach the archive
    pb = write_archive(bundle_dir, b)
    assert a.read_bytes() == b.read_bytes() and pa.sha256 == pb.sha256
    raw = a.read_bytes()
    assert raw[:2] == b"\x1f\x8b" and raw[4:8] == b"\0\0\0\0"  # gzip without a time stamp
    assert not raw[3] & 0x08  # ... and without a file name
    built_at = open_bundle(bundle_dir).manifest["built_at"]
    with tarfile.open(a) as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == sorted(m.name for m in members)
        assert {m.name for m in members if m.isfile()} == {
            p.relative_to(bundle_dir).as_posix() for p in bundle_dir.rglob("*") if p.is_file()}  # fmt: skip
        for m in members:
            assert (m.uid, m.gid, m.uname, m.gname, m.mtime) == (0, 0, "", "", built_at)
            assert m.mode == (0o755 if m.isdir() else 0o644) and not m.pax_headers
    with gzip.open(a) as gz:
        head = gz.read(512)
    assert head[257:265] == b"ustar\x0000"  # POSIX ustar, no pax or GNU extension headers
    assert pa.files == sum(1 for p in bundle_dir.rglob("*") if p.is_file())


def test_an_archive_opens_as_a_read_only_extracted_copy_made_once(bundle_dir: Path, tmp_path: Path) -> None:
    archive = tmp_path / "bundle.tar.gz"
    p = write_archive(bundle_dir, archive)
    b = open_bundle(archive)
    assert b.root == cache_root() / p.sha256
    assert b.manifest == open_bundle(bundle_dir).manifest
    for q in [b.root, *b.root.rglob("*")]:
        assert not q.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH), q
    inode = (b.root / mf.MANIFEST).stat().st_ino
    assert open_bundle(archive).root == b.root and (b.root / mf.MANIFEST).stat().st_ino == inode
    assert [q.name for q in cache_root().iterdir()] == [p.sha256]  # no temporary left behind
    assert b.lexical.search("greet", 3)


def test_a_tampered_archive_fails_verification(bundle_dir: Path, tmp_path: Path) -> None:
    archive = tmp_path / "bundle.tar.gz"
    write_archive(bundle_dir, archive)
    with tarfile.open(archive) as tar:
        members = [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]  # type: ignore[union-attr]
    bad = []
    for m, data in members:
        if m.name == "bm25/meta.json":
            assert data is not None
            data = data.replace(b'"', b"'", 1)
        bad.append((m, data))
    tampered = tmp_path / "tampered.tar.gz"
    tampered.write_bytes(_tar(bad))
    with pytest.raises(CoraError) as e:
        open_bundle(tampered)
    assert e.value.code == "CORA-BND-003"


@pytest.mark.parametrize(
    ("member", "why"),
    [
        (_member("/etc/evil"), "absolute"),
        (_member("../evil"), ".."),
        (_member("bm25/../../evil"), ".."),
        (_member("link", kind=tarfile.SYMTYPE, linkname="/etc/passwd"), "links"),
        (_member("hard", kind=tarfile.LNKTYPE, linkname="manifest.msgpack"), "links"),
        (_member("dev", kind=tarfile.CHRTYPE, devmajor=1, devminor=3), "devices"),
        (_member("fifo", kind=tarfile.FIFOTYPE), "devices"),
    ],
)
def test_unsafe_members_are_refused_and_nothing_is_left(
    tmp_path: Path, member: tuple[tarfile.TarInfo, bytes | None], why: str
) -> None:
    archive = tmp_path / "evil.tar.gz"
    archive.write_bytes(_tar([_member("manifest.msgpack", b"m"), member]))
    with pytest.raises(CoraError) as e:
        open_bundle(archive)
    assert e.value.code == "CORA-BND-008" and why in e.value.message
    assert not (tmp_path / "evil").exists() and not Path("/etc/evil").exists()
    assert list(cache_root().iterdir()) == []


def test_oversized_members_are_refused_before_any_byte_is_written(tmp_path: Path) -> None:
    info = tarfile.TarInfo("vectors.usearch")
    info.size = MAX_MEMBER_BYTES + 1
    header = info.tobuf(format=tarfile.GNU_FORMAT)  # a header that claims more than the limit, no data
    archive = tmp_path / "bomb.tar.gz"
    archive.write_bytes(gzip.compress(header + b"\0" * 1024, mtime=0))
    with pytest.raises(CoraError) as e:
        open_bundle(archive)
    assert e.value.code == "CORA-BND-008" and "limit" in e.value.message
    assert list(cache_root().iterdir()) == []


def _streamed(path: Path, members: Iterator[tuple[str, int]]) -> None:
    """A gzip'd tar of members of zeros, written as a stream (a bomb never sits in memory)."""
    with gzip.open(path, "wb", compresslevel=9) as gz, tarfile.open(fileobj=gz, mode="w|") as tar:
        for name, size in members:
            info = tarfile.TarInfo(name)
            info.size = size
            tar.addfile(info, _Zeros(size))


class _Zeros(io.RawIOBase):
    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        n = min(len(b), self.left)
        b[:n] = bytes(n)
        self.left -= n
        return n


def test_a_decompression_bomb_is_refused_at_once_writing_nothing(tmp_path: Path) -> None:
    """400 MB of zeros packs into ~400 KB: over 100x its size, refused on the member's header."""
    archive = tmp_path / "bomb.tar.gz"
    _streamed(archive, iter([("manifest.msgpack", 10), ("vectors.usearch", 400 << 20)]))
    assert archive.stat().st_size < 1 << 20
    t = time.perf_counter()
    with pytest.raises(CoraError) as e:
        open_bundle(archive)
    assert time.perf_counter() - t < 1.0
    assert e.value.code == "CORA-BND-008" and "too many for its size" in e.value.message
    assert "CORA_ARCHIVE_MAX_RATIO" in e.value.message and list(cache_root().iterdir()) == []


def test_a_flood_of_members_is_refused_before_one_is_written(tmp_path: Path) -> None:
    archive = tmp_path / "flood.tar.gz"
    _streamed(archive, ((f"shards/{i:05d}", 0) for i in range(MAX_MEMBERS + 1)))
    with pytest.raises(CoraError) as e:
        open_bundle(archive)
    assert e.value.code == "CORA-BND-008" and f"over {MAX_MEMBERS} members" in e.value.message
    assert list(cache_root().iterdir()) == []


def test_the_limits_can_be_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert limits(1 << 20) == (MAX_MEMBER_BYTES, (64 << 20) + 100 * (1 << 20), MAX_MEMBERS)
    monkeypatch.setenv("CORA_ARCHIVE_MAX_RATIO", "1000")
    monkeypatch.setenv("CORA_ARCHIVE_MAX_MEMBERS", "50")
    assert limits(1 << 20) == (MAX_MEMBER_BYTES, (64 << 20) + 1000 * (1 << 20), 50)


@pytest.mark.parametrize(
    "content",
    [b"not an archive at all", b"\x1f\x8b\x08\x00garbage", None],
)
def test_unreadable_archives_are_a_clear_error(
    bundle_dir: Path, tmp_path: Path, content: bytes | None
) -> None:
    archive = tmp_path / "bad.tar.gz"
    if content is None:  # a real archive cut short
        write_archive(bundle_dir, archive)
        archive.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    else:
        archive.write_bytes(content)
    with pytest.raises(CoraError) as e:
        open_bundle(archive)
    assert e.value.code == "CORA-BND-009"


def test_an_archive_cut_anywhere_in_its_first_bytes_is_a_clear_error(
    bundle_dir: Path, tmp_path: Path
) -> None:
    """Inside the gzip header too: CPython's tarfile reads one cut after its third byte as
    `ord(b"")` (a TypeError, not one of its own errors)."""
    whole = tmp_path / "whole.tar.gz"
    write_archive(bundle_dir, whole)
    raw = whole.read_bytes()
    for n in range(1, 64):
        archive = tmp_path / f"cut{n}.tar.gz"
        archive.write_bytes(raw[:n])
        with pytest.raises(CoraError) as e:
            open_bundle(archive)
        assert e.value.code == "CORA-BND-009", n


def test_an_archive_without_a_manifest_is_not_a_bundle(tmp_path: Path) -> None:
    archive = tmp_path / "empty.tar.gz"
    archive.write_bytes(_tar([_member("README", b"hello")]))
    with pytest.raises(CoraError) as e:
        open_bundle(archive)
    assert e.value.code == "CORA-BND-009"


def test_duplicate_members_are_refused(tmp_path: Path) -> None:
    archive = tmp_path / "dup.tar.gz"
    archive.write_bytes(_tar([_member("manifest.msgpack", b"a"), _member("manifest.msgpack", b"b")]))
    with pytest.raises(CoraError) as e:
        open_bundle(archive)
    assert e.value.code == "CORA-BND-008"


def test_the_extraction_cache_keeps_recent_bundles_and_prunes_idle_ones(
    bundle_dir: Path, tmp_path: Path
) -> None:
    base = cache_root()
    base.mkdir(parents=True)
    day, now = 24 * 3600, time.time()
    old = []
    for i in range(6):  # six extractions last used 2..7 days ago
        d = base / f"{i:064x}"
        d.mkdir()
        (d / mf.MANIFEST).write_bytes(b"x")
        os.utime(d, (now - (i + 2) * day,) * 2)
        old.append(d)
    crashed = base / ".0123456789abcdef.tmp-x"
    crashed.mkdir()
    os.utime(crashed, (now - 7200,) * 2)
    fresh_staging = base / ".fedcba9876543210.tmp-y"
    fresh_staging.mkdir()
    archive = tmp_path / "bundle.tar.gz"
    p = write_archive(bundle_dir, archive)
    assert open_bundle(archive).root == base / p.sha256
    left = {q.name for q in base.iterdir()}
    # the new one and the three most recently used old ones stay; so does a staging dir in use
    assert left == {p.sha256, *(d.name for d in old[:3]), fresh_staging.name}
    # opening again marks it used, so it outlives bundles used before it
    os.utime(base / p.sha256, (now - 30 * day,) * 2)
    assert open_bundle(archive).root == base / p.sha256
    assert (base / p.sha256).stat().st_mtime > now - 60
    older = base / f"{99:064x}"
    older.mkdir()
    os.utime(older, (now - 10 * day,) * 2)
    assert set(prune(base, now + 2 * day)) == {older, fresh_staging}  # two days on, that one crashed too
    assert {q.name for q in base.iterdir()} == left - {fresh_staging.name}
