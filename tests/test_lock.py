"""The bundle's update lock: taken, waited for, handed to another process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cora_ci.errors import CoraError
from cora_ci.lock import acquire, adopt, lock_path, update_lock

HOLD = """
import os, sys, time
from pathlib import Path
from cora_ci.lock import acquire
fd = acquire(Path(sys.argv[1]))
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def holder(out: Path, seconds: float) -> subprocess.Popen[str]:
    p = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert p.stdout is not None and p.stdout.readline().strip() == "held"
    return p


def test_a_held_lock_is_waited_for_up_to_a_limit_then_named(tmp_path: Path) -> None:
    out = tmp_path / ".cora" / "index"
    p = holder(out, 0.6)
    t = time.monotonic()
    with pytest.raises(CoraError) as e:
        acquire(out, wait=0.1)
    assert e.value.code == "CORA-BND-007" and f"(pid {p.pid})" in e.value.message
    fd = acquire(out, wait=30)  # the holder ends within its 0.6 s
    assert 0.1 <= time.monotonic() - t < 30
    assert lock_path(out).read_text() == f"{os.getpid()}\n"
    assert (out.parent / ".gitignore").read_text() == "*\n"  # `.cora/` stays out of `git status`
    os.close(fd)
    p.wait()


def test_an_adopted_lock_is_the_one_update_lock_uses(tmp_path: Path) -> None:
    """A process handed the lock already held uses it; taking it again would wait for itself."""
    out = tmp_path / "bundle"
    fd = acquire(out)
    adopt(tmp_path / "." / "bundle", fd)  # another spelling of the same bundle
    with update_lock(out), pytest.raises(CoraError):
        acquire(out)
    with update_lock(out):  # released by the first, taken afresh
        pass
    with pytest.raises(OSError):
        os.fstat(fd)  # the adopted descriptor was closed with the lock
