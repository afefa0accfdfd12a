"""Temporary directories that a killed update left behind.

An update builds `.<name>.tmp-XXXX` next to the bundle and swaps it in; SIGKILL or a power cut
between the swap and the clean-up leaves that directory (the new bundle, or the old one after an
exchange) behind. Its BM25 scratch indexes and a reader's links sit in tmpfs (`SHADOW_DIR`),
named after their process, where a killed one's would hold memory until the machine restarts.
The next update, holding the update lock, removes both, so repeated crashes do not fill the disk
or the memory.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

# Where BM25 scratch indexes and a reader's links go: memory, where there is such a place.
SHADOW_DIR = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
SCRATCH = ".bm25-"  # a build's scratch index: `.bm25-<pid>-XXXX`
LINKS = "cora-bm25-"  # a reader's directory of links: `cora-bm25-<pid>-XXXX`
_OURS = re.compile(rf"(?:{re.escape(SCRATCH)}|{LINKS})(?:(\d+)-)?[\w-]+")
_STALE = 24 * 3600  # seconds after which a directory named without its process is a leftover


def remove_leftovers(out: Path) -> None:
    """Remove `.<out.name>.tmp-*` beside `out`, and the scratch of processes that died
    (`remove_dead_scratch`); call only while holding the bundle's update lock."""
    if SHADOW_DIR is not None:
        remove_dead_scratch(Path(SHADOW_DIR))
    if not out.parent.is_dir():
        return
    for p in out.parent.glob(f".{out.name}.tmp-*"):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)


def remove_dead_scratch(where: Path) -> None:
    """Remove the scratch indexes and link directories in `where` whose process is gone (older
    ones, named without it, after a day): a build or a reader killed while it held one."""
    try:
        entries = list(os.scandir(where))
    except OSError:
        return
    now = time.time()
    for e in entries:
        m = _OURS.fullmatch(e.name)
        if m is None or not e.is_dir(follow_symlinks=False):
            continue
        try:
            gone = not _alive(int(m.group(1))) if m.group(1) else now - e.stat().st_mtime > _STALE
        except OSError:
            continue
        if gone:
            shutil.rmtree(e.path, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Whether process `pid` exists (ours or another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True
