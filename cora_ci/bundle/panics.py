"""Rust code reading bundle data (tantivy): a panic is a coded error, and its dump stays off the terminal.

pyo3 raises a Rust panic as `PanicException`, a BaseException (an `except Exception` lets it
through), after Rust's panic hook has printed `thread '...' panicked at ...` on fd 2, and a whole
backtrace under RUST_BACKTRACE=1. Python cannot replace that hook, so while such a call runs fd 2
points at a private file: its content is dropped if a call panicked and copied to the real stderr
otherwise (another thread's output is delayed, never lost). The redirection is counted, so bundles
searched side by side in threads still run in parallel; it costs a few system calls, ~5 µs a call
(bench/query_speed.py).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
from collections.abc import Iterator


def is_panic(e: BaseException) -> bool:
    """A Rust panic raised by pyo3 (each extension has its own `pyo3_runtime.PanicException`)."""
    return type(e).__name__ == "PanicException"


class _Quiet:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0
        self.saved = -1  # the real fd 2 while redirected
        self.panicked = False
        self.sink = -1  # an anonymous file, made on first use

    def enter(self) -> bool:
        """Point fd 2 at the sink (the first caller in); False where fd 2 cannot be moved."""
        with self.lock:
            if self.users == 0:
                try:
                    if self.sink < 0:
                        self.sink = _anonymous_file()
                    with contextlib.suppress(Exception):
                        sys.stderr.flush()
                    saved = os.dup(2)
                except OSError:  # no fd 2, no file descriptors left: left as it is
                    return False
                try:
                    os.dup2(self.sink, 2)
                except OSError:
                    os.close(saved)
                    return False
                self.saved = saved
            self.users += 1
            return True

    def leave(self, panicked: bool) -> None:
        """Put fd 2 back (the last caller out), passing on what others wrote unless a call panicked."""
        with self.lock:
            self.users -= 1
            self.panicked |= panicked
            if self.users:
                return
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os.dup2(self.saved, 2)
            os.close(self.saved)
            fd = self.sink
            size = os.fstat(fd).st_size
            if size and not self.panicked:
                data = os.pread(fd, size, 0)
                with contextlib.suppress(OSError):
                    while data:
                        data = data[os.write(2, data) :]
            if size:
                os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            self.panicked = False


def _anonymous_file() -> int:
    """A file in memory where the OS has them, else an unlinked temporary file."""
    if hasattr(os, "memfd_create"):
        with contextlib.suppress(OSError):
            return os.memfd_create("cora-stderr", os.MFD_CLOEXEC)
    with tempfile.TemporaryFile() as f:
        return os.dup(f.fileno())


_QUIET = _Quiet()


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Run a call into Rust with Rust's panic message kept off stderr; the PanicException itself
    propagates (the caller turns it into its CoraError)."""
    if not _QUIET.enter():
        yield
        return
    panicked = False
    try:
        yield
    except BaseException as e:
        panicked = is_panic(e)
        raise
    finally:
        _QUIET.leave(panicked)
