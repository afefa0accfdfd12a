"""How a search scores its candidates once BM25 and vectors are fused: the query-aware
features (step 2 of `search`'s docstring: definitions, evidence, names, popularity, demotions,
tests, `dir:` boosts, a file's share, nested functions, a sentence's related chunks) and the
reference expansion (step 3). A search over one bundle (`search.py`) and over several
(`many.py`) apply the same steps to their candidates, `Cand`s keyed by chunk id or by bundle and
chunk id (`key`, `origin`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from cora_ci.chunking.model import OVERLOAD
from cora_ci.retrieval.catalog import Catalog, Meta, constructor, impl_member
from cora_ci.retrieval.definitions import (
    DECLARED,
    MEMBER,
    extends,
    family,
    headers_behind_definitions,
    lift_implementations,
    principal,
    prototype,
    top_level,
)
from cora_ci.retrieval.evidence import Pointed, in_clue_order
from cora_ci.retrieval.expand import graph_scores
from cora_ci.retrieval.features import (
    EXACT,
    by_its_own_name,
    data,
    definition_level,
    last_stem,
    name_match,
    private,
)
from cora_ci.retrieval.fusion import Fused
from cora_ci.retrieval.kinds import path_class, prose_class
from cora_ci.retrieval.nesting import lift_enclosing
from cora_ci.retrieval.params import EXPLAIN_KEYS, Params
from cora_ci.retrieval.query import Query, signature
from cora_ci.retrieval.quoted import raised
from cora_ci.retrieval.reexports import publishing
from cora_ci.retrieval.related import neighbours_of
from cora_ci.retrieval.tested import lend
from cora_ci.retrieval.types import Boost, Filters

# of Params.definition, by definition_level: a name in another case (`reader` for `Reader`) well below
# the exact one, which comes first even from the second place in BM25 and a file's second pick
_LEVEL_SHARE = {3: 1.0, 2: 0.35, 1: 0.15}
_BY_PATH = 0.8  # of an exact match whose qualifier is the file's module path, not the anchor's own


@dataclass
class Cand:
    meta: Meta
    score: float
    source: Literal["search", "graph", "boost"]
    explain: dict[str, Any]
    origin: int = 0  # which bundle, in a search of several (`many.py`)


def blank(query: Query) -> dict[str, Any]:
    ex: dict[str, Any] = dict.fromkeys(EXPLAIN_KEYS)
    ex["query"] = "identifier" if query.identifier else "text"
    return ex


def explained(q: Query, f: Fused) -> dict[str, Any]:
    ex = blank(q)
    ex.update(bm25_rank=f.bm25_rank, bm25_score=f.bm25_score, vector_rank=f.vector_rank,
              vector_score=f.vector_score, fused=round(f.score, 6))  # fmt: skip
    return ex


def _of_raised(m: Meta, thrown: frozenset[str]) -> bool:
    """`m` is a class a report's message was raised as, one of its members, or the header of the
    file named after it (Java's `JsonSyntaxException.java`): it says what went wrong, the code
    that raises it says where (gson's `duplicate key: 1` answered the exception's class, its
    constructors, its file's licence and its `serialVersionUID` before the map adapter)."""
    qual = OVERLOAD.sub("", m.anchor.split("::", 1)[1]) if m.anchor and "::" in m.anchor else ""
    owner = qual.split(".", 1)[0]
    if m.kind == "file":
        return last_stem(m.path) in thrown
    return (m.kind == "type" and bool(m.symbols) and m.symbols[0] in thrown) or (
        owner in thrown and "." in qual
    )


def demotion(cat: Catalog, q: Query, m: Meta, filters: Filters, params: Params) -> tuple[str, float] | None:
    """The class that lowers this chunk and its multiplier, or None (ordinary code, asked for, or
    selected by a path filter)."""
    if filters.paths:
        return None
    if (thrown := raised(q.text)) and _of_raised(m, thrown):
        return "raised", params.demote  # `JsonSyntaxException: duplicate key: 1` asks where, not what
    cls = (path_class(m.path) or ("test" if cat.test_by_code(m) else None)
           or ("generated" if cat.built(m.path) or cat.generated(m) else None) or prose_class(m.path, m.lang)
           or ("legacy" if cat.legacy(m.path) else None))  # fmt: skip
    if cls is None or cls in q.wants or (cls == "migration" and last_stem(m.path).lower() in q.words):
        return None  # a migration the query names ("auth.0011_update_proxy_permissions") is asked for
    factor = {"docs": params.docs, "stub": params.stub}.get(cls, params.demote)
    if cls == "docs" and q.report:
        factor *= params.docs_report
    return (cls, factor) if factor != 1.0 else None


def _in_dir(path: str, d: str) -> bool:
    return path == d or path.startswith(d + "/")


def add_pointed(cat: Catalog, q: Query, cands: dict[int, Cand], told: Pointed, accept: Any,
                 key: Callable[[int], int] = int, origin: int = 0) -> None:  # fmt: skip
    """The chunks a report's clues name, as candidates even when no word of it matched them."""
    for cid in told.at:
        if key(cid) not in cands:
            m = cat.meta(cid)
            if m is not None and accept(m):
                cands[key(cid)] = Cand(m, 0.0, "search", blank(q), origin)


def add_reexporting(cat: Catalog, q: Query, cands: dict[int, Cand], accept: Any, bonus: float,
                    key: Callable[[int], int] = int, origin: int = 0) -> None:  # fmt: skip
    """A name asked for that the bundle defines nowhere (a dependency's: axum's `FromRequest` is
    `axum_core`'s) is defined, as far as this code says, where a module publishes it
    (`reexports.py`): that module's code is a candidate with the bonus of a definition."""
    asked = q.identifier or q.named
    as_definitions(q, cands, publishing(cat, asked[-1]) if asked else [], accept, bonus, key, origin)


def as_definitions(q: Query, cands: dict[int, Cand], found: list[Meta], accept: Any, bonus: float,
                   key: Callable[[int], int] = int, origin: int = 0) -> None:  # fmt: skip
    """Each chunk of `found` the filters accept a candidate with `bonus` as a definition's, once:
    what stands for a name's definition though no symbol of it has the name (a module that
    re-exports it, the type an alias names)."""
    for m in found:
        c = cands.get(key(m.id))
        if c is None:
            if not accept(m):
                continue
            c = cands[key(m.id)] = Cand(m, 0.0, "search", blank(q), origin)
        if not c.explain.get("definition"):
            c.explain["definition"] = round(bonus, 6)
            c.score += bonus


def score_features(cat: Catalog, q: Query, cands: dict[int, Cand], filters: Filters,
              boosts: tuple[Boost, ...], params: Params, told: Pointed | None = None) -> None:  # fmt: skip
    dirs = [b.value for b in boosts if b.kind == "dir"]
    idents = [(q.identifier, params.definition)] if q.identifier else []
    idents += [(q.named, params.definition)] if q.named else []  # "where is `abort` defined"
    idents += [(c, params.definition_in_text) for c in q.codey if c != q.named]
    bare = bool(idents) and all(len(ident) == 1 for ident, _ in idents)  # `MethodSpec`, not `.MethodSpec`
    first_part = principal(cat, cands, bare) if idents else {}  # only a named definition has a family
    code = partial(_code, cat, q, filters, params)  # a bare name's top-level definition in code:
    tops = {i for i, _ in idents if len(i) == 1 and top_level(cands, i[0], code)}  # members behind
    if q.signed is not None:  # one overload written with its types (`abbreviate(String, String, int)`)
        for key, c in cands.items():
            if _signed(c.meta.anchor) == q.signed:
                first_part[family(c.meta, bare, (q.identifier or ("",))[-1])] = key
    asked = q.identifier is None and params.popular > 0  # a sentence: the most used of equals first
    popular = cat.popularity([c.meta.id for c in cands.values()]) if asked else {}
    older: list[tuple[Cand, str, float]] = []  # definitions lowered only if code defines them too
    defined = 0.0  # the best definition of what is asked for outside them
    members: dict[str, list[int]] = {}  # a named family's other members: behind its principal
    for key, c in cands.items():
        m, ex = c.meta, c.explain
        bonus = 0.0
        for ident, weight in idents:
            level = definition_level(ident, m, partial(cat.table.text, m.row), cat.go_root)
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
                elif len(ident) == 1 and m.kind == "method" and constructor(m.anchor or ""):
                    share *= 0.5  # a bare `Status` asks for the class, not its constructors (leveldb)
                elif ident in tops and ident not in m.names:
                    share *= MEMBER  # a bare `from_str`: the crate's function before `Deserializer::from_str`
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
        low = demotion(cat, q, m, filters, params)
        kept = low is not None and (low[0] == "legacy" or (low[0] == "test" and q.identifier is not None))
        if low is not None and kept and ex["definition"]:
            older.append((c, *low))  # lowered below, unless no other code defines it as well
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
    if q.identifier is None and (params.private != 1.0 or params.data != 1.0):
        for c in cands.values():
            if c.explain["definition"] or c.explain["demoted"]:
                continue
            if private(c.meta) and not q.report:
                c.score *= params.private
                c.explain["demoted"] = "private"
            if data(c.meta, partial(_parent_text, cat, c.meta)):  # a private one both
                c.score *= params.data
                c.explain["demoted"] = "data"
    _behind_principals(cands, first_part, members)
    if told is not None and told.at:
        in_clue_order(cands, told)


def _code(cat: Catalog, q: Query, filters: Filters, params: Params, m: Meta) -> bool:
    return demotion(cat, q, m, filters, params) is None


def _parent_text(cat: Catalog, m: Meta) -> str:
    """The text of the chunk that encloses `m` ("" for none)."""
    p = cat.meta(m.parent) if m.parent is not None else None
    return cat.table.text(p.row) if p is not None else ""


def _signed(anchor: str | None) -> str | None:
    """An overload's parameter types as its anchor writes them (`abbreviate(String, int)`)."""
    found = re.search(r"\(.*\)", (anchor or "").partition("::")[2])
    return signature(found.group()) if found else None


def to_related(cat: Catalog, q: Query, cands: dict[int, Cand], filters: Filters, params: Params,
                accept: Any, key: Callable[[int], int] = int, origin: int = 0) -> None:  # fmt: skip
    """A sentence that asks what uses a name ("what calls `parse_header`") or what it uses ("what
    does `parse_header` call") gets, after the name's definition, those neighbours of it in the
    reference graph (as `related` lists them), above what only matches words, the most referenced
    first, tests after code: a long caller that says the name once was no match for BM25
    (marshmallow's `Schema._do_load` was not among the first 15 results for "what calls
    _invoke_field_validators", its only caller). The name's other definitions come after them:
    "what calls url_path_for" printed starlette's six definitions and no caller at k 6."""
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
            c = cands[key(cid)] = Cand(m, 0.0, "search", blank(q), origin)
        bonus = params.related * (0.5 + 0.5 * weight / most if most > 0 else 0.5)
        if demotion(cat, q, c.meta, filters, params) is not None:
            bonus *= _LOWER  # a test that calls it is an answer too, after the code that does
        c.explain["related"] = round(bonus, 6)
        c.score = min(c.score + bonus, top.score * _BEHIND)  # after the definition asked about
    lifted = [c.score for cid in found if (c := cands.get(key(cid))) is not None and c.explain["related"]]
    for c in named:  # the name's other definitions (starlette's six `url_path_for`) after its users
        if c is not top and c.meta.id not in found and lifted:
            c.score = min(c.score, min(lifted) * _BEHIND)


def _behind_principals(
    cands: dict[int, Cand], first_part: dict[str, int], members: dict[str, list[int]]
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


def _to_subjects(cat: Catalog, cands: dict[int, Cand], params: Params) -> None:
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


def lift_nested(cat: Catalog, q: Query, cands: dict[int, Cand], params: Params, accept: Any,
                 key: Callable[[int], int] = int, origin: int = 0) -> dict[int, int]:  # fmt: skip
    """For a sentence, a function nested in a function ranks just below the one enclosing it
    (`nesting.py`); an identifier asks for what it names. Returns what lifted what."""
    if q.identifier is None and params.nested < 1.0:

        def add(m: Meta) -> Cand | None:
            return Cand(m, 0.0, "search", blank(q), origin) if accept(m) else None

        lifted = lift_enclosing(cat, cands, params.nested, add, key)
        lift_implementations(cat, cands, params.nested, add, key)
        return lifted
    return {}


def _lower_older_definitions(older: list[tuple[Cand, str, float]], defined: float) -> None:
    """An older copy's definition of what is asked for (pydantic's `v1/`), or a test's of a name
    asked for, is lowered like the rest of its class when the code defines it as well (`defined`:
    the best such bonus), and not when it is the only definition there is: a name only the old code
    or the tests have is still found first (ripgrep's `tests.inexact` helper)."""
    for c, cls, factor in older:
        if c.explain["definition"] <= defined:
            c.score *= factor
            c.explain["demoted"] = cls


def _file_share(cands: dict[int, Cand], params: Params, skip: set[int]) -> None:
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


def expand_graph(cat: Catalog, q: Query, cands: dict[int, Cand], filters: Filters, params: Params,
            accept: Any, seeds: dict[int, float] | None = None, scale: float = 1.0,
            key: Callable[[int], int] = int, origin: int = 0) -> None:  # fmt: skip
    """PageRank from the best `params.seeds` candidates (or the `seeds` given), lifting linked
    candidates by up to `params.graph` times `scale` and adding linked chunks search missed;
    `key` maps a chunk id to its key in `cands`, `origin` is the bundle (several: `many.py`)."""
    if seeds is None:
        ranked = sorted(cands.values(), key=lambda c: (-c.score, c.meta.id))[: params.seeds]
        seeds = {c.meta.id: c.score for c in ranked if c.score > 0}
    mass = graph_scores(cat.graph, seeds, params.reverse, incoming=cat.incoming())
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
            c = cands[key(cid)] = Cand(meta, 0.0, "graph", blank(q), origin)
            low = demotion(cat, q, meta, filters, params)
            if low is not None:
                share *= low[1]
                c.explain["demoted"] = low[0]
        extra = params.graph * share
        c.score += extra
        c.explain["graph"] = round(extra, 6)
