"""A bundle as one archive file: what CI publishes and an air-gapped machine downloads.

Writing is deterministic: a gzip'd POSIX ustar archive of the bundle's files in sorted order, each
with mode 0644 (directories 0755), owner 0:0 without names, the manifest's `built_at` as mtime, no
pax headers, and a gzip header without file name or time, so one bundle always packs to the same
bytes.

Reading never trusts the archive: `open_bundle` (through `store.resolve`) extracts it once into
`$XDG_CACHE_HOME/cora-ci/bundles/<sha256 of the archive>/`, writing each member itself (tarfile's
extraction is not used) after refusing absolute paths, `..`, links, devices and oversized members
with CORA-BND-008. The copy is made read-only and renamed into place only when complete, so a
crash or a concurrent reader never sees half an extraction; the bundle's own checksums are then
verified as for any bundle. Each new extraction prunes the cache (`prune`): extractions unused for
a day beyond the four most recently used, and staging directories a crash left behind.
`cora-ci unpack -o DIR` extracts with the same checks into a directory of the user's choosing.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import tarfile
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from cora_ci.bundle import manifest as mf
from cora_ci.bundle.store import sha256_file
from cora_ci.errors import CoraError

# Limits on what an archive may expand to, checked on each member's header before its bytes are
# written, so a bomb is refused at once. A bundle is ~1,200 files at most (128 shards, 128 BM25
# segments of a few files each) and compresses ~1.3x (vectors and postings are dense): far below.
# Each can be raised with an environment variable of the same name prefixed `CORA_ARCHIVE_`.
MAX_MEMBER_BYTES = 8 << 30
MAX_TOTAL_BYTES = 32 << 30
MAX_MEMBERS = 10_000
MAX_RATIO = 100  # expanded bytes per archive byte, beyond the first FREE_BYTES
FREE_BYTES = 64 << 20
_BLOCK = 1 << 20
KEEP_EXTRACTED = 4  # the cache keeps at least the most recently used extractions ...
IDLE_SECONDS = 24 * 3600  # ... and any other used within a day (a reader may still hold it open)
_STALE_STAGING = 3600  # a staging directory older than this was left by a crashed extraction
_DIGEST = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Packed:
    path: Path
    files: int
    bytes: int
    sha256: str


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cora-ci" / "bundles"


def write_archive(bundle_dir: Path, out: Path) -> Packed:
    """Pack the bundle at `bundle_dir` (verified first) into the archive `out`, atomically."""
    from cora_ci.bundle import open_bundle

    bundle = open_bundle(bundle_dir)
    root = bundle.root
    mtime = int(bundle.manifest.get("built_at") or 0)
    paths = sorted(p for p in root.rglob("*") if p.is_file() or p.is_dir())
    out = out.absolute()
    if out.is_dir():
        raise CoraError("CORA-IO-001", f"{out} is a directory; give the archive's file name")
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.tmp-", dir=out.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as raw:
            _write_tar(raw, root, paths, mtime)
            raw.flush()
            os.fsync(raw.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # as any new file: others may read it (mkstemp makes 0600)
        os.replace(tmp, out)
    except (OSError, ValueError) as e:
        raise CoraError("CORA-BND-006", f"cannot write archive {out}: {e}") from None
    finally:
        tmp.unlink(missing_ok=True)
    files = sum(1 for p in paths if p.is_file())
    return Packed(out, files, out.stat().st_size, sha256_file(out))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_tar(raw: BinaryIO, root: Path, paths: list[Path], mtime: int) -> None:
    gz = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9)
    with gz, tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for p in paths:
            info = _info(p.relative_to(root).as_posix(), p, mtime)
            if info.isreg():
                with p.open("rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)


def _info(name: str, p: Path, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mtime = mtime
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if p.is_dir():
        info.type, info.mode = tarfile.DIRTYPE, 0o755
    else:
        info.type, info.mode, info.size = tarfile.REGTYPE, 0o644, p.stat().st_size
    return info


def extracted(archive: Path) -> Path:
    """The read-only directory holding `archive`'s bundle, extracted on first use."""
    try:
        digest = sha256_file(archive)
    except OSError as e:
        raise CoraError("CORA-IO-002", f"cannot read {archive}: {e.strerror or e}") from None
    base = cache_root()
    dest = base / digest
    if (dest / mf.MANIFEST).is_file():
        _touch(dest)
        return dest
    with _staging(base, f".{digest[:16]}.tmp-", f"cannot extract {archive} into {base}") as tmp:
        _extract(archive, tmp)
        _read_only(tmp)
        try:
            os.rename(tmp, dest)
        except OSError:
            if not (dest / mf.MANIFEST).is_file():  # not a concurrent extraction that won the race
                raise
    prune(base)
    return dest


def prune(base: Path, now: float | None = None) -> list[Path]:
    """Remove the extractions of archives nobody used for a day, beyond the `KEEP_EXTRACTED` most
    recently used (a use sets a directory's mtime), and staging directories a crash left behind;
    return what went. Run after each new extraction, so the cache holds a few bundles, not every
    artifact ever downloaded."""
    now = time.time() if now is None else now
    used: list[tuple[float, Path]] = []
    gone: list[Path] = []
    try:
        entries = list(base.iterdir())
    except OSError:
        return gone
    for p in entries:
        try:
            mtime = p.lstat().st_mtime
        except OSError:
            continue
        if _DIGEST.fullmatch(p.name):
            used.append((mtime, p))
        elif p.name.startswith(".") and ".tmp-" in p.name and now - mtime > _STALE_STAGING:
            gone.append(p)
    used.sort(reverse=True)
    gone += [p for mtime, p in used[KEEP_EXTRACTED:] if now - mtime > IDLE_SECONDS]
    for p in gone:
        _remove(p)
    return gone


def _touch(dest: Path) -> None:
    """Mark an extraction as used now (best effort: a read-only cache is still a cache)."""
    with suppress(OSError):
        os.utime(dest)


def unpack_to(archive: Path, out: Path) -> Path:
    """Extract `archive` into the new or empty directory `out`, checked as `extracted` checks, and
    verify it. Unlike the cached copy it stays writable: it is the user's bundle, which `cora-ci
    index --out` can go on updating (how a CI job continues from a downloaded artifact)."""
    from cora_ci.bundle import open_bundle

    out = out.absolute()
    if out.is_file() or out.is_symlink() or (out.is_dir() and any(out.iterdir())):
        raise CoraError("CORA-BND-010", f"{out} exists and is not an empty directory")
    with _staging(out.parent, f".{out.name}.tmp-", f"cannot unpack into {out}") as tmp:
        _extract(archive, tmp)
        open_bundle(tmp)  # checksums and format, before the copy takes its place
        if out.is_dir():
            out.rmdir()
        os.rename(tmp, out)
    return out


@contextmanager
def _staging(parent: Path, prefix: str, failure: str) -> Iterator[Path]:
    """A temporary directory in `parent` for an extraction, removed unless the body renamed it into
    place, so an interrupted one leaves nothing; an OSError is CORA-BND-006 prefixed by `failure`."""
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    except OSError as e:
        raise CoraError("CORA-BND-006", f"{failure}: {e.strerror or e}") from None
    try:
        yield tmp
    except OSError as e:
        raise CoraError("CORA-BND-006", f"{failure}: {e.strerror or e}") from None
    finally:
        if tmp.exists():
            _remove(tmp)


def limits(archive_bytes: int) -> tuple[int, int, int]:
    """(bytes of one member, bytes of all, members) an archive of `archive_bytes` may expand to."""

    def env(name: str, default: int) -> int:
        value = os.environ.get(f"CORA_ARCHIVE_{name}", "")
        return int(value) if value.isdigit() else default

    ratio = env("MAX_RATIO", MAX_RATIO)
    total = min(
        env("MAX_TOTAL_BYTES", MAX_TOTAL_BYTES), env("FREE_BYTES", FREE_BYTES) + ratio * archive_bytes
    )
    return env("MAX_MEMBER_BYTES", MAX_MEMBER_BYTES), total, env("MAX_MEMBERS", MAX_MEMBERS)


def _extract(archive: Path, into: Path) -> None:
    """Every member checked on its header first (a pass that writes nothing: a bomb or a flood of
    members is refused before the first byte lands), then written."""
    bound = limits(archive.stat().st_size)
    _read(archive, lambda tar, m, count, total: _checked(archive, m, count, total, bound))
    _read(archive, lambda tar, m, count, total: _write_member(archive, tar, m, into, bound, count, total))
    if not (into / mf.MANIFEST).is_file():
        raise CoraError("CORA-BND-009", f"{archive}: no {mf.MANIFEST} in the archive")


def _read(archive: Path, each: Callable[[tarfile.TarFile, tarfile.TarInfo, int, int], object]) -> None:
    """`each(tar, member, members so far, declared bytes so far)` over the archive's members, in order."""
    total = count = 0
    try:
        with _open(archive) as tar:
            for m in tar:
                count += 1
                total += max(m.size, 0)
                each(tar, m, count, total)
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise CoraError("CORA-BND-009", f"{archive}: not a readable bundle archive ({e})") from None


def _open(archive: Path) -> tarfile.TarFile:
    """The archive as a gzip'd tar stream. CPython's tarfile reads a gzip header cut short as
    `ord(b"")` and raises TypeError (a 3-byte file, found by tests/test_fuzz.py): a ReadError here."""
    try:
        return tarfile.open(archive, mode="r|gz")
    except TypeError as e:
        raise tarfile.ReadError(f"gzip header cut short: {e}") from None


def _write_member(archive: Path, tar: tarfile.TarFile, m: tarfile.TarInfo, into: Path,
                  bound: tuple[int, int, int], count: int, total: int) -> None:  # fmt: skip
    rel = _checked(archive, m, count, total, bound)
    target = into.joinpath(*rel.parts)
    if m.isdir():
        target.mkdir(parents=True, exist_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    src = tar.extractfile(m)
    if src is None:
        raise CoraError("CORA-BND-009", f"{archive}: member {m.name!r} has no data")
    try:
        with target.open("xb") as f:
            shutil.copyfileobj(src, f, _BLOCK)
    except FileExistsError:
        raise CoraError("CORA-BND-008", f"{archive}: member {m.name!r} appears twice") from None


def _checked(archive: Path, m: tarfile.TarInfo, count: int, total: int,
             bound: tuple[int, int, int]) -> PurePosixPath:  # fmt: skip
    """The member's safe relative path, or CORA-BND-008 naming what is wrong with it."""

    def refuse(why: str) -> CoraError:
        return CoraError("CORA-BND-008", f"{archive}: member {m.name!r}: {why}; refusing to extract")

    name = m.name
    rel = PurePosixPath(name)
    if not name or name.startswith("/") or "\\" in name or (len(name) > 1 and name[1] == ":"):
        raise refuse("absolute or non-POSIX path")
    if ".." in rel.parts:
        raise refuse("path leaves the bundle (`..`)")
    if m.issym() or m.islnk():
        raise refuse("links are not allowed")
    if not (m.isreg() or m.isdir()):
        raise refuse("devices, fifos and special files are not allowed")
    member_bytes, total_bytes, members = bound
    if m.size > member_bytes:
        raise refuse(f"{m.size} bytes is over the {member_bytes} limit (CORA_ARCHIVE_MAX_MEMBER_BYTES)")
    if total > total_bytes:
        raise refuse(f"the archive expands to over {total_bytes} bytes, too many for its size "
                     "(CORA_ARCHIVE_MAX_RATIO, CORA_ARCHIVE_MAX_TOTAL_BYTES)")  # fmt: skip
    if count > members:
        raise refuse(f"over {members} members (CORA_ARCHIVE_MAX_MEMBERS)")
    parts = [p for p in rel.parts if p not in ("", ".")]
    if not parts:
        return PurePosixPath(".")
    return PurePosixPath(*parts)


def _read_only(root: Path) -> None:
    """Files 0444, directories 0555, deepest first (a directory is locked after its content)."""
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o444)
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o555)
    os.chmod(root, 0o555)


def _remove(root: Path) -> None:
    for dirpath, _, _ in os.walk(root):
        os.chmod(dirpath, 0o755)
    shutil.rmtree(root, ignore_errors=True)
