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
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cora_ci import verified
from cora_ci.bundle import manifest as mf
from cora_ci.bundle import schema
from cora_ci.bundle.leftovers import remove_leftovers
from cora_ci.errors import CoraError
from cora_ci.lock import ignore_cora_dir

_RENAME_EXCHANGE = 2
_CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_CHUNK):
            h.update(block)
    return h.hexdigest()


def _walk(root: Path) -> tuple[list[tuple[str, os.stat_result]], list[str]]:
    """Every regular file under `root` as (relative posix path, its stat), sorted, and every
    directory: one scandir pass and one stat a file (a bundle holds ~1,000 files at 128 buckets)."""
    files: list[tuple[str, os.stat_result]] = []
    dirs: list[str] = []
    todo = [("", os.fspath(root))]
    while todo:
        rel, path = todo.pop()
        dirs.append(path)
        with os.scandir(path) as entries:
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    todo.append((f"{rel}{e.name}/", e.path))
                elif e.is_file(follow_symlinks=False):
                    files.append((rel + e.name, e.stat(follow_symlinks=False)))
    return sorted(files, key=lambda f: f[0]), sorted(dirs, reverse=True)


def _fsync(paths: list[str]) -> None:
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories (Linux renameat2); False where the OS cannot. The C
    library is the process's own symbols (`ctypes.util.find_library` runs `ldconfig`, ~2 ms, and
    its import ~3 ms more: a reader never swaps, so ctypes is imported here)."""
    import ctypes

    try:
        fn = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    except (OSError, TypeError):  # no dlopen(NULL) (Windows)
        return False
    if fn is None:
        return False
    at_fdcwd = -100
    return fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) == 0  # type: ignore[no-any-return]


Linked = tuple[Path, dict[str, Any], dict[str, list[Any]]]  # a previous bundle, its checksums, its records


def write_bundle(out: Path, fill: Callable[[Path], dict[str, Any]], linked: Linked | None = None) -> int:
    """Create the bundle `out`: `fill(tmp)` writes the indexes into `tmp` and returns the manifest,
    to which the checksums of those files are added; then `tmp` replaces `out` whole. `linked`
    (a previous bundle, its checksums and the records of its files verified at open) spares
    hashing, and stat-ing again, the files `fill` hard-linked from it. The checksums just computed
    are recorded as verified and its content as checked (it is well formed by construction), so
    the next open hashes and walks nothing. Returns the bundle's size in bytes."""
    out = out.absolute()
    if out.exists() and not (out / mf.MANIFEST).is_file() and (not out.is_dir() or any(out.iterdir())):
        raise CoraError("CORA-BND-006", f"{out} exists and is not a bundle; refusing to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    ignore_cora_dir(out)
    remove_leftovers(out)  # of updates killed before they cleaned up (the caller holds the lock)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        manifest = fill(tmp)
        files, dirs = _walk(tmp)
        checksums = {rel: _checksum(tmp, st, rel, linked) for rel, st in files}
        manifest["artifacts"] = {rel: c for rel, (c, _) in checksums.items()}
        body = mf.pack(manifest)
        digest = hashlib.sha256(body).hexdigest()  # once: 16.6 MB at 30,000 files
        sums = f"{digest}  {mf.MANIFEST}\n".encode()
        (tmp / mf.MANIFEST).write_bytes(body)
        (tmp / mf.MANIFEST_SUM).write_bytes(sums)
        written = [rel for rel, (_, reused) in checksums.items() if not reused]
        _fsync([os.path.join(tmp, rel) for rel in [*written, mf.MANIFEST, mf.MANIFEST_SUM]] + dirs)
        records = {
            rel: [st.st_size, st.st_mtime_ns, st.st_ino, checksums[rel][0]["sha256"]] for rel, st in files
        }
        top = (tmp / mf.MANIFEST).stat()
        records[mf.MANIFEST] = [top.st_size, top.st_mtime_ns, top.st_ino, digest]
        _swap_in(tmp, out)
        verified.save(_cache_file(out), records)  # the rename kept each file's inode and mtime
        verified.note_written(digest)
    except OSError as e:
        raise CoraError("CORA-BND-006", f"cannot write bundle {out}: {e.strerror or e}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return sum(st.st_size for _, st in files) + len(body) + len(sums)


def _checksum(tmp: Path, st: os.stat_result, rel: str, linked: Linked | None) -> tuple[dict[str, Any], bool]:
    """The checksum of the file `rel` of `tmp`, and whether it is the previous bundle's file (a
    hard link to it: the inode, size and mtime its record holds)."""
    if linked is not None and rel in linked[1]:
        known = linked[2].get(rel)
        if known is not None and known[:3] == [st.st_size, st.st_mtime_ns, st.st_ino]:
            return dict(linked[1][rel]), True
        with contextlib.suppress(OSError):
            if os.path.samestat(st, (linked[0] / rel).stat()):
                return dict(linked[1][rel]), True
    return {"sha256": sha256_file(tmp / rel), "size": st.st_size}, False


def _swap_in(tmp: Path, out: Path) -> None:
    old = out.with_name(out.name + ".old")
    if out.is_dir() and _exchange(tmp, out):
        return  # tmp now holds the previous bundle and is removed by the caller
    if out.is_dir():
        shutil.rmtree(old, ignore_errors=True)
        os.rename(out, old)
    os.rename(tmp, out)
    shutil.rmtree(old, ignore_errors=True)


def resolve(path: Path) -> Path:
    """The bundle at `path`, or its `.old` twin if an interrupted swap left only that one; a file is
    a bundle archive, extracted once into a read-only cache directory (`archive.extracted`)."""
    if path.is_file():
        from cora_ci.bundle.archive import extracted

        return extracted(path)
    if (path / mf.MANIFEST).is_file():
        return path
    old = path.with_name(path.name + ".old") if path.name else None  # `.` and `/` have no twin
    if old is not None and not path.exists() and (old / mf.MANIFEST).is_file():
        return old
    raise CoraError("CORA-BND-001", f"no bundle at {path}")


def pin(root: Path) -> tuple[Path, int | None]:
    """A path to the bundle directory `root` as it is now, and the directory fd holding it: later
    reads through `/proc/self/fd/N` see this bundle even after an update swapped another one in
    (they find its files, or none once the old copy is removed: never the new bundle's). Where
    there is no such path, `root` itself and None; re-hashing then catches a swap (`read_artifact`)."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as e:
        raise CoraError("CORA-BND-003", f"{root}: cannot open: {e.strerror or e}") from None
    via = Path(f"/proc/self/fd/{fd}")
    if os.path.isdir(via) and os.path.samestat(os.stat(via), os.fstat(fd)):
        return via, fd
    os.close(fd)
    return root, None


def _read_bounded(path: Path, limit: int) -> tuple[bytes, list[int]]:
    """The bytes of a regular file (not a link) of at most `limit` bytes (OSError, ValueError), and
    its size, mtime and inode, the same before and after the read (else [], matching no record)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            raise ValueError(f"not a regular file of at most {limit} bytes")
        data = f.read(limit + 1)
        ident = [st.st_size, st.st_mtime_ns, st.st_ino]
        after = os.fstat(f.fileno())
        return data, ident if ident == [after.st_size, after.st_mtime_ns, after.st_ino] else []


def read_manifest(root: Path, base: Path | None = None) -> dict[str, Any]:
    """The manifest after its checksum, format and (for the current major format) shape checks.
    `base` is where to read the files (see `pin`); `root` names them."""
    return read_manifest_and_id(root, base)[0]


def read_manifest_and_id(
    root: Path, base: Path | None = None, known: list[Any] | None = None
) -> tuple[dict[str, Any], str, list[Any]]:
    """`read_manifest`, the manifest's sha256 (the identity of this version of the bundle) and its
    verified record `[size, mtime_ns, inode, sha256]`. A `known` record equal to the file's current
    one skips hashing it, as for every other file of the bundle (`artifact_problem`): the
    manifest is the largest file a reader reads whole (16.6 MB at 30,000 files)."""
    base = base or root
    name = root / mf.MANIFEST
    try:
        body, ident = _read_bounded(base / mf.MANIFEST, schema.MAX_MANIFEST_BYTES)
        expected = _read_bounded(base / mf.MANIFEST_SUM, 4096)[0].decode("ascii").split()[0]
    except (OSError, IndexError):
        raise CoraError("CORA-BND-003", f"{root}: manifest or its checksum file missing") from None
    except ValueError as e:
        raise CoraError("CORA-BND-003", f"{root}: manifest or its checksum file unreadable ({e})") from None
    record = [*ident, expected] if ident else []
    if (not record or known != record) and hashlib.sha256(body).hexdigest() != expected:
        raise CoraError("CORA-BND-003", f"{name}: checksum mismatch (altered or truncated)")
    try:
        m = mf.unpack(body)
        fmt, version = m.get("format"), mf.parse_version(m.get("format_version"))
    except Exception as e:
        raise CoraError("CORA-BND-004", f"{name}: {type(e).__name__}: {e}") from None
    if fmt != mf.FORMAT:
        raise CoraError("CORA-BND-004", f"{root}: not a cora-ci bundle (format {str(fmt)[:40]!r})")
    if version[0] > mf.FORMAT_VERSION[0]:
        have = ".".join(map(str, mf.FORMAT_VERSION))
        raise CoraError(
            "CORA-BND-002", f"{root}: bundle format {m['format_version']} is newer than this cora-ci's {have}"
        )
    if version[0] == mf.FORMAT_VERSION[0] and not verified.checked("manifest", expected):
        try:  # an older major is only ever rebuilt (`Bundle.shards`)
            mf.check(m)
        except (ValueError, TypeError, RecursionError) as e:
            raise CoraError("CORA-BND-004", f"{name}: {e}") from None
        verified.note_checked("manifest", expected)
    return m, expected, record


def _cache_file(root: Path) -> Path:
    return verified.record_file(hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:32])


def regular_file(base: Path, rel: str, dirs: set[str] | None = None) -> os.stat_result | None:
    """The stat of `base/rel` if it is a regular file reached through real directories only: a
    link anywhere below the bundle could make a reader (or tantivy) read outside it. `dirs` holds
    the directories found real so far in one pass over a bundle's files (~900 at 128 buckets, all
    in two directories): each is looked at once."""
    at = os.fspath(base)
    try:
        for part in rel.split("/")[:-1]:  # strings, not Paths: a bundle's ~900 files at every open
            at = os.path.join(at, part)
            if dirs is not None and at in dirs:
                continue
            if not stat.S_ISDIR(os.lstat(at).st_mode):
                return None
            if dirs is not None:
                dirs.add(at)
        st = os.lstat(os.path.join(os.fspath(base), rel))
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def artifact_problem(
    root: Path, rel: str, want: dict[str, Any], known: list[Any], base: Path | None = None,
    dirs: set[str] | None = None,
) -> tuple[str | None, list[Any]]:  # fmt: skip
    """What is wrong with one file the manifest lists (None if nothing), and its verified record
    `[size, mtime_ns, inode, sha256]`. A `known` record equal to the file's current one skips hashing.
    `base` is where to read the files (see `pin`), `root` the bundle's name; `dirs` as for
    `regular_file`."""
    st = regular_file(base or root, rel, dirs)
    if st is None:
        missing = not os.path.lexists((base or root) / rel)
        return (f"{rel}: missing" if missing else f"{rel}: not a regular file"), []
    ident = [st.st_size, st.st_mtime_ns, st.st_ino]
    if ident[0] != want["size"]:
        return f"{rel}: {ident[0]} bytes, expected {want['size']}", []
    record = [*ident, want["sha256"]]
    if known != record and sha256_file((base or root) / rel) != want["sha256"]:
        return f"{rel}: checksum mismatch", []
    return None, record


def verify_artifacts(
    root: Path, manifest: dict[str, Any], use_cache: bool = True, base: Path | None = None,
    cache: dict[str, Any] | None = None, manifest_record: list[Any] | None = None,
) -> dict[str, list[Any]]:  # fmt: skip
    """Check every listed file's size and sha256, and that no file is missing; raise CORA-BND-003.
    Returns each file's verified record (see `artifact_problem`). `cache` holds the records
    already loaded (`verified_records`); `manifest_record` is the manifest's own, saved with them."""
    cache_path = _cache_file(root)
    if cache is None:
        cache = verified.load(cache_path) if use_cache else {}
    fresh: dict[str, Any] = {}
    dirs: set[str] = set()
    for rel, want in sorted(manifest.get("artifacts", {}).items()):
        problem, fresh[rel] = artifact_problem(root, rel, want, cache.get(rel) or [], base, dirs)
        if problem:
            raise CoraError("CORA-BND-003", f"{root}: {problem}")
    kept = {**fresh, mf.MANIFEST: manifest_record} if manifest_record else fresh
    if use_cache and kept != cache:
        verified.save(cache_path, kept)
    return fresh


def verified_records(root: Path) -> dict[str, Any]:
    """The records of the bundle at `root`'s files verified on this machine (its manifest's too)."""
    return verified.load(_cache_file(root))


def read_artifact(
    root: Path, rel: str, want: dict[str, Any], known: list[Any], base: Path | None = None
) -> bytes:
    """The bytes of a listed file read after opening the bundle (a shard): hashed again unless the
    file is still the one verified at open (`known`), since the bundle may have been swapped since."""
    try:
        fd = os.open((base or root) / rel, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            data = f.read(want["size"] + 1)
    except OSError as e:
        raise CoraError("CORA-BND-003", f"{root / rel}: cannot read: {e.strerror or e}") from None
    if known[:3] != [st.st_size, st.st_mtime_ns, st.st_ino] and (
        len(data) != want["size"] or hashlib.sha256(data).hexdigest() != want["sha256"]
    ):
        raise CoraError("CORA-BND-003", f"{root / rel}: checksum mismatch (altered, or bundle replaced)")
    return data
