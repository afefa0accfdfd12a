"""Writing a bundle atomically and opening one read-only, verified.

A bundle is built in a temporary directory beside its target and swapped in whole (an atomic
exchange where the OS has one, else two renames with the old bundle kept as `<dir>.old` until the
new one is in place, and readers falling back to it), so a crash at any point leaves a readable
bundle. Readers check the manifest's own checksum and the sha256 of every other file before first
use; a record of verified files, kept outside the bundle and keyed by each file's size, mtime and
inode, makes later opens cheap. Nothing in the bundle directory is ever written by a reader.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from cora_ci import verified
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.leftovers import remove_leftovers
from cora_ci.errors import CoraError

_RENAME_EXCHANGE = 2
_CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_CHUNK):
            h.update(block)
    return h.hexdigest()


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def _fsync_tree(root: Path, skip: set[str]) -> None:
    """fsync the files written into `root` (not those in `skip`: hard links to durable files) and
    its directories."""
    written = [p for p in _files(root) if p.relative_to(root).as_posix() not in skip]
    for p in [*written, *sorted(d for d in root.rglob("*") if d.is_dir()), root]:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories (Linux renameat2); False where the OS cannot."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    fn = getattr(libc, "renameat2", None)
    if fn is None:
        return False
    at_fdcwd = -100
    return fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) == 0  # type: ignore[no-any-return]


@contextlib.contextmanager
def update_lock(out: Path) -> Iterator[None]:
    """Hold the bundle's update lock, or fail at once with CORA-BND-007.

    An advisory `flock` on a file beside the bundle: the kernel drops it when its holder exits, so a
    killed update never leaves a stale lock behind.
    """
    out = out.absolute()
    path = out.with_name(f".{out.name}.lock")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:  # a read-only or unwritable target: nothing was touched
        raise CoraError("CORA-BND-006", f"cannot write bundle {out}: {e.strerror or e}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            raise CoraError("CORA-BND-007", f"another update of {out} is running (pid {holder})") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def write_bundle(
    out: Path, fill: Callable[[Path], dict[str, Any]], linked: tuple[Path, dict[str, Any]] | None = None
) -> None:
    """Create the bundle `out`: `fill(tmp)` writes the indexes into `tmp` and returns the manifest,
    to which the checksums of those files are added; then `tmp` replaces `out` whole. `linked`
    (a previous bundle and its checksums) spares hashing the files `fill` hard-linked from it. The
    checksums just computed are recorded as verified, so the next open hashes nothing."""
    out = out.absolute()
    if out.exists() and not (out / mf.MANIFEST).is_file() and (not out.is_dir() or any(out.iterdir())):
        raise CoraError("CORA-BND-006", f"{out} exists and is not a bundle; refusing to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    _ignore_cora_dir(out)
    remove_leftovers(out)  # of updates killed before they cleaned up (the caller holds the lock)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        manifest = fill(tmp)
        checksums = {p.relative_to(tmp).as_posix(): _checksum(p, p.relative_to(tmp).as_posix(), linked)
                     for p in _files(tmp)}  # fmt: skip
        manifest["artifacts"] = {rel: c for rel, (c, _) in checksums.items()}
        body = mf.pack(manifest)
        (tmp / mf.MANIFEST).write_bytes(body)
        (tmp / mf.MANIFEST_SUM).write_text(f"{hashlib.sha256(body).hexdigest()}  {mf.MANIFEST}\n")
        _fsync_tree(tmp, {rel for rel, (_, reused) in checksums.items() if reused})
        records = {
            rel: [*verified.identity(tmp / rel), a["sha256"]] for rel, a in manifest["artifacts"].items()
        }
        _swap_in(tmp, out)
        verified.save(_cache_file(out), records)  # the rename kept each file's inode and mtime
    except OSError as e:
        raise CoraError("CORA-BND-006", f"cannot write bundle {out}: {e.strerror or e}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _checksum(p: Path, rel: str, linked: tuple[Path, dict[str, Any]] | None) -> tuple[dict[str, Any], bool]:
    """The file's checksum, and whether it is the previous bundle's file (a hard link to it)."""
    if linked is not None and rel in linked[1]:
        with contextlib.suppress(OSError):
            if os.path.samestat(p.stat(), (linked[0] / rel).stat()):
                return dict(linked[1][rel]), True
    return {"sha256": sha256_file(p), "size": p.stat().st_size}, False


def _swap_in(tmp: Path, out: Path) -> None:
    old = out.with_name(out.name + ".old")
    if out.is_dir() and _exchange(tmp, out):
        return  # tmp now holds the previous bundle and is removed by the caller
    if out.is_dir():
        shutil.rmtree(old, ignore_errors=True)
        os.rename(out, old)
    os.rename(tmp, out)
    shutil.rmtree(old, ignore_errors=True)


def _ignore_cora_dir(out: Path) -> None:
    """The default `.cora/` holds build output only: a `.gitignore` of `*` keeps it out of commits."""
    if out.parent.name == ".cora":
        ignore = out.parent / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n")


def resolve(path: Path) -> Path:
    """The bundle at `path`, or its `.old` twin if an interrupted swap left only that one; a file is
    a bundle archive, extracted once into a read-only cache directory (`archive.extracted`)."""
    if path.is_file():
        from cora_ci.bundle.archive import extracted

        return extracted(path)
    if (path / mf.MANIFEST).is_file():
        return path
    old = path.with_name(path.name + ".old")
    if not path.exists() and (old / mf.MANIFEST).is_file():
        return old
    raise CoraError("CORA-BND-001", f"no bundle at {path}")


def read_manifest(root: Path) -> dict[str, Any]:
    """The manifest after its checksum and format checks."""
    try:
        body = (root / mf.MANIFEST).read_bytes()
        expected = (root / mf.MANIFEST_SUM).read_text().split()[0]
    except (OSError, IndexError):
        raise CoraError("CORA-BND-003", f"{root}: manifest or its checksum file missing") from None
    if hashlib.sha256(body).hexdigest() != expected:
        raise CoraError("CORA-BND-003", f"{root / mf.MANIFEST}: checksum mismatch (altered or truncated)")
    try:
        m = mf.unpack(body)
        fmt, version = m["format"], mf.parse_version(m["format_version"])
    except Exception as e:
        raise CoraError("CORA-BND-004", f"{root / mf.MANIFEST}: {type(e).__name__}: {e}") from None
    if fmt != mf.FORMAT:
        raise CoraError("CORA-BND-004", f"{root}: not a cora-ci bundle (format {fmt!r})")
    if version[0] > mf.FORMAT_VERSION[0]:
        have = ".".join(map(str, mf.FORMAT_VERSION))
        raise CoraError(
            "CORA-BND-002", f"{root}: bundle format {m['format_version']} is newer than this cora-ci's {have}"
        )
    return m


def _cache_file(root: Path) -> Path:
    return verified.record_file(hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:32])


def artifact_problem(
    root: Path, rel: str, want: dict[str, Any], known: list[Any]
) -> tuple[str | None, list[Any]]:
    """What is wrong with one file the manifest lists (None if nothing), and its verified record
    `[size, mtime_ns, inode, sha256]`. A `known` record equal to the file's current one skips hashing."""
    p = root / rel
    if not p.is_file():
        return f"{rel}: missing", []
    ident = verified.identity(p)
    if ident[0] != want["size"]:
        return f"{rel}: {ident[0]} bytes, expected {want['size']}", []
    record = [*ident, want["sha256"]]
    if known != record and sha256_file(p) != want["sha256"]:
        return f"{rel}: checksum mismatch", []
    return None, record


def verify_artifacts(root: Path, manifest: dict[str, Any], use_cache: bool = True) -> dict[str, list[Any]]:
    """Check every listed file's size and sha256, and that no file is missing; raise CORA-BND-003.
    Returns each file's verified record (see `artifact_problem`)."""
    cache_path = _cache_file(root)
    cache = verified.load(cache_path) if use_cache else {}
    fresh: dict[str, Any] = {}
    for rel, want in sorted(manifest.get("artifacts", {}).items()):
        problem, fresh[rel] = artifact_problem(root, rel, want, cache.get(rel) or [])
        if problem:
            raise CoraError("CORA-BND-003", f"{root}: {problem}")
    if use_cache and fresh != cache:
        verified.save(cache_path, fresh)
    return fresh


def read_artifact(root: Path, rel: str, want: dict[str, Any], known: list[Any]) -> bytes:
    """The bytes of a listed file read after opening the bundle (a shard): hashed again unless the
    file is still the one verified at open (`known`), since the bundle may have been swapped since."""
    try:
        with (root / rel).open("rb") as f:
            st = os.fstat(f.fileno())
            data = f.read()
    except OSError as e:
        raise CoraError("CORA-BND-003", f"{root / rel}: cannot read: {e.strerror or e}") from None
    if known[:3] != [st.st_size, st.st_mtime_ns, st.st_ino] and (
        len(data) != want["size"] or hashlib.sha256(data).hexdigest() != want["sha256"]
    ):
        raise CoraError("CORA-BND-003", f"{root / rel}: checksum mismatch (altered, or bundle replaced)")
    return data
