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
from collections.abc import Collection, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, NamedTuple

from cora_ci import config as config_mod
from cora_ci.boosts import FILE_NAME as BOOSTS_FILE
from cora_ci.boosts import parse_boosts
from cora_ci.config import Config
from cora_ci.errors import CoraError
from cora_ci.files.names import from_bytes, fs_name, to_bytes
from cora_ci.files.text import Unread
from cora_ci.files.walk import filter_names, git_toplevel, walk_files

KINDS = ("rev", "staged", "worktree", "dir")
_SYMLINK, GITLINK = "120000", "160000"
_DRAIN = 1 << 20  # bytes per read when skipping a blob too large to index


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
    withheld: tuple[str, ...] = ()  # the kinds of secret found in the names of the files left out
    screened: bool = True  # whether the paths passed the secret screen (`screen`)

    def read(self, entries: list[Entry]) -> Iterator[tuple[Entry, bytes]]:
        """The bytes of each entry, in order; from git's object store when the ids are git objects.

        Submodules and files over `max_file_bytes` are not read: they come as `Unread`, whose
        length is the file's size, so memory stays bounded whatever the repository holds."""
        limit = self.config.max_file_bytes
        files = [e for e in entries if e.mode != GITLINK]
        if self.kind in ("rev", "staged"):
            stream: Iterator[bytes] = _cat_blobs(self.root, [e.blob for e in files], limit)
        else:
            stream = (self._from_disk(e, limit) for e in files)
        for e in entries:
            if e.mode == GITLINK:
                yield e, Unread("CORA-CHK-009", f"submodule at commit {e.blob} skipped")
            else:
                yield e, next(stream)

    def _from_disk(self, e: Entry, limit: int) -> bytes:
        """A working tree's or directory's file; one not on disk is read from git when the index
        has it unchanged (a sparse checkout leaves it out), else skipped with a diagnostic (it was
        removed while the build ran)."""
        data = _read_file(self.root, e.path, limit)
        if data is not None:
            return data
        if self.kind == "worktree" and e.blob and _has_blob(self.root, e.blob):
            return next(_cat_blobs(self.root, [e.blob], limit))
        return Unread("CORA-CHK-011", "not in the working tree (removed while indexing)")

    def sizes(self) -> list[int]:
        """Each entry's size in bytes, contents unread: git's object sizes for a commit or the staging
        area, the sizes on disk otherwise (what a shard's split weighs)."""
        if self.kind in ("rev", "staged"):
            found = iter(_blob_sizes(self.root, [e.blob for e in self.entries if e.mode != GITLINK]))
            return [0 if e.mode == GITLINK else next(found) for e in self.entries]
        return [0 if e.mode == GITLINK else _disk_size(self.root / fs_name(e.path)) for e in self.entries]

    def read_text_file(self, path: str) -> bytes | None:
        """One small file (a config file) as this snapshot has it, or None if absent."""
        if self.kind == "dir":
            return (self.root / path).read_bytes() if (self.root / path).is_file() else None
        found = [e for e in self.entries if e.path == path]
        return next(self.read(found))[1] if found else None


def run_git(root: Path, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
    try:
        out = subprocess.run(["git", "-C", str(root), *args], input=stdin, capture_output=True, check=False)
    except OSError as e:
        raise CoraError("CORA-IO-003", f"cannot run git: {e.strerror}") from None
    if check and out.returncode != 0:
        msg = out.stderr.decode(errors="replace").strip().splitlines()
        raise CoraError("CORA-IO-003", f"git {args[0]} failed: {msg[-1] if msg else out.returncode}")
    return out.stdout


def _name(raw: bytes) -> str:
    return from_bytes(raw)


def _oversized(size: int, limit: int) -> Unread:
    return Unread("CORA-CHK-004", f"{size} bytes > max_file_bytes {limit}", size)


def _read_file(root: Path, path: str, limit: int) -> bytes | None:
    """A file of the working tree or a directory, its size checked before it is read (None when
    it is not there). A path that is (or runs through) a symlink is refused: its bytes may live
    outside the repository."""
    full = root / fs_name(path)
    if not _inside(root, full):
        raise CoraError("CORA-IO-002", f"cannot read {path}: it runs through a symlink out of the repository")
    try:
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as err:
        raise CoraError("CORA-IO-002", f"cannot read {path}: {err.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        return _oversized(size, limit) if size > limit else f.read()


def _has_blob(root: Path, blob: str) -> bool:
    return run_git(root, "cat-file", "-t", blob, check=False).strip() == b"blob"


def _inside(root: Path, full: Path) -> bool:
    return full.resolve().is_relative_to(root.resolve())


def _cat_blobs(root: Path, blobs: list[str], limit: int = 1 << 62) -> Iterator[bytes]:
    """Stream blob contents from one `git cat-file --batch` process; a blob over `limit` bytes is
    drained in pieces and comes as `Unread`, never whole in memory."""
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
            size = int(header[2])
            if size > limit:
                _drain(proc.stdout, size, blob)
                data: bytes = _oversized(size, limit)
            else:
                data = proc.stdout.read(size)
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
    out = run_git(
        root, "cat-file", "--batch-check=%(objectsize)", "--buffer", stdin="\n".join(blobs).encode() + b"\n"
    )
    sizes = out.decode().split()
    if len(sizes) != len(blobs) or not all(s.isdigit() for s in sizes):
        raise CoraError("CORA-IO-003", "git cat-file: some blobs are missing")
    return [int(s) for s in sizes]


def _disk_size(path: Path) -> int:
    try:
        return path.lstat().st_size  # a symlink is not followed (and not indexed)
    except OSError:
        return 0  # vanished since it was listed: reading it fails later, naming it


def _drain(stream: IO[bytes], size: int, blob: str) -> None:
    """Skip `size` bytes of a pipe in bounded pieces."""
    left = size
    while left:
        piece = stream.read(min(left, _DRAIN))
        if not piece:
            raise CoraError("CORA-IO-003", f"git object {blob} ended early")
        left -= len(piece)


def _head(root: Path) -> tuple[str, str, int] | None:
    """HEAD's commit, tree and time, as `commit_of` gives them, in one git process; None before
    the first commit."""
    out = run_git(root, "log", "-1", "--format=%H %T %ct", check=False).split()
    return (out[0].decode(), out[1].decode(), int(out[2])) if len(out) == 3 else None


def _records(out: bytes) -> Iterator[tuple[list[str], str]]:
    """`<fields...>\t<path>` records of a `-z` listing: the fields and the path."""
    for rec in out.split(b"\0"):
        if rec:
            meta, _, name = rec.partition(b"\t")
            yield meta.decode().split(), _name(name)


def ls_tree(root: Path, commit: str, paths: tuple[str, ...] = ()) -> list[Entry]:
    """Files and submodules of a commit (those under `paths` when given). Symlinks are not source:
    their target may be outside the repository, and the file they name inside it is indexed under
    its own path."""
    listing = run_git(root, "ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths)
    return [Entry(path, blob, mode) for (mode, kind, blob), path in _records(listing)
            if kind in ("blob", "commit") and mode != _SYMLINK]  # fmt: skip


def _ls_index(root: Path) -> list[Entry]:
    """Stage-0 entries of the index (a file in a merge conflict has none: it is not indexable yet)."""
    return [
        Entry(path, blob, mode)
        for (mode, blob, stage), path in _records(run_git(root, "ls-files", "-s", "-z"))
        if stage == "0" and mode != _SYMLINK
    ]


def _worktree(root: Path) -> tuple[list[Entry], bool]:
    """Index entries, with ids of modified and untracked files rehashed by git itself."""
    index = {e.path: e for e in _ls_index(root)}
    changed = {_name(n) for n in run_git(root, "diff-files", "-z", "--name-only").split(b"\0") if n}
    untracked = {
        _name(n) for n in run_git(root, "ls-files", "-z", "--others", "--exclude-standard").split(b"\0") if n
    }
    staged = bool(run_git(root, "diff-index", "--cached", "--name-only", "HEAD", check=False).strip())
    todo = sorted(p for p in changed | untracked if _regular(root, p))
    for p in changed - set(todo):
        if index.get(p, Entry(p, "", "")).mode != GITLINK:  # a submodule's new commit is not a file
            index.pop(p, None)  # deleted in the working tree, or now a symlink
    by_git = [p for p in todo if "\n" not in p]  # `--stdin-paths` reads lines
    paths = b"\n".join(map(to_bytes, by_git))
    ids = run_git(root, "hash-object", "--stdin-paths", stdin=paths) if by_git else b""
    found = dict(zip(by_git, ids.decode().split(), strict=True))
    for p in todo:
        blob = found.get(p) or _hash_file(root / fs_name(p))
        mode = "100755" if os.access(root / fs_name(p), os.X_OK) else "100644"
        index[p] = Entry(p, blob, mode)
    return [index[p] for p in sorted(index)], bool(changed or untracked or staged)


def _regular(root: Path, name: str) -> bool:
    """A regular file, not a symlink (nor below one): only those are read from disk."""
    full = root / fs_name(name)
    return full.is_file() and not full.is_symlink() and _inside(root, full)


def _hash_file(path: Path) -> str:
    """Git's blob id of a file, hashed in pieces (a 1 GB file is never in memory)."""
    with open(path, "rb") as f:
        h = hashlib.sha1(b"blob %d\0" % os.fstat(f.fileno()).st_size, usedforsecurity=False)
        while piece := f.read(_DRAIN):
            h.update(piece)
    return h.hexdigest()


def _hash_files(root: Path, names: list[str]) -> list[Entry]:
    out = []
    for name in names:
        if not _regular(root, name):
            continue  # a symlink, or vanished
        try:
            out.append(Entry(name, _hash_file(root / fs_name(name)), "100644"))
        except OSError:
            continue  # vanished or unreadable: not part of this snapshot
    return out


def _raw(root: Path, kind: str | None, rev: str | None) -> Snapshot:
    """All entries of the source, before the config's include/exclude."""
    bare = _bare(root)
    top = git_toplevel(root) or bare
    if top is not None and top == bare:  # a bare repository (a CI cache, a mirror): commits only
        if kind not in (None, "rev"):
            raise CoraError("CORA-IO-003", f"{root} is a bare repository: it has commits only",
                            "index a commit of it (--rev, default HEAD)")  # fmt: skip
        kind = "rev"
    if top is None:
        if kind not in (None, "dir", "worktree") or rev:
            hint = "index it without --rev or --staged"
            raise CoraError("CORA-IO-003", f"{root} is not a git repository", hint)
        names = tuple(Entry(n, "", "100644") for n in walk_files(root))  # ids once the config has filtered
        return Snapshot(root, "dir", None, None, False, None, names, Config())
    found = _head(top)
    head, head_time = (found[0], found[2]) if found is not None else (None, None)
    kind = kind or ("rev" if rev or head else "worktree")
    if kind == "rev":
        if not rev and not head:
            raise CoraError("CORA-IO-003", "the repository has no commits yet", "use --worktree or --staged")
        if rev:  # HEAD's is `found` already
            found = commit_of(top, rev)
        if found is None:
            raise CoraError("CORA-IO-003", f"revision not found: {rev}")
        commit, tree, ctime = found
        return Snapshot(top, "rev", commit, tree, False, ctime, tuple(ls_tree(top, commit)), Config())
    if kind == "staged":
        dirty = not head or bool(run_git(top, "diff-index", "--cached", "--name-only", "HEAD").strip())
        return Snapshot(top, kind, head, kind, dirty, head_time, tuple(_ls_index(top)), Config())
    entries, dirty = _worktree(top)
    return Snapshot(top, kind, head, kind, dirty, head_time, tuple(entries), Config())


def commit_of(top: Path, rev: str | None) -> tuple[str, str, int] | None:
    """The id, tree and time of the commit `rev` names (default HEAD), or None when it names none.
    `rev` is verified as a revision first, so nothing in it is ever read as an option (`--all`)."""
    found = run_git(top, "rev-parse", "--verify", "--quiet", f"{rev or 'HEAD'}^{{commit}}", check=False)
    commit = found.decode().strip()
    if not commit:
        return None
    tree, ctime = run_git(top, "show", "-s", "--format=%T %ct", commit).split()
    return commit, tree.decode(), int(ctime)


def _bare(root: Path) -> Path | None:
    """`root` itself when it is a bare repository."""
    out = run_git(root, "rev-parse", "--is-bare-repository", check=False).strip()
    return root if out == b"true" else None


def snapshot(repo: Path, kind: str | None = None, rev: str | None = None, out_dir: Path | None = None,
             config_file: Path | None = None, *, screen_now: bool = True) -> Snapshot:  # fmt: skip
    """The files of `repo` to index, with the config that selects them.

    `kind` defaults to `rev` (HEAD) in a git repository with commits, `worktree` in one without and
    `dir` outside git. The config is the source's own (a commit's `.cora.toml` or `pyproject.toml`),
    unless `config_file` is given. `out_dir` (the bundle) is never indexed. Without `screen_now`
    the paths are not screened for secrets yet (`screen`): an update that finds the previous
    bundle's very files needs no screen, nor the ~270 rules' import.
    """
    if not repo.is_dir():
        raise CoraError("CORA-IO-001", f"no such directory: {repo}")
    raw = _raw(repo.resolve(), kind, rev)
    if config_file is not None:
        cfg = config_mod.load_file(config_file)
    else:
        cfg = config_mod.discover_in(raw.read_text_file, f"{raw.root.name}@{raw.tree or raw.kind}")
    keep = selected([e.path for e in raw.entries], cfg, raw.root, out_dir)
    entries = [e for e in raw.entries if e.path in keep]
    if raw.kind == "dir":
        entries = _hash_files(raw.root, [e.path for e in entries])
    need_files(raw, entries)
    snap = replace(raw, entries=tuple(entries), config=cfg, boosts=boosts_of(raw.read_text_file(BOOSTS_FILE)),
                   screened=False)  # fmt: skip
    return screen(snap) if screen_now else snap


def selected(names: list[str], cfg: Config, root: Path, out_dir: Path | None) -> set[str]:
    """The `names` the config selects, less those inside the bundle directory `out_dir`."""
    keep = set(filter_names(names, cfg))
    if out_dir is not None and out_dir.resolve().is_relative_to(root):
        prefix = out_dir.resolve().relative_to(root).as_posix() + "/"
        keep = {n for n in keep if not n.startswith(prefix)}
    return keep


def screen(snap: Snapshot, known: Collection[str] = ()) -> Snapshot:
    """`snap` without the files whose path holds a secret (a path is in the manifest, the BM25
    index and every result: the file stays out), with the kinds of secret found; done once. The
    `known` paths, a previous bundle's (screened when it was built, as its chunks' texts were),
    are not screened again: a commit that adds no path imports and runs none of the rules."""
    if snap.screened:
        return snap
    named: dict[str, str] = {}
    new = [e.path for e in snap.entries if e.path not in known]
    if snap.config.secrets == "drop" and new:
        from cora_ci.chunking.secrets import secret_names

        named = secret_names(new)
    entries = [e for e in snap.entries if e.path not in named]
    need_files(snap, entries)
    return replace(snap, entries=tuple(entries), withheld=tuple(named.values()), screened=True)


def need_files(snap: Snapshot, entries: list[Entry]) -> None:
    if not entries:
        why = "every file is excluded by the config" if snap.entries else "it holds no file"
        raise CoraError("CORA-IO-004", f"nothing to index in {snap.root}: {why}")


def boosts_of(data: bytes | None) -> tuple[str, ...]:
    """Directives of a `.cora-boosts` file, checked now (a bad line fails the build, naming it)."""
    if data is None:
        return ()
    return tuple(str(b) for b in parse_boosts(data.decode(errors="replace"), BOOSTS_FILE))
