"""The build's progress line: only on a terminal, only after 2 s, with elapsed time and an estimate."""

from __future__ import annotations

import io

import pytest

from cora_ci.render import progress
from cora_ci.render.progress import Reporter


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_nothing_for_the_first_seconds_then_elapsed_and_estimate() -> None:
    out, clock = io.StringIO(), Clock()
    r = Reporter(out, interactive=True, clock=clock)
    r("chunk", 0, 100)
    clock.now += 1.0
    r("chunk", 50, 100)
    assert out.getvalue() == ""  # a short build shows nothing
    clock.now += 1.5
    r("chunk", 60, 100)
    line = out.getvalue()
    assert "60/100 files" in line and "2 s" in line and "s left" in line and not line.endswith("\n")
    clock.now += 1.0
    r("chunk", 100, 100)
    r("embed", 0, 5000)
    clock.now += 1.0
    r("embed", 2500, 5000)
    text = out.getvalue()
    assert "100/100 files" in text and text.count("\n") == 1  # a finished stage keeps its line
    assert "2,500/5,000 chunks  4 s, ~1 s left" in text


@pytest.mark.parametrize("ci", ["true", ""])
def test_silent_off_a_terminal_and_in_ci(monkeypatch: pytest.MonkeyPatch, ci: str) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("CI", ci)
    clock = Clock()
    for stream in (io.StringIO(), Tty()):
        r = Reporter(stream, clock=clock)
        clock.now += progress.DELAY + 1
        r("chunk", 1, 2)
        r("chunk", 2, 2)
        shown = stream.getvalue() != ""
        assert shown == (isinstance(stream, Tty) and not ci)
