"""`cora-ci related`: the chunks related to one symbol, each as its own result with the relation.

Unlike a query's answer, related chunks are never merged: two callers side by side in a file are
two relations. Each is cut to its signature unless `full` is asked for, since the list is a map of
where to read next (`show` gives any of them whole).
"""

from __future__ import annotations

from dataclasses import dataclass

from cora_ci.chunking.model import Chunk
from cora_ci.rebind.view import View, mentions, signature
from cora_ci.render.anchors import meant, refused
from cora_ci.render.answer import Result
from cora_ci.render.siblings import naming_member, sibling
from cora_ci.render.source import BundleChunks
from cora_ci.retrieval.catalog import catalog
from cora_ci.retrieval.related import related
from cora_ci.retrieval.types import Hit


@dataclass
class Related:
    anchor: str  # the symbol asked about
    results: list[Result]


def related_results(source: BundleChunks, anchor: str, k: int, full: bool = False) -> Related:
    """The `k` chunks most related to the symbol `anchor` (CORA-QRY-002 if the bundle has none;
    an anchor written otherwise is the one symbol it means, `render.anchors`)."""
    chunk = source.by_anchor(anchor)
    found = source.inner(anchor) if chunk is None else None
    if chunk is None and found is None:
        other = meant(source, anchor)
        if other is None or other == anchor:
            raise refused(source, anchor)
        return related_results(source, other, k, full)
    name = (
        chunk.symbols[chunk.anchors.index(anchor)] if chunk is not None and anchor in chunk.anchors else None
    )
    if chunk is None:  # a member of a type kept whole: the references of the chunk holding it
        assert found is not None  # else refused above
        chunk = found[0]
    out: list[Result] = []
    mine = source.bind(chunk).view
    if name is not None and len(chunk.anchors) > 1:
        mine = sibling(mine, chunk, anchor)
    for link in related(catalog(source.bundle), chunk.id, k, name):
        c = source.chunk(link.chunk_id)
        if c is None:
            continue
        bound = source.bind(c)
        own, member = _member(c, bound.view, link.relation, name or chunk.symbol, mine)
        symbol = member[0] if member is not None else c.symbol
        view = own if full else signature(own, symbol, c.lang)
        hit = Hit(c.id, link.score, "graph", relation=link.relation)
        out.append(Result(view, c, hit, view is not own, bound.stale, None, [c.id], member))
    return Related(anchor, out)


def _member(
    c: Chunk, view: View, relation: str, name: str, mine: View
) -> tuple[View, tuple[str, str] | None]:
    """Of small siblings sharing chunk `c`, the one the relation is about, its own lines: a caller
    or a page the one naming `name`, a callee the one the symbol's own lines (`mine`) name (a
    starlette trial: every middleware's first callee was `AppType`, the first of `types.py`'s
    aliases, for the `ASGIApp` beside it). The chunk whole when none or several are (named after the
    first it names)."""
    if len(c.symbols) < 2 or len(c.anchors) != len(c.symbols):
        return view, None
    if relation != "callee":
        found = naming_member(view, c, name)
        return (view, None) if found is None else (found[2], (found[0], found[1]))
    texts = [t for n, t in mine.rendered() if n is not None]
    named = [(s, a) for s, a in zip(c.symbols, c.anchors, strict=True) if any(mentions(t, s) for t in texts)]
    if not named:
        return view, None
    if len(named) > 1:  # the chunk whole, named after the first it names (httpx's `send` uses `CLOSED`
        return view, named[0]  # and `OPENED` of `ClientState`: it was named after `UNOPENED`)
    return sibling(view, c, named[0][1]), named[0]
