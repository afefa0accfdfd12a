"""Progress for people: a live line on a terminal, a line every few seconds in CI logs."""

from __future__ import annotations

import sys
import time
from typing import TextIO

_UNITS = {"chunk": "files", "embed": "chunks", "write": "bundle"}
_LOG_EVERY = 10.0  # seconds between lines when the output is a log, not a terminal


class Reporter:
    def __init__(self, stream: TextIO = sys.stderr, interactive: bool | None = None) -> None:
        self.stream = stream
        self.interactive = stream.isatty() if interactive is None else interactive
        self._last = 0.0
        self._stage = ""

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        finished = done >= total
        if self.interactive:
            if finished or now - self._last > 0.1 or stage != self._stage:
                width = 30
                fill = int(width * done / total) if total else width
                bar = "#" * fill + "-" * (width - fill)
                end = "\n" if finished else ""
                self.stream.write(f"\r{stage:<6} [{bar}] {done}/{total} {_UNITS.get(stage, '')}\x1b[K{end}")
                self.stream.flush()
                self._last = now
        elif stage != self._stage or finished or now - self._last >= _LOG_EVERY:
            if stage != "write" or finished:
                self.stream.write(f"{stage}: {done}/{total} {_UNITS.get(stage, '')}\n")
                self.stream.flush()
            self._last = now
        self._stage = stage
