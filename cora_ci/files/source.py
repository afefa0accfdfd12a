"""What a bundle is built from: a git commit, the staging area, the working tree, or a plain directory.

A `Snapshot` lists files with an identity each (the git blob id, or the same SHA-1 computed over the
content outside git), so change detection compares ids instead of hashing files in Python, and reads
their bytes in one `git cat-file --batch` stream: a build from `--rev` sees exactly the commit, never
the working tree.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from cora_ci import config as config_mod
from cora_ci.boosts import FILE_NAME as BOOSTS_FILE
from cora_ci.boosts import parse_boosts
from cora_ci.config import Config
from cora_ci.errors import CoraError
from cora_ci.files.walk import filter_names, git_toplevel, walk_files

KINDS = ("rev", "staged", "worktree", "dir")
_SYMLINK, _GITLINK = "120000", "160000"


class Entry(NamedTuple):
    path: str  # repository-relative, posix
    blob: str  # git blob id (hex SHA-1), or the same hash of the content outside git
    mode: str  # git file mode, "100644" outside git


@dataclass(frozen=True)
class Snapshot:
    """A consistent view of the files of one source, with the facts a manifest records about it."""

    root: Path
    kind: str  # one of KINDS
    commit: str | None  # the commit (rev), or HEAD for staged/worktree; None outside git or before a commit
    tree: str | None  # tree id for rev, "staged" / "worktree", None for a plain directory
    dirty: bool  # the working tree differs from `commit`
    time: int | None  # the commit's time (seconds since the epoch)
    entries: tuple[Entry, ...]
    config: Config
    boosts: tuple[str, ...] = ()  # the directives of the source's `.cora-boosts`

    def read(self, entries: list[Entry]) -> Iterator[tuple[Entry, bytes]]:
        """The bytes of each entry, in order; from git's object store when the ids are git objects."""
        if self.kind in ("rev", "staged"):
            yield from zip(entries, _cat_blobs(self.root, [e.blob for e in entries]), strict=True)
            return
        for e in entries:
            try:
                yield e, (self.root / e.path).read_bytes()
            except OSError as err:
                raise CoraError("CORA-IO-002", f"cannot read {e.path}: {err.strerror}") from None

    def sizes(self) -> list[int]:
        """Each entry's size in bytes, contents unread: git's object sizes for a commit or the staging
        area, the sizes on disk otherwise (what a shard's split weighs)."""
        if self.kind in ("rev", "staged"):
            return _blob_sizes(self.root, [e.blob for e in self.entries])
        return [_disk_size(self.root / e.path) for e in self.entries]

    def read_text_file(self, path: str) -> bytes | None:
        """One small file (a config file) as this snapshot has it, or None if absent."""
        if self.kind == "dir":
            return (self.root / path).read_bytes() if (self.root / path).is_file() else None
        found = [e for e in self.entries if e.path == path]
        return next(self.read(found))[1] if found else None


def _git(root: Path, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
    try:
        out = subprocess.run(["git", "-C", str(root), *args], input=stdin, capture_output=True, check=False)
    except OSError as e:
        raise CoraError("CORA-IO-003", f"cannot run git: {e.strerror}") from None
    if check and out.returncode != 0:
        msg = out.stderr.decode(errors="replace").strip().splitlines()
        raise CoraError("CORA-IO-003", f"git {args[0]} failed: {msg[-1] if msg else out.returncode}")
    return out.stdout


def _name(raw: bytes) -> str:
    return raw.decode("utf-8", errors="surrogateescape")


def blob_id(data: bytes) -> str:
    """Git's blob id of some content, so files outside git get comparable identities."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _cat_blobs(root: Path, blobs: list[str]) -> Iterator[bytes]:
    """Stream blob contents from one `git cat-file --batch` process."""
    if not blobs:
        return
    proc = subprocess.Popen(
        ["git", "-C", str(root), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        # Feed ids from a thread-free loop: write all ids first would deadlock on a full pipe, so
        # write one, read one.
        for blob in blobs:
            proc.stdin.write(blob.encode() + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if len(header) != 3 or header[1] != b"blob":
                raise CoraError("CORA-IO-003", f"git object {blob} is missing or not a blob")
            data = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)  # the newline after each object
            yield data
    finally:
        proc.stdin.close()
        proc.stdout.close()
        proc.wait()


def _blob_sizes(root: Path, blobs: list[str]) -> list[int]:
    """Sizes of blobs from one `git cat-file --batch-check` call."""
    if not blobs:
        return []
    out = _git(
        root, "cat-file", "--batch-check=%(objectsize)", "--buffer", stdin="\n".join(blobs).encode() + b"\n"
    )
    sizes = out.decode().split()
    if len(sizes) != len(blobs) or not all(s.isdigit() for s in sizes):
        raise CoraError("CORA-IO-003", "git cat-file: some blobs are missing")
    return [int(s) for s in sizes]


def _disk_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # vanished since it was listed: reading it fails later, naming it


def _head(root: Path) -> tuple[str | None, int | None]:
    out = _git(root, "log", "-1", "--format=%H %ct", check=False).split()
    return (out[0].decode(), int(out[1])) if len(out) == 2 else (None, None)


def _records(out: bytes) -> Iterator[tuple[list[str], str]]:
    """`<fields...>\t<path>` records of a `-z` listing: the fields and the path."""
    for rec in out.split(b"\0"):
        if rec:
            meta, _, name = rec.partition(b"\t")
            yield meta.decode().split(), _name(name)


def _ls_tree(root: Path, commit: str) -> list[Entry]:
    """Regular files of a commit (symlinks and submodules are not source to index)."""
    return [
        Entry(path, blob, mode)
        for (mode, kind, blob), path in _records(_git(root, "ls-tree", "-r", "-z", "--full-tree", commit))
        if kind == "blob" and mode not in (_SYMLINK, _GITLINK)
    ]


def _ls_index(root: Path) -> list[Entry]:
    """Stage-0 entries of the index (a file in a merge conflict has none: it is not indexable yet)."""
    return [
        Entry(path, blob, mode)
        for (mode, blob, stage), path in _records(_git(root, "ls-files", "-s", "-z"))
        if stage == "0" and mode not in (_SYMLINK, _GITLINK)
    ]


def _worktree(root: Path) -> tuple[list[Entry], bool]:
    """Index entries, with ids of modified and untracked files rehashed by git itself."""
    index = {e.path: e for e in _ls_index(root)}
    changed = {_name(n) for n in _git(root, "diff-files", "-z", "--name-only").split(b"\0") if n}
    untracked = {
        _name(n) for n in _git(root, "ls-files", "-z", "--others", "--exclude-standard").split(b"\0") if n
    }
    staged = bool(_git(root, "diff-index", "--cached", "--name-only", "HEAD", check=False).strip())
    todo = sorted(p for p in changed | untracked if (root / p).is_file() and not (root / p).is_symlink())
    for p in changed - set(todo):
        index.pop(p, None)  # deleted in the working tree
    if todo:
        ids = _git(root, "hash-object", "--stdin-paths", stdin="\n".join(todo).encode())
        for p, blob in zip(todo, ids.decode().split(), strict=True):
            mode = "100755" if os.access(root / p, os.X_OK) else "100644"
            index[p] = Entry(p, blob, mode)
    return [index[p] for p in sorted(index)], bool(changed or untracked or staged)


def _hash_files(root: Path, names: list[str]) -> list[Entry]:
    out = []
    for name in names:
        try:
            data = (root / name).read_bytes()
        except OSError:
            continue  # vanished or unreadable: not part of this snapshot
        out.append(Entry(name, blob_id(data), "100644"))
    return out


def _raw(root: Path, kind: str | None, rev: str | None) -> Snapshot:
    """All entries of the source, before the config's include/exclude."""
    top = git_toplevel(root)
    if top is None:
        if kind not in (None, "dir", "worktree") or rev:
            hint = "index it without --rev or --staged"
            raise CoraError("CORA-IO-003", f"{root} is not a git repository", hint)
        names = tuple(Entry(n, "", "100644") for n in walk_files(root))  # ids once the config has filtered
        return Snapshot(root, "dir", None, None, False, None, names, Config())
    head, head_time = _head(top)
    kind = kind or ("rev" if rev or head else "worktree")
    if kind == "rev":
        if not rev and not head:
            raise CoraError("CORA-IO-003", "the repository has no commits yet", "use --worktree or --staged")
        found = _git(top, "rev-parse", "--verify", "--quiet", f"{rev or 'HEAD'}^{{commit}}", check=False)
        if not found.strip():
            raise CoraError("CORA-IO-003", f"revision not found: {rev}")
        commit = found.decode().strip()
        tree = _git(top, "rev-parse", f"{commit}^{{tree}}").decode().strip()
        ctime = int(_git(top, "show", "-s", "--format=%ct", commit).strip())
        return Snapshot(top, "rev", commit, tree, False, ctime, tuple(_ls_tree(top, commit)), Config())
    if kind == "staged":
        dirty = not head or bool(_git(top, "diff-index", "--cached", "--name-only", "HEAD").strip())
        return Snapshot(top, kind, head, kind, dirty, head_time, tuple(_ls_index(top)), Config())
    entries, dirty = _worktree(top)
    return Snapshot(top, kind, head, kind, dirty, head_time, tuple(entries), Config())


def snapshot(repo: Path, kind: str | None = None, rev: str | None = None, out_dir: Path | None = None,
             config_file: Path | None = None) -> Snapshot:  # fmt: skip
    """The files of `repo` to index, with the config that selects them.

    `kind` defaults to `rev` (HEAD) in a git repository with commits, `worktree` in one without and
    `dir` outside git. The config is the source's own (a commit's `.cora.toml` or `pyproject.toml`),
    unless `config_file` is given. `out_dir` (the bundle) is never indexed.
    """
    if not repo.is_dir():
        raise CoraError("CORA-IO-001", f"no such directory: {repo}")
    raw = _raw(repo.resolve(), kind, rev)
    if config_file is not None:
        cfg = config_mod.load_file(config_file)
    else:
        cfg = config_mod.discover_in(raw.read_text_file, f"{raw.root.name}@{raw.tree or raw.kind}")
    keep = set(filter_names([e.path for e in raw.entries], cfg))
    if out_dir is not None and out_dir.resolve().is_relative_to(raw.root):
        prefix = out_dir.resolve().relative_to(raw.root).as_posix() + "/"
        keep = {n for n in keep if not n.startswith(prefix)}
    entries = [e for e in raw.entries if e.path in keep]
    if raw.kind == "dir":
        entries = _hash_files(raw.root, [e.path for e in entries])
    return replace(raw, entries=tuple(entries), config=cfg, boosts=_boosts(raw.read_text_file(BOOSTS_FILE)))


def _boosts(data: bytes | None) -> tuple[str, ...]:
    """Directives of a `.cora-boosts` file, checked now (a bad line fails the build, naming it)."""
    if data is None:
        return ()
    return tuple(str(b) for b in parse_boosts(data.decode(errors="replace"), BOOSTS_FILE))
