"""Progress for people at a terminal, and only when a build takes long enough to wonder about.

Most builds and every hook's update take a second or two: for them a progress line would only
flicker. So nothing shows for the first `DELAY` seconds; after that, one live line per stage with
what is done (files, then chunks), the elapsed time and an estimate of what is left, from the
stage's own rate so far. Logs are not people: when the output is not a terminal, or `CI` is set,
the reporter stays silent (the summary says what happened), as `-q` does.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

_UNITS = {"chunk": "files", "embed": "chunks", "write": "bundle"}
DELAY = 2.0  # seconds before the first line
_REDRAW = 0.1  # seconds between redraws of the live line


def _live(stream: TextIO) -> bool:
    return stream.isatty() and not os.environ.get("CI")


class Reporter:
    def __init__(self, stream: TextIO = sys.stderr, interactive: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.stream = stream
        self.interactive = _live(stream) if interactive is None else interactive
        self._clock = clock
        self._start = clock()
        self._last = 0.0
        self._stage = ""
        self._stage_start = self._start
        self._stage_done = 0  # what was done when the stage's clock started

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.interactive:
            return
        now = self._clock()
        if stage != self._stage:
            self._stage, self._stage_start, self._stage_done = stage, now, done
        finished = done >= total
        if now - self._start < DELAY or (not finished and now - self._last < _REDRAW):
            return
        width = 24
        fill = int(width * done / total) if total else width
        bar = "#" * fill + "-" * (width - fill)
        elapsed = now - self._start
        line = f"\r{stage:<6} [{bar}] {done:,}/{total:,} {_UNITS.get(stage, '')}  {elapsed:.0f} s"
        rate_done, rate_time = done - self._stage_done, now - self._stage_start
        if not finished and rate_done > 0 and rate_time > 0.5:
            line += f", ~{(total - done) * rate_time / rate_done:.0f} s left"
        self.stream.write(line + "\x1b[K" + ("\n" if finished else ""))
        self.stream.flush()
        self._last = now
