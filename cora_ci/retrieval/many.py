"""`search_many`: one ranking over several bundles, a repository and the bundles of its dependencies.

Separate searches do not compare: each bundle's fusion normalises its own BM25 and vector scores,
so every bundle's best hit scores about 1 whatever it matched. Here the raw scores of all bundles
are normalised together (BM25 over the union of the BM25 candidates; cosine similarity over the
union of the vector candidates, comparable because the query vector is one model's), then each
bundle's features apply as in `search`, reference expansion runs from the best hits overall, and
it follows references across bundles: a name a top hit uses that its own bundle does not define
but another bundle does (an import of a library's class) links to that definition. The choice of
joint normalisation over merging separate rankings by score or by rank was measured
(bench/many_bundles.py, bench/RESULTS.md).

A bundle whose model is not the query's is searched lexically (its `Part.embedder` is None); its
fused scores are scaled to the same range, so it is not ranked down for lacking a vector side.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from cora_ci.bundle import Bundle
from cora_ci.retrieval.aliases import add_aliased
from cora_ci.retrieval.catalog import Catalog, catalog
from cora_ci.retrieval.evidence import Pointed, in_clue_order, pointed
from cora_ci.retrieval.features import compile_filters
from cora_ci.retrieval.fusion import fuse
from cora_ci.retrieval.nesting import together
from cora_ci.retrieval.params import PARAMS, Params, decay
from cora_ci.retrieval.query import Query, analyse, query_vector, rarity
from cora_ci.retrieval.scoring import (
    Cand,
    add_pointed,
    add_reexporting,
    blank,
    demotion,
    expand_graph,
    explained,
    lift_nested,
    score_features,
    to_related,
)
from cora_ci.retrieval.search import bm25, pool_size, search
from cora_ci.retrieval.select import diverse, graph_places, pinned_ids
from cora_ci.retrieval.types import Boost, Filters, Hit

Merge = Literal["joint", "score", "rank"]  # the measured alternatives; "joint" is the product's
_SHIFT = 64  # a candidate's key: its bundle's index above its 64-bit chunk id
_MAX_DEFS = 3  # a name defined in more places than this in another bundle is too common to link
_MAX_NAMES = 64  # names of one hit looked up in the other bundles


@dataclass(frozen=True)
class Part:
    """One bundle of the search: its embedder (None: lexical only) and its boosts."""

    bundle: Bundle
    embedder: Any = None
    boosts: tuple[Boost, ...] = field(default=())


_POOL: list[ThreadPoolExecutor] = []


def _pool() -> ThreadPoolExecutor:
    if not _POOL:
        _POOL.append(ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1)), thread_name_prefix="cora-many"))
    return _POOL[0]


def _key(origin: int, cid: int) -> int:
    return (origin << _SHIFT) | cid


def search_many(parts: list[Part], query: str, *, k: int = 10, filters: Filters = Filters(),  # noqa: B008
                expand: bool = True, params: Params = PARAMS, merge: Merge = "joint",
                depth: int | None = None) -> list[Hit]:  # fmt: skip
    """The `k` best chunks of all `parts` for `query`, best first, each hit's `origin` its part;
    candidates gathered for `depth` hits (default `k`), as `search` does."""
    if len(parts) == 1:
        return search(parts[0].bundle, query, k=k, embedder=parts[0].embedder, filters=filters,
                      boosts=parts[0].boosts, expand=expand, params=params, depth=depth)  # fmt: skip
    if merge != "joint":
        return _merged(parts, query, k, filters, expand, params, merge)
    q = analyse(query)
    accept = compile_filters(filters)
    cats = [catalog(p.bundle) for p in parts]
    cands = _candidates(parts, cats, q, depth or k, filters, params, accept)
    lifted: dict[int, int] = {}
    told_by: dict[int, Pointed] = {}
    if params.features:
        for o, (p, cat) in enumerate(zip(parts, cats, strict=True)):
            told = told_by[o] = pointed(cat, query, q.title) if params.evidence > 0 else Pointed({}, {})
            add_pointed(cat, q, cands, told, accept, partial(_key, o), o)
            add_reexporting(cat, q, cands, accept, params.definition, partial(_key, o), o)
            add_aliased(cat, q, cands, accept, params.definition, partial(_key, o), o)
            mine = {key: c for key, c in cands.items() if c.origin == o}
            score_features(cat, q, mine, filters, p.boosts, params, told)
            to_related(cat, q, mine, filters, params, accept, partial(_key, o), o)
            lifted.update(lift_nested(cat, q, mine, params, accept, partial(_key, o), o))
            cands.update(mine)
    if expand and params.seeds > 0 and params.graph > 0 and cands:
        _expand_all(parts, cats, q, cands, filters, params, accept)
        for o, told in told_by.items():  # the graph's lift kept below each bundle's clues' order
            if told.at:
                in_clue_order({key: c for key, c in cands.items() if c.origin == o}, told)
    pinned = [
        _key(o, cid)
        for o, (p, cat) in enumerate(zip(parts, cats, strict=True))
        for cid in pinned_ids(cat, p.boosts)
    ]
    places = graph_places(min(k, depth or k), params) if expand and params.graph > 0 else frozenset()
    picked = diverse(cands, k, pinned, decay(q, params), places, params.floor, params.evidence_file)
    picked = together(picked, cands, lifted, lambda c: _key(c.origin, c.meta.id)) if lifted else picked
    top = picked[0].score if picked else 1.0
    hits: list[Hit] = []
    for key in pinned:
        o, cid = key >> _SHIFT, key & ((1 << _SHIFT) - 1)
        c = cands.get(key)
        ex = c.explain if c is not None else blank(q)
        ex["boost"] = "pinned"
        hits.append(Hit(cid, top, "boost" if c is None else c.source, True, ex, origin=o))
    hits.extend(Hit(c.meta.id, c.score, c.source, False, c.explain, origin=c.origin) for c in picked)
    return hits


def _candidates(parts: list[Part], cats: list[Catalog], q: Query, k: int, filters: Filters, params: Params,
                accept: Any) -> dict[int, Cand]:  # fmt: skip
    """BM25 and vector candidates of every bundle, fused with scores normalised over all of them."""
    weight = params.fusion.vector_share(q.identifier is not None, q.report)
    queried: dict[int, Any] = {}  # one query vector per embedder, its words weighed over its bundles
    for p in parts:
        if params.vectors and p.embedder is not None and weight > 0 and id(p.embedder) not in queried:
            indexes = [o.bundle.lexical for o in parts if o.embedder is p.embedder]
            queried[id(p.embedder)] = query_vector(p.embedder, q, rarity(indexes, params.rarity))

    def one(o: int) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        p, cat = parts[o], cats[o]
        # each bundle's share of the candidates: twice an even split of one search's pool (the
        # union is what the features then rank), never fewer than 3k
        pool = max(
            3 * k, -(-2 * pool_size(len(cat), k, filters, params, q.identifier is not None) // len(parts))
        )
        lex = bm25(p.bundle, q, pool) if params.lexical else []
        qv = queried.get(id(p.embedder))
        vec = p.bundle.vectors.search(qv, pool) if qv is not None and p.bundle.vectors is not None else []
        for cid, _ in lex + vec:  # metadata read here, in parallel (it decodes file blobs)
            cat.meta(cid)
        return [(_key(o, c), s) for c, s in lex], [(_key(o, c), s) for c, s in vec]

    # tantivy and numpy release the GIL while they search: the bundles are searched side by side
    got = list(_pool().map(one, range(len(parts))))
    lexical = [x for lex, _ in got for x in lex]
    vector = [x for _, vec in got for x in vec]
    with_vectors = {o for o, (_, vec) in enumerate(got) if vec}
    lexical.sort(key=lambda t: (-t[1], t[0]))
    vector.sort(key=lambda t: (-t[1], t[0]))
    fused = fuse(lexical, vector, params.fusion, q.identifier is not None, q.report)
    lexical_share = 1.0 - weight if vector and lexical else 1.0
    out: dict[int, Cand] = {}
    for key, f in fused.items():
        o, cid = key >> _SHIFT, key & ((1 << _SHIFT) - 1)
        m = cats[o].meta(cid)
        if m is None or not accept(m):
            continue
        score = f.score / lexical_share if o not in with_vectors and lexical_share > 0 else f.score
        out[key] = Cand(m, score, "search", explained(q, f), o)
    return out


def _expand_all(parts: list[Part], cats: list[Catalog], q: Query, cands: dict[int, Cand], filters: Filters,
                params: Params, accept: Any) -> None:  # fmt: skip
    """PageRank in each bundle from the best hits overall that it holds (its share of the graph
    bonus as its share of their scores), then references from them into the other bundles."""
    ranked = sorted(cands.values(), key=lambda c: (-c.score, c.origin, c.meta.id))[: params.seeds]
    seeds = [c for c in ranked if c.score > 0]
    total = sum(c.score for c in seeds)
    if not seeds or total <= 0:
        return
    for o, cat in enumerate(cats):
        mine = {c.meta.id: c.score for c in seeds if c.origin == o}
        if mine:
            expand_graph(cat, q, cands, filters, params, accept, mine, sum(mine.values()) / total,
                    partial(_key, o), o)  # fmt: skip
    _across(parts, cats, q, cands, seeds, filters, params, accept)


def _across(parts: list[Part], cats: list[Catalog], q: Query, cands: dict[int, Cand], seeds: list[Cand],
            filters: Filters, params: Params, accept: Any) -> None:  # fmt: skip
    """Definitions in other bundles of the names the seeds use and their own bundle lacks."""
    top = seeds[0].score
    gain: dict[int, float] = {}
    for s in seeds:
        names = _external(cats[s.origin], s.meta.id)
        for o in range(len(parts)):
            if o == s.origin or not names:
                continue
            for cid, count in _defined(cats[o], names):
                share = s.score / top / count
                gain[_key(o, cid)] = max(gain.get(_key(o, cid), 0.0), share)
    for key, share in gain.items():
        o, cid = key >> _SHIFT, key & ((1 << _SHIFT) - 1)
        c = cands.get(key)
        if c is None:
            meta = cats[o].meta(cid)
            if share < params.graph_min or meta is None or not accept(meta):
                continue
            c = cands[key] = Cand(meta, 0.0, "graph", blank(q), o)
            low = demotion(cats[o], q, meta, filters, params)
            if low is not None:
                share *= low[1]
                c.explain["demoted"] = low[0]
        extra = params.graph * share
        c.score += extra
        c.explain["graph"] = round((c.explain.get("graph") or 0.0) + extra, 6)


def _external(cat: Catalog, cid: int) -> list[str]:
    """The names chunk `cid` uses that no file of its own bundle defines."""
    m = cat.meta(cid)
    links = cat.links(m.path) if m is not None else None
    if links is None:
        return []
    own = cat.definers
    names = [n for n in links.refs.get(cid, []) if len(n) > 2]
    return [n for n in names if not own.paths_with([n])][:_MAX_NAMES]


def _defined(cat: Catalog, names: Iterable[str]) -> list[tuple[int, int]]:
    """(chunk id, how many places define its name) for each definition in `cat`'s bundle of
    `names` defined in at most `_MAX_DEFS` places."""
    wanted = set(names)
    found: dict[str, list[int]] = {}
    for defs in cat.defining(wanted, _MAX_DEFS * len(wanted)).values():
        for n, ids in defs.items():
            found.setdefault(n, []).extend(ids)
    return [(cid, len(ids)) for ids in found.values() if len(ids) <= _MAX_DEFS for cid in ids]


def _merged(parts: list[Part], query: str, k: int, filters: Filters, expand: bool, params: Params,
            merge: Merge) -> list[Hit]:  # fmt: skip
    """Separate searches merged by score or by rank (the alternatives the benchmark compares)."""
    ranked: list[tuple[float, int, Hit]] = []
    for o, p in enumerate(parts):
        got = search(p.bundle, query, k=k, embedder=p.embedder, filters=filters, boosts=p.boosts,
                     expand=expand, params=params)  # fmt: skip
        for rank, h in enumerate(got, 1):
            h.origin = o
            ranked.append((h.score if merge == "score" else 1.0 / (60 + rank), o, h))
    ranked.sort(key=lambda t: (-t[0], t[1]))
    return [h for *_, h in ranked[:k]]
