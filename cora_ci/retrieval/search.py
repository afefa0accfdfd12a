"""`search`: hybrid retrieval over one bundle, best first, every hit explained.

Steps, each visible in a hit's `explain` (2 and 3 are `scoring.py`'s, which a search over several
bundles, `many.py`, applies too):

1. candidates: BM25 top-`pool` and vector top-`pool`, fused (`fusion.py`), filtered;
2. query-aware features: an identifier query's definition first (`definition`; which member of
   a definition family takes it whole, and a file's header behind it: `definitions.py`), the code a bug
   report's traceback frames and paths point at (`evidence`), symbol and file names that match the
   query (`name`), for a sentence how much of the code refers to a chunk (`popular`),
   tests/examples/vendored/generated code, older copies of the code, prose, type stubs and private
   helpers lower unless asked for (`demoted`), for a sentence the code a well-found test checks
   (`tested`, `tested.py`), `dir:` boosts (`dir`), a share of the other strong
   chunks of the same file (`file`), so a file with several good chunks rises, and for a sentence
   a nested function's enclosing function just above it (`nested`, `nesting.py`);
3. reference expansion: personalized PageRank seeded by the best hits lifts candidates they are
   linked with and adds linked chunks that search missed (`graph`, source "graph"), damped for
   hubs (what all the code refers to, an error class, is near every seed);
4. diversity: the n-th chunk of one file is discounted by `diversity`**n, so a top-10 is not one
   file (`select.py`), and by `spread`**n for a question (how, what, where, which, why), whose
   answer is a flow or a set of places;
5. `path:` and `symbol:` boosts pin their chunks first, verbatim (`full`, source "boost").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cora_ci.bundle import Bundle
from cora_ci.retrieval.aliases import add_aliased
from cora_ci.retrieval.catalog import Catalog, catalog
from cora_ci.retrieval.evidence import Pointed, in_clue_order, pointed
from cora_ci.retrieval.features import active, compile_filters
from cora_ci.retrieval.fusion import Fused, fuse
from cora_ci.retrieval.nesting import together
from cora_ci.retrieval.params import PARAMS, Params, decay
from cora_ci.retrieval.query import Query, analyse, query_vector, rarity, title_terms
from cora_ci.retrieval.scoring import (
    Cand,
    add_pointed,
    add_reexporting,
    blank,
    expand_graph,
    explained,
    lift_nested,
    score_features,
    to_related,
)
from cora_ci.retrieval.select import diverse, graph_places, pinned_ids
from cora_ci.retrieval.types import Boost, Filters, Hit


def search(
    bundle: Bundle,
    query: str,
    *,
    k: int = 10,
    embedder: Any = None,
    filters: Filters = Filters(),  # noqa: B008 - frozen, shared safely
    boosts: Iterable[Boost] = (),
    expand: bool = True,
    params: Params = PARAMS,
    depth: int | None = None,
) -> list[Hit]:
    """The `k` best chunks for `query` (plus the chunks `path:`/`symbol:` boosts pin), best first.
    Candidates are gathered for `depth` hits (default `k`): an answer that asks again for more hits
    (`render.answer.filled`) ranks the same candidates, so its first ones stay as they were, and
    the places kept for what only the graph found are those of a `depth`-long answer (hits that
    merge would otherwise move them up: commons-lang's "StringUtils" with `-k 5` printed a graph
    neighbour third, of the 22 hits asked for when the class's parts merged).

    `embedder` (from `cora_ci.embedding.load_embedder`) enables the vector side when the bundle
    has vectors; without it the ranking is lexical. An empty query raises CORA-QRY-001, a bad glob
    in `filters` CORA-CFG-002.
    """
    q = analyse(query)
    boosts = tuple(boosts)
    cat = catalog(bundle)
    asked = (query, depth or k, filters, boosts, params, expand, embedder)
    if cat.last_ranked is not None and cat.last_ranked[0] == asked:  # `filled` asking for more hits
        cands, lifted = _copied(cat.last_ranked[1]), cat.last_ranked[2]
    else:
        cands, lifted = _ranked(bundle, cat, q, query, depth or k, embedder, filters, boosts, params, expand)
        cat.last_ranked = (asked, _copied(cands), lifted)
    pinned = pinned_ids(cat, boosts)
    places = graph_places(min(k, depth or k), params) if expand and params.graph > 0 else frozenset()
    picked = diverse(cands, k, pinned, decay(q, params), places, params.floor, params.evidence_file)
    picked = together(picked, cands, lifted, lambda c: c.meta.id) if lifted else picked
    top = picked[0].score if picked else 1.0
    hits: list[Hit] = []
    for cid in pinned:
        c = cands.get(cid)
        ex = c.explain if c is not None else blank(q)
        ex["boost"] = "pinned"
        hits.append(Hit(cid, top, "boost" if c is None else c.source, True, ex))
    hits.extend(Hit(c.meta.id, c.score, c.source, False, c.explain) for c in picked)
    return hits


_Ranked = tuple[dict[int, Cand], dict[int, int]]  # scored candidates, nested -> enclosing lifted


def _ranked(bundle: Bundle, cat: Catalog, q: Query, query: str, depth: int, embedder: Any, filters: Filters,
            boosts: tuple[Boost, ...], params: Params, expand: bool) -> _Ranked:  # fmt: skip
    """The candidates gathered for `depth` hits, scored, and the enclosing functions their nested
    functions lifted: everything `search` does before it picks."""
    accept = compile_filters(filters)
    cands = _candidates(bundle, cat, q, depth, embedder, filters, params, accept)
    lifted: dict[int, int] = {}
    told = Pointed({}, {})
    if params.features:
        told = pointed(cat, query, q.title) if params.evidence > 0 else told
        add_pointed(cat, q, cands, told, accept)
        add_reexporting(cat, q, cands, accept, params.definition)
        add_aliased(cat, q, cands, accept, params.definition)
        score_features(cat, q, cands, filters, boosts, params, told)
        to_related(cat, q, cands, filters, params, accept)
        lifted = lift_nested(cat, q, cands, params, accept)
    if expand and params.seeds > 0 and params.graph > 0 and cands:
        expand_graph(cat, q, cands, filters, params, accept)
        if told.at:  # the graph's lift kept below the clues' order (gson's class above its frame)
            in_clue_order(cands, told)
    return cands, lifted


def _copied(cands: dict[int, Cand]) -> dict[int, Cand]:
    """Candidates to pick from without changing these: picking sets scores and explanations (a
    field by field copy: `dataclasses.replace` took ~1.5 ms for 200 candidates)."""
    return {key: Cand(c.meta, c.score, c.source, dict(c.explain), c.origin) for key, c in cands.items()}


def pool_size(chunks: int, k: int, filters: Filters, params: Params = PARAMS, named: bool = False) -> int:
    """Candidates taken from each side: ten times deeper when a filter will drop some. Half as many
    for a query that is one identifier (`named`): BM25 puts its definitions among its first few
    (the name field weighs three times), no vector side is fused, and each candidate's features
    cost what made such a query's time (at 50k chunks, identifiers' in-process p50 ~6.0 -> ~4.5
    ms; the definitions by name of 18 repositories and the quality set's identifiers unchanged)."""
    pool = max(params.pool_named if named else params.pool, 3 * k)
    return min(max(pool * 10, 1000), max(chunks, 1)) if active(filters) else pool


def prefetch(bundle: Bundle, query: str, k: int, filters: Filters) -> None:
    """Run the BM25 side and read its candidates' metadata ahead of `search` (which then finds
    both cached): `cora-ci query` does this while the model loads in another thread."""
    cat = catalog(bundle)
    q = analyse(query)
    for cid, _ in bm25(bundle, q, pool_size(len(cat), k, filters, named=q.identifier is not None)):
        cat.meta(cid)


def bm25(bundle: Bundle, q: Query, pool: int) -> list[tuple[int, float]]:
    """The BM25 side: a sentence's words also by their other forms (`streaming`: `streams`) and
    two adjacent words also as the identifier they spell (`client session`: `ClientSession`), each
    word no rarer in a name than in the code (a repository's common word is not a name's), a
    report's title's words twice, the words that frame it (`framing`: "where", "how", a leading
    "find the ...") in the body alone unless it quotes them ("where is `Where` defined"); an
    identifier as written."""
    if q.identifier is not None:
        return bundle.lexical.search(q.text, pool, twice=title_terms(q))
    return bundle.lexical.search(
        q.text, pool, q.words, join=True, twice=title_terms(q), body_only=q.frame, whole=True
    )


def _candidates(bundle: Bundle, cat: Catalog, q: Query, k: int, embedder: Any, filters: Filters,
                params: Params, accept: Any) -> dict[int, Cand]:  # fmt: skip
    pool = pool_size(len(cat), k, filters, params, q.identifier is not None)
    lexical = bm25(bundle, q, pool) if params.lexical else []
    vector: list[tuple[int, float]] = []
    weight = params.fusion.vector_share(q.identifier is not None, q.report)
    if params.vectors and embedder is not None and bundle.vectors is not None and (weight > 0 or not lexical):
        weigh = rarity([bundle.lexical], params.rarity)
        vector = bundle.vectors.search(query_vector(embedder, q, weigh), pool)  # no model run when unweighted
    fused = fuse(lexical, vector, params.fusion, q.identifier is not None, q.report)
    # as many for any k up to ten, so a shorter answer is a longer one's start (6k were: `-k 1` and
    # `-k 2` put different functions first when a nested one, in the second's twelve, lifted its
    # enclosing one); a longer answer, as localization's fifty, scores 6k
    most = params.keep * max(k, _KEPT_FOR)
    kept = _best(cat, fused, accept, most) if q.identifier is None else None
    if kept is not None and q.codey:  # and what a name it holds finds: its definitions, BM25's first
        kept.update(cid for cid, _ in lexical[: _NAMED_KEPT * max(k, _KEPT_FOR)])
    out: dict[int, Cand] = {}
    for cid, f in fused.items():
        if kept is not None and cid not in kept:
            continue
        m = cat.meta(cid)
        if m is None or not accept(m):
            continue
        out[cid] = Cand(m, f.score, "search", explained(q, f))
    return out


_KEPT_FOR = 10  # the answer length whose candidates a shorter answer scores too
_NAMED_KEPT = 3  # BM25's first 3k kept beside them for a sentence that names code


def _best(cat: Catalog, fused: dict[int, Fused], accept: Any, most: int) -> set[int]:
    """The `most` best fused candidates the filters accept: the ones a sentence's features are
    worked out for. Below them a candidate does not reach the top (a name's share, the reference
    prior, a test's lending add little), and each one costs its file's metadata (~25 files a
    query at 50k chunks; bench/RESULTS.md). The one feature that lifts far, the definition of a
    name the sentence holds (`Session.send` in "how does `Session.send` retry"), finds it among
    BM25's first, whose name field puts it there: those are kept too (`_candidates`). Scoring
    every candidate of such sentences made them ~1.6x slower (5.7 against 9.2 ms p50 at 50k)."""
    out: set[int] = set()
    for cid, _ in sorted(fused.items(), key=lambda kv: (-kv[1].score, kv[0])):
        if len(out) >= most:
            break
        m = cat.meta(cid)
        if m is not None and accept(m):
            out.add(cid)
    return out
