"""`cora-ci diff --impact`: for each changed symbol, the code in NEW that may feel it.

A symbol still in NEW (modified, renamed, moved) is referenced by what its chunks' in-edges come
from in NEW's reference graph, ranked by personalized PageRank from the symbol (as `related`
ranks its callers). A removed or renamed symbol's old name can still be used in NEW, and those
uses are likely broken: the chunks whose references hold that name (the files' name hashes say
which files to read).
"""

from __future__ import annotations

from dataclasses import dataclass

from cora_ci.bundle import Bundle
from cora_ci.diff import Changed
from cora_ci.render.source import BundleChunks
from cora_ci.retrieval.catalog import Catalog, catalog
from cora_ci.retrieval.expand import graph_scores
from cora_ci.retrieval.related import _family, _neighbours, without_import_lines


@dataclass(frozen=True)
class Impact:
    anchor: str  # the affected chunk's anchor (its file's path for module-level code)
    path: str
    start_line: int
    end_line: int
    how: str  # "references it" | "still uses the old name"


def impact(new: Bundle, change: Changed, k: int = 5) -> list[Impact]:
    """Up to `k` chunks of `new` that reference the changed symbol, or still use its old name."""
    cat = catalog(new)
    out: list[Impact] = []
    if change.new is not None and change.change != "added":
        out += _referencing(new, cat, change.new.anchor, change.new.name, k)
    if change.old is not None and change.change in ("removed", "renamed"):
        seen = {i.anchor for i in out}
        out += [i for i in _still_named(cat, change.old.name, k) if i.anchor not in seen]
    return out[:k]


def _referencing(new: Bundle, cat: Catalog, anchor: str, name: str, k: int) -> list[Impact]:
    """Chunks whose references reach the symbol's chunk and name it (small siblings share a
    chunk, so a reference to the chunk alone may be to another of them); an import line only
    when nothing else of its file references it."""
    chunk = BundleChunks(new, None).by_anchor(anchor)
    me = cat.meta(chunk.id) if chunk is not None else None
    if me is None:
        return []
    family = _family(cat, me)
    _, ins = _neighbours(cat, family)
    named = without_import_lines(cat, [c for c in ins if name in _refs(cat, c)])
    mass = graph_scores(cat.graph, dict.fromkeys(family, 1.0), 1.0, incoming=cat.incoming())
    ranked = sorted(named, key=lambda c: (-mass.get(c, 0.0), -ins[c], c))[:k]
    return [_impact(cat, c, "references it") for c in ranked]


def _refs(cat: Catalog, cid: int) -> list[str]:
    """The names chunk `cid` uses."""
    m = cat.meta(cid)
    links = cat.links(m.path) if m is not None else None
    return links.refs.get(cid, []) if links is not None else []


def _still_named(cat: Catalog, name: str, k: int) -> list[Impact]:
    found: list[int] = []
    for path in cat.users.paths_with([name]):
        links = cat.links(path)
        if links is None:
            continue
        found += sorted(cid for cid, names in links.refs.items() if name in names)
        if len(found) >= k:
            break
    return [_impact(cat, c, "still uses the old name") for c in found[:k]]


def _impact(cat: Catalog, cid: int, how: str) -> Impact:
    m = cat.meta(cid)
    assert m is not None
    return Impact(m.anchor or m.path, m.path, m.start_line, m.end_line, how)
