"""Temporary directories that a killed update left beside its bundle.

An update builds `.<name>.tmp-XXXX` next to the bundle and swaps it in; SIGKILL or a power cut
between the swap and the clean-up leaves that directory (the new bundle, or the old one after an
exchange) behind. The next update, holding the update lock, removes them, so repeated crashes do
not fill the disk.
"""

from __future__ import annotations

import shutil
from pathlib import Path


def remove_leftovers(out: Path) -> None:
    """Remove `.<out.name>.tmp-*` beside `out`; call only while holding the bundle's update lock."""
    if not out.parent.is_dir():
        return
    for p in out.parent.glob(f".{out.name}.tmp-*"):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
