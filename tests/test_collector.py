"""The MCP server's garbage collection (`serve/collector.py`), with the interpreter's real collector:
nothing is collected in the middle of an answer, what a call leaves is collected right after it,
and cycles that outlive calls are collected once the server is idle or, under a load that never
pauses, every `every` calls."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Callable, Iterator

import pytest

from cora_ci.serve.collector import Collector


class Node:
    """An object that can be part of a reference cycle (and be weakly referenced)."""

    other: Node | None = None


def cycle() -> tuple[Node, weakref.ref[Node]]:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return a, weakref.ref(a)


@pytest.fixture
def started() -> Iterator[Callable[..., Collector]]:
    def start(idle: float, every: int = 1000) -> Collector:
        c = Collector(idle, every)
        c.start()
        return c

    try:
        yield start
    finally:
        gc.enable()


def test_a_call_leaves_no_cycle_behind_and_nothing_is_collected_in_between(started) -> None:  # type: ignore[no-untyped-def]
    c = started(idle=3600.0)
    assert not gc.isenabled()
    with c.call():
        a, made_in_call = cycle()
        del a
        for _ in range(20_000):  # allocations that would set the interpreter's collector off
            [[] for _ in range(3)]
        assert made_in_call() is not None
    assert made_in_call() is None
    b, made_outside = cycle()
    del b
    for _ in range(20_000):
        [[] for _ in range(3)]
    assert made_outside() is not None  # no automatic collection
    with c.call():
        pass
    assert made_outside() is None and c.full == 0


def test_cycles_that_outlive_calls_are_collected_once_the_server_is_idle(started) -> None:  # type: ignore[no-untyped-def]
    c = started(idle=0.05)
    a, old = cycle()
    for _ in range(3):  # it survives young collections: it grows old
        with c.call():
            pass
    del a
    with c.call():
        pass
    deadline = time.monotonic() + 10
    while (old() is not None or c.full == 0) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert old() is None and c.full >= 1


def test_a_load_that_never_pauses_still_collects_the_whole_heap_every_so_many_calls(started) -> None:  # type: ignore[no-untyped-def]
    c = started(idle=3600.0, every=5)
    a, old = cycle()
    for _ in range(3):
        with c.call():
            pass
    del a
    for _ in range(2):
        with c.call():
            pass
    assert c.full == 1 and old() is None
    for _ in range(4):
        with c.call():
            pass
    assert c.full == 1
    with c.call():
        pass
    assert c.full == 2


def test_a_failing_call_is_collected_after_as_well(started) -> None:  # type: ignore[no-untyped-def]
    c = started(idle=3600.0)
    with pytest.raises(ValueError), c.call():
        a, made = cycle()
        del a
        raise ValueError("the tool failed")
    assert made() is None
