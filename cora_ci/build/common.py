"""What the build's stages share: a manifest row and the progress callback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Row = dict[str, Any]  # one file's row of the manifest's file table

Progress = Callable[[str, int, int], None]  # stage, done, total


def quiet(stage: str, done: int, total: int) -> None:
    pass
