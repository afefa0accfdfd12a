"""Garbage collection between answers, not in them.

CPython's cyclic collector runs wherever allocations cross its thresholds: in a warm server, in
the middle of a search. Its full collections walk every object the process holds (the bundles'
tables, the caches a session fills), ~100 ms at 50k chunks, six times in 120 searches
(bench/RESULTS.md, 2026-11-29): the slowest answers were the collector's. A server knows when it
is between answers, so it collects then: automatic collection off, the young generations after
each call (~1 ms: what the call left), the whole heap once the server has been idle for a moment
or, under a load that never pauses, every `every` calls, so cycles that outlive a call (an old
bundle and its indexes, replaced under the server) are still reclaimed.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Collector:
    """Runs the cyclic collector around a server's calls (`call`), after `start`."""

    def __init__(self, idle: float = 1.0, every: int = 1000) -> None:
        self.idle = idle  # seconds without a call before the whole heap is collected
        self.every = every  # calls without such a pause before it is collected anyway
        self.full = 0  # full collections made
        self._cond = threading.Condition()
        self._busy = 0  # calls running
        self._since = 0  # calls since the last full collection
        self._last = time.monotonic()

    def start(self) -> None:
        """Take collection over from the interpreter, and collect in idle moments from now on."""
        gc.collect()
        gc.disable()
        threading.Thread(target=self._idle, name="cora-ci-gc", daemon=True).start()

    @contextmanager
    def call(self) -> Iterator[None]:
        """One call: afterwards, what it left in the young generations is collected (and the whole
        heap when `every` calls came without a pause)."""
        with self._cond:
            self._busy += 1
        try:
            yield
        finally:
            with self._cond:
                self._busy -= 1
                self._since += 1
                self._last = time.monotonic()
                full = self._since >= self.every
                self._cond.notify_all()
            if full:
                self._collect()
            else:
                gc.collect(1)

    def _collect(self) -> None:
        gc.collect()
        with self._cond:
            self._since = 0
            self.full += 1

    def _idle(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._since > 0)
                while self._busy or (left := self._last + self.idle - time.monotonic()) > 0:
                    self._cond.wait(self.idle if self._busy else left)
            self._collect()
