"""`search`: hybrid retrieval over one bundle, best first, every hit explained.

Steps, each visible in a hit's `explain`:

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

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from cora_ci.bundle import Bundle
from cora_ci.retrieval.catalog import Catalog, Meta, catalog, impl_member
from cora_ci.retrieval.definitions import (
    DECLARED,
    extends,
    family,
    headers_behind_definitions,
    principal,
    prototype,
)
from cora_ci.retrieval.evidence import Pointed, pointed
from cora_ci.retrieval.expand import graph_scores
from cora_ci.retrieval.features import (
    EXACT,
    active,
    by_its_own_name,
    compile_filters,
    definition_level,
    last_stem,
    name_match,
    private,
)
from cora_ci.retrieval.fusion import Fused, fuse
from cora_ci.retrieval.kinds import path_class, prose_class
from cora_ci.retrieval.nesting import lift_enclosing, together
from cora_ci.retrieval.params import EXPLAIN_KEYS, PARAMS, Params, decay
from cora_ci.retrieval.query import Query, analyse, query_vector, rarity, title_terms
from cora_ci.retrieval.related import neighbours_of
from cora_ci.retrieval.select import diverse, graph_places, pinned_ids
from cora_ci.retrieval.tested import lend
from cora_ci.retrieval.types import Boost, Filters, Hit

# of Params.definition, by definition_level: a name in another case (`reader` for `Reader`) well below
# the exact one, which comes first even from the second place in BM25 and a file's second pick
_LEVEL_SHARE = {3: 1.0, 2: 0.35, 1: 0.15}
_BY_PATH = 0.8  # of an exact match whose qualifier is the file's module path, not the anchor's own


@dataclass
class _Cand:
    meta: Meta
    score: float
    source: Literal["search", "graph", "boost"]
    explain: dict[str, Any]
    origin: int = 0  # which bundle, in a search of several (`many.py`)


def _blank(query: Query) -> dict[str, Any]:
    ex: dict[str, Any] = dict.fromkeys(EXPLAIN_KEYS)
    ex["query"] = "identifier" if query.identifier else "text"
    return ex


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
    (`render.answer.filled`) ranks the same candidates, so its first ones stay as they were.

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
    places = graph_places(k, params) if expand and params.graph > 0 else frozenset()
    picked = diverse(cands, k, pinned, decay(q, params), places, params.floor)
    picked = together(picked, cands, lifted, lambda c: c.meta.id) if lifted else picked
    top = picked[0].score if picked else 1.0
    hits: list[Hit] = []
    for cid in pinned:
        c = cands.get(cid)
        ex = c.explain if c is not None else _blank(q)
        ex["boost"] = "pinned"
        hits.append(Hit(cid, top, "boost" if c is None else c.source, True, ex))
    hits.extend(Hit(c.meta.id, c.score, c.source, False, c.explain) for c in picked)
    return hits


_Ranked = tuple[dict[int, "_Cand"], dict[int, int]]  # scored candidates, nested -> enclosing lifted


def _ranked(bundle: Bundle, cat: Catalog, q: Query, query: str, depth: int, embedder: Any, filters: Filters,
            boosts: tuple[Boost, ...], params: Params, expand: bool) -> _Ranked:  # fmt: skip
    """The candidates gathered for `depth` hits, scored, and the enclosing functions their nested
    functions lifted: everything `search` does before it picks."""
    accept = compile_filters(filters)
    cands = _candidates(bundle, cat, q, depth, embedder, filters, params, accept)
    lifted: dict[int, int] = {}
    if params.features:
        told = pointed(cat, query, q.title) if params.evidence > 0 else Pointed({}, {})
        _add_pointed(cat, q, cands, told, accept)
        _features(cat, q, cands, filters, boosts, params, told)
        _to_related(cat, q, cands, filters, params, accept)
        lifted = _lift_nested(cat, q, cands, params, accept)
    if expand and params.seeds > 0 and params.graph > 0 and cands:
        _expand(cat, q, cands, filters, params, accept)
    return cands, lifted


def _copied(cands: dict[int, _Cand]) -> dict[int, _Cand]:
    """Candidates to pick from without changing these: picking sets scores and explanations (a
    field by field copy: `dataclasses.replace` took ~1.5 ms for 200 candidates)."""
    return {key: _Cand(c.meta, c.score, c.source, dict(c.explain), c.origin) for key, c in cands.items()}


def pool_size(chunks: int, k: int, filters: Filters, params: Params = PARAMS) -> int:
    """Candidates taken from each side: ten times deeper when a filter will drop some."""
    pool = max(params.pool, 3 * k)
    return min(max(pool * 10, 1000), max(chunks, 1)) if active(filters) else pool


def prefetch(bundle: Bundle, query: str, k: int, filters: Filters) -> None:
    """Run the BM25 side and read its candidates' metadata ahead of `search` (which then finds
    both cached): `cora-ci query` does this while the model loads in another thread."""
    cat = catalog(bundle)
    q = analyse(query)
    for cid, _ in bm25(bundle, q, pool_size(len(cat), k, filters)):
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
                params: Params, accept: Any) -> dict[int, _Cand]:  # fmt: skip
    pool = pool_size(len(cat), k, filters, params)
    lexical = bm25(bundle, q, pool) if params.lexical else []
    vector: list[tuple[int, float]] = []
    weight = params.fusion.vector_share(q.identifier is not None, q.report)
    if params.vectors and embedder is not None and bundle.vectors is not None and (weight > 0 or not lexical):
        weigh = rarity([bundle.lexical], params.rarity)
        vector = bundle.vectors.search(query_vector(embedder, q, weigh), pool)  # no model run when unweighted
    fused = fuse(lexical, vector, params.fusion, q.identifier is not None, q.report)
    out: dict[int, _Cand] = {}
    for cid, f in fused.items():
        m = cat.meta(cid)
        if m is None or not accept(m):
            continue
        out[cid] = _Cand(m, f.score, "search", _explained(q, f))
    return out


def _explained(q: Query, f: Fused) -> dict[str, Any]:
    ex = _blank(q)
    ex.update(bm25_rank=f.bm25_rank, bm25_score=f.bm25_score, vector_rank=f.vector_rank,
              vector_score=f.vector_score, fused=round(f.score, 6))  # fmt: skip
    return ex


def _demotion(cat: Catalog, q: Query, m: Meta, filters: Filters, params: Params) -> tuple[str, float] | None:
    """The class that lowers this chunk and its multiplier, or None (ordinary code, asked for, or
    selected by a path filter)."""
    if filters.paths:
        return None
    cls = (path_class(m.path) or ("generated" if cat.generated(m) else None) or prose_class(m.path, m.lang)
           or ("legacy" if cat.legacy(m.path) else None))  # fmt: skip
    if cls is None or cls in q.wants or (cls == "migration" and last_stem(m.path).lower() in q.words):
        return None  # a migration the query names ("auth.0011_update_proxy_permissions") is asked for
    factor = {"docs": params.docs, "stub": params.stub}.get(cls, params.demote)
    return (cls, factor) if factor != 1.0 else None


def _in_dir(path: str, d: str) -> bool:
    return path == d or path.startswith(d + "/")


def _add_pointed(cat: Catalog, q: Query, cands: dict[int, _Cand], told: Pointed, accept: Any,
                 key: Callable[[int], int] = int, origin: int = 0) -> None:  # fmt: skip
    """The chunks a report's clues name, as candidates even when no word of it matched them."""
    for cid in told.at:
        if key(cid) not in cands:
            m = cat.meta(cid)
            if m is not None and accept(m):
                cands[key(cid)] = _Cand(m, 0.0, "search", _blank(q), origin)


def _features(cat: Catalog, q: Query, cands: dict[int, _Cand], filters: Filters,
              boosts: tuple[Boost, ...], params: Params, told: Pointed | None = None) -> None:  # fmt: skip
    dirs = [b.value for b in boosts if b.kind == "dir"]
    idents = [(q.identifier, params.definition)] if q.identifier else []
    idents += [(q.named, params.definition)] if q.named else []  # "where is `abort` defined"
    idents += [(c, params.definition_in_text) for c in q.codey if c != q.named]
    bare = bool(idents) and all(len(ident) == 1 for ident, _ in idents)  # `MethodSpec`, not `.MethodSpec`
    first_part = principal(cat, cands, bare)
    asked = q.identifier is None and params.popular > 0  # a sentence: the most used of equals first
    popular = cat.popularity([c.meta.id for c in cands.values()]) if asked else {}
    older: list[tuple[_Cand, float]] = []  # definitions in older copies of the code, their factor
    defined = 0.0  # the best definition of what is asked for outside them
    members: dict[str, list[int]] = {}  # a named family's other members: behind its principal
    for key, c in cands.items():
        m, ex = c.meta, c.explain
        bonus = 0.0
        for ident, weight in idents:
            level = definition_level(ident, m, partial(cat.table.text, m.row))
            if level:  # a family's other members, and a block extending a type declared elsewhere: half
                extension = m.kind == "type" and extends(cat, m)
                fam = family(m, bare, ident[-1])
                chosen = first_part.get(fam) == key and not extension
                if not chosen:
                    members.setdefault(fam, []).append(key)
                share = _LEVEL_SHARE[level] * (1.0 if chosen else 0.5)
                if level == EXACT and len(ident) > 1 and not by_its_own_name(ident, m):
                    share *= _BY_PATH  # `Path.segments` asks for class Path's before Path.scala's other ones
                elif len(ident) == 1 and impl_member(m.anchor or ""):
                    share *= 0.5  # a bare `parseJSON` asks for the class's declaration, not an instance's
                if prototype(m, ident[-1], partial(cat.table.text, m.row)):
                    share *= DECLARED  # `uv_run`'s definition in core.c before its prototype in uv.h
                bonus = max(bonus, weight * share)
        if bonus:
            ex["definition"] = round(bonus, 6)
        if told is not None and (told.at or told.files):
            clue = params.evidence * told.at.get(m.id, 0.0) or params.evidence_file * told.files.get(
                m.path, 0.0
            )
            if clue:
                ex["evidence"] = round(clue, 6)
                bonus += clue
        nm = params.name * name_match(q, m)
        if nm:
            ex["name"] = round(nm, 6)
        pop = params.popular * popular.get(m.id, 0.0)
        if pop:
            ex["popular"] = round(pop, 6)
        score = c.score + bonus + nm + pop
        low = _demotion(cat, q, m, filters, params)
        if low is not None and low[0] == "legacy" and ex["definition"]:
            older.append((c, low[1]))  # lowered below, unless no other code defines it as well
        elif low is not None:
            score *= low[1]
            ex["demoted"] = low[0]
        else:
            defined = max(defined, ex["definition"] or 0.0)
        if any(_in_dir(m.path, d) for d in dirs):
            score *= params.dir_boost
            ex["dir"] = params.dir_boost
        if q.kind is not None and m.kind == q.kind:
            score *= params.kind
            ex["kind"] = params.kind
        c.score = score
    _lower_older_definitions(older, defined)
    if q.identifier is None and params.tested > 0:
        _to_subjects(cat, cands, params)
    headers = headers_behind_definitions(cands) if q.identifier is not None else set()
    if params.file > 0:
        _file_share(cands, params, headers)
    if q.identifier is None and params.private != 1.0:
        for c in cands.values():
            if not c.explain["definition"] and not c.explain["demoted"] and private(c.meta):
                c.score *= params.private
                c.explain["demoted"] = "private"
    _behind_principals(cands, first_part, members)


def _to_related(cat: Catalog, q: Query, cands: dict[int, _Cand], filters: Filters, params: Params,
                accept: Any, key: Callable[[int], int] = int, origin: int = 0) -> None:  # fmt: skip
    """A sentence that asks what uses a name ("what calls `parse_header`") or what it uses ("what
    does `parse_header` call") gets, after the name's definition, those neighbours of it in the
    reference graph (as `related` lists them), above what only matches words, the most referenced
    first, tests after code: a long caller that says the name once was no match for BM25
    (marshmallow's `Schema._do_load` was not among the first 15 results for "what calls
    _invoke_field_validators", its only caller)."""
    if q.relation is None or params.related <= 0:
        return
    named = [c for c in cands.values() if c.explain["definition"] and c.origin == origin]
    if not named:
        return
    top = max(named, key=lambda c: (c.explain["definition"], c.score, -c.meta.id))
    found = neighbours_of(cat, top.meta.id, q.relation)
    most = max(found.values(), default=0.0)
    for cid, weight in sorted(found.items()):
        c = cands.get(key(cid))
        if c is None:
            m = cat.meta(cid)
            if m is None or not accept(m):
                continue
            c = cands[key(cid)] = _Cand(m, 0.0, "search", _blank(q), origin)
        bonus = params.related * (0.5 + 0.5 * weight / most if most > 0 else 0.5)
        if _demotion(cat, q, c.meta, filters, params) is not None:
            bonus *= _LOWER  # a test that calls it is an answer too, after the code that does
        c.explain["related"] = round(bonus, 6)
        c.score = min(c.score + bonus, top.score * _BEHIND)  # after the definition asked about


def _behind_principals(
    cands: dict[int, _Cand], first_part: dict[str, int], members: dict[str, list[int]]
) -> None:
    """A definition the query names comes before the rest of its family: a sentence naming
    `Response.iter_content` ranked requests' two `@overload` stubs (short, their words the
    question's) above the implementation, whose larger definition bonus a name alone gets (2.0
    to 1.0) but one inside a sentence does not (0.15 to 0.075)."""
    for fam, keys in members.items():
        lead = cands.get(first_part.get(fam, -1))
        if lead is None:
            continue
        for key in keys:
            c = cands[key]
            if c.score >= lead.score and c is not lead:
                c.score = lead.score * _BEHIND


_BEHIND = 0.99  # a family member's score at most this share of its principal's
_LOWER = 0.8  # a caller's or callee's lift in a test, an example or a document, of code's


def _to_subjects(cat: Catalog, cands: dict[int, _Cand], params: Params) -> None:
    """Each chunk of a file a well-found test checks gains `params.tested` times what the test
    lends it (`tested.lend`)."""
    found = [(c.meta.path, c.score, c.explain["demoted"]) for c in cands.values()]
    paths = {path for path, _, _ in found}  # only these files' share is added: no other is read
    subjects: dict[str, tuple[str, ...]] = {}  # a test's chunks ask once

    def of(test: str) -> tuple[str, ...]:
        if test not in subjects:
            subjects[test] = cat.subjects_of(test, paths)
        return subjects[test]

    more = lend(found, of, params.demote)
    for c in cands.values():
        got = more.get(c.meta.path)
        if got and not c.explain["demoted"]:
            c.explain["tested"] = round(params.tested * got, 6)
            c.score += params.tested * got


def _lift_nested(cat: Catalog, q: Query, cands: dict[int, _Cand], params: Params, accept: Any,
                 key: Callable[[int], int] = int, origin: int = 0) -> dict[int, int]:  # fmt: skip
    """For a sentence, a function nested in a function ranks just below the one enclosing it
    (`nesting.py`); an identifier asks for what it names. Returns what lifted what."""
    if q.identifier is None and params.nested < 1.0:

        def add(m: Meta) -> _Cand | None:
            return _Cand(m, 0.0, "search", _blank(q), origin) if accept(m) else None

        return lift_enclosing(cat, cands, params.nested, add, key)
    return {}


def _lower_older_definitions(older: list[tuple[_Cand, float]], defined: float) -> None:
    """An older copy's definition of what is asked for (pydantic's `v1/`) is lowered like the rest
    of that copy when the code defines it as well (`defined`: the best such bonus), and not when it
    is the only definition there is: a name only the old code has is still found first."""
    for c, factor in older:
        if c.explain["definition"] <= defined:
            c.score *= factor
            c.explain["demoted"] = "legacy"


def _file_share(cands: dict[int, _Cand], params: Params, skip: set[int]) -> None:
    """Each candidate but those in `skip` gains `params.file` times its file's other best scores,
    the n-th of them weighted `file_decay`**n, up to `file_count`: a file with several good chunks
    rises, the more the more it has, without a long file of weak matches outweighing one strong
    chunk."""
    by_file: dict[str, list[float]] = {}
    for c in cands.values():
        by_file.setdefault(c.meta.path, []).append(c.score)
    for scores in by_file.values():
        scores.sort(reverse=True)
    weights = [params.file * params.file_decay**i for i in range(params.file_count)]
    for key, c in cands.items():
        if key in skip:
            continue
        others = by_file[c.meta.path][: params.file_count + 1]
        if c.score in others:
            others = others.copy()
            others.remove(c.score)
        extra = sum(w * s for w, s in zip(weights, others, strict=False))
        if extra:
            c.explain["file"] = round(extra, 6)
            c.score += extra


def _expand(cat: Catalog, q: Query, cands: dict[int, _Cand], filters: Filters, params: Params,
            accept: Any, seeds: dict[int, float] | None = None, scale: float = 1.0,
            key: Callable[[int], int] = int, origin: int = 0) -> None:  # fmt: skip
    """PageRank from the best `params.seeds` candidates (or the `seeds` given), lifting linked
    candidates by up to `params.graph` times `scale` and adding linked chunks search missed;
    `key` maps a chunk id to its key in `cands`, `origin` is the bundle (several: `many.py`)."""
    if seeds is None:
        ranked = sorted(cands.values(), key=lambda c: (-c.score, c.meta.id))[: params.seeds]
        seeds = {c.meta.id: c.score for c in ranked if c.score > 0}
    mass = graph_scores(cat.graph, seeds, params.reverse)
    if mass and params.hubs > 0:  # what all the code refers to is near every seed, and says little
        pop = cat.popularity(list(mass))
        mass = {cid: m * (1.0 - params.hubs * pop.get(cid, 0.0)) for cid, m in mass.items()}
    most = max(mass.values(), default=0.0)
    if most <= 0:
        return
    for cid, m in mass.items():
        share = m / most * scale
        c = cands.get(key(cid))
        if c is None:
            if share < params.graph_min:
                continue
            meta = cat.meta(cid)
            if meta is None or not accept(meta):
                continue
            c = cands[key(cid)] = _Cand(meta, 0.0, "graph", _blank(q), origin)
            low = _demotion(cat, q, meta, filters, params)
            if low is not None:
                share *= low[1]
                c.explain["demoted"] = low[0]
        extra = params.graph * share
        c.score += extra
        c.explain["graph"] = round(extra, 6)
