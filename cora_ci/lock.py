"""A bundle's update lock: one writer at a time, taken before anything is read.

An advisory `flock` on a file beside the bundle (`.<name>.lock`): the kernel drops it when its
holder exits, so a killed update never leaves a stale lock behind. This module imports nothing
heavy: a git hook takes the lock in the process git waits for and hands it to the background
process that updates the bundle (`adopt`), so nobody else can slip in between the two.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from cora_ci.errors import CoraError

_POLL = 0.05  # s between two attempts of a waiting `acquire`
_ADOPTED: dict[Path, int] = {}  # lock file -> a descriptor handed to this process, lock held


def lock_path(out: Path) -> Path:
    """The lock file of the bundle `out`: beside it, its directory's real path (the same file
    whichever way a process names the repository)."""
    out = out.absolute()
    return out.parent.resolve() / f".{out.name}.lock"


def ignore_cora_dir(out: Path) -> None:
    """The default `.cora/` holds build output only: a `.gitignore` of `*` keeps it out of commits
    (and out of `git status`, from its lock file on)."""
    if out.parent.name == ".cora":
        ignore = out.parent / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n")


def acquire(out: Path, wait: float = 0.0) -> int:
    """A descriptor holding the lock of `out`, waiting up to `wait` seconds for its holder;
    CORA-BND-007 naming the holder's pid when it is still held then."""
    path = lock_path(out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        ignore_cora_dir(out)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:  # a read-only or unwritable target: nothing was touched
        raise CoraError("CORA-BND-006", f"cannot write bundle {out}: {e.strerror or e}") from None
    deadline = time.monotonic() + wait
    while not _locked(fd):
        if time.monotonic() >= deadline:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise CoraError("CORA-BND-007", f"another update of {out.absolute()} is running (pid {holder})")
        time.sleep(_POLL)
    _mark(fd)
    return fd


def _locked(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _mark(fd: int) -> None:
    """The holder's pid in the lock file, for the error of whoever waits."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)


def adopt(out: Path, fd: int) -> None:
    """Let this process's next `update_lock(out)` use `fd`, a descriptor of the lock that holds it
    (inherited from the hook that started this process)."""
    _mark(fd)
    _ADOPTED[lock_path(out)] = fd


@contextlib.contextmanager
def update_lock(out: Path, wait: float = 0.0) -> Iterator[None]:
    """Hold the update lock of `out` (the adopted one, if any), waiting up to `wait` seconds for
    another holder, then CORA-BND-007."""
    fd = _ADOPTED.pop(lock_path(out), None)
    if fd is None:
        fd = acquire(out, wait)
    try:
        yield
    finally:
        os.close(fd)
