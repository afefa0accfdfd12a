"""`cora-ci related`: the chunks related to one symbol, each as its own result with the relation.

Unlike a query's answer, related chunks are never merged: two callers side by side in a file are
two relations. Each is cut to its signature unless `full` is asked for, since the list is a map of
where to read next (`show` gives any of them whole).
"""

from __future__ import annotations

from dataclasses import dataclass

from cora_ci.rebind.view import signature
from cora_ci.render.answer import Result
from cora_ci.render.source import BundleChunks, unknown_anchor
from cora_ci.retrieval.catalog import catalog
from cora_ci.retrieval.related import related
from cora_ci.retrieval.types import Hit


@dataclass
class Related:
    anchor: str  # the symbol asked about
    results: list[Result]


def related_results(source: BundleChunks, anchor: str, k: int, full: bool = False) -> Related:
    """The `k` chunks most related to the symbol `anchor` (CORA-QRY-002 if the bundle has none)."""
    chunk = source.by_anchor(anchor)
    name = (
        chunk.symbols[chunk.anchors.index(anchor)] if chunk is not None and anchor in chunk.anchors else None
    )
    if chunk is None:  # a member of a type kept whole: the references of the chunk holding it
        found = source.inner(anchor)
        if found is None:
            raise unknown_anchor(source, anchor)
        chunk = found[0]
    out: list[Result] = []
    for link in related(catalog(source.bundle), chunk.id, k, name):
        c = source.chunk(link.chunk_id)
        if c is None:
            continue
        bound = source.bind(c)
        view = bound.view if full else signature(bound.view, c.symbol, c.lang)
        hit = Hit(c.id, link.score, "graph", relation=link.relation)
        out.append(Result(view, c, hit, view is not bound.view, bound.stale, None, [c.id]))
    return Related(anchor, out)
