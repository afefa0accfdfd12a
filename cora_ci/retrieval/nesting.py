"""A function nested in a function is how the enclosing one works: a sentence that finds it asks
for the enclosing function.

A decorator's `wrapper`, a factory's closure, a helper defined inside a method get chunks and
anchors of their own (so they can be found and shown by name), and their code is often where a
question's words are: "a shortcut decorator for declaring and attaching a command to the group"
matches `Group.command.decorator` better than `Group.command`, whose own chunk shows the inner one
elided. The answer is the enclosing function: for a sentence, the outermost enclosing function
takes the nested one's score when that is higher, and once picked is followed by it, so the
answer merges the two and shows the enclosing function with the nested code in its place. A
nested function asked for by name (a definition bonus) is left alone, and so are members of
classes: a method is not its class's implementation detail.
"""

from __future__ import annotations

from collections.abc import Callable

from cora_ci.retrieval.catalog import Catalog, Meta
from cora_ci.retrieval.select import C

_FUNCTION = "method"  # the chunk kind of functions and methods


def enclosing_function(cat: Catalog, m: Meta) -> Meta | None:
    """The outermost function that `m` (a function) is nested in, through functions only."""
    if m.kind != _FUNCTION:
        return None
    top = m
    while top.parent is not None:
        parent = cat.meta(top.parent)
        if parent is None or parent.kind != _FUNCTION:
            break
        top = parent
    return None if top is m else top


def lift_enclosing(cat: Catalog, cands: dict[int, C], below: float, add: Callable[[Meta], C | None],
                   key: Callable[[int], int] = int) -> dict[int, int]:  # fmt: skip
    """Each nested function's outermost enclosing function takes its score when higher (`add`
    makes a candidate of one search missed, None when filters leave it out); the nested one is
    multiplied by `below` (< 1) so it follows. `key` maps a chunk id to its key in `cands`.
    Returns, for each enclosing function lifted, the key of the nested one that lifted it."""
    lifted: dict[int, int] = {}
    for c in sorted(cands.values(), key=lambda c: -c.score):
        if c.explain.get("definition"):
            continue
        top = enclosing_function(cat, c.meta)
        if top is not None and lend(cands, c, top, below, add, key, "nested"):
            lifted[key(top.id)] = key(c.meta.id)
    return lifted


def lend(cands: dict[int, C], c: C, to: Meta, below: float, add: Callable[[Meta], C | None],
         key: Callable[[int], int], why: str) -> bool:  # fmt: skip
    """Candidate `c` lends its score to chunk `to` (made a candidate by `add` if it is none; None:
    filters leave it out, and nothing changes) when that is higher, and follows it (`below`,
    demoted for `why`). True when `to` took `c`'s score."""
    outer = cands.get(key(to.id))
    if outer is None:
        outer = add(to)
        if outer is None:
            return False
        cands[key(to.id)] = outer
    took = outer.score < c.score
    if took:
        outer.explain["nested"] = round(c.score - outer.score, 6)
        outer.score = c.score
    c.score *= below
    c.explain["demoted"] = c.explain.get("demoted") or why
    return took


def together(picked: list[C], cands: dict[int, C], lifted: dict[int, int],
             key: Callable[[C], int]) -> list[C]:  # fmt: skip
    """The picks with each lifted enclosing function followed by the nested function that lifted
    it, at its score (they are one answer, which the answer shows whole: the nested code in its
    place), the last picks giving way so the count stays."""
    inner = {k: cands[i] for k, i in lifted.items() if i in cands}
    moved = {key(c) for c in picked if key(c) in lifted} & set(inner)
    follow = {key(inner[k]) for k in moved}
    out: list[C] = []
    for c in picked:
        if key(c) in follow:
            continue  # placed after its enclosing function
        out.append(c)
        if key(c) in moved:
            nested = inner[key(c)]
            nested.score, nested.explain["diversity"] = c.score, None
            out.append(nested)
    return out[: len(picked)]
