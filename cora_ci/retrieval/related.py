"""What to read next about one symbol: its neighbours in the reference graph, each with the relation.

The graph has one kind of edge, "this chunk references a name that chunk defines". Relations are
read off it: what the symbol's chunks reference are its callees, what references them its callers
(those in test files: its tests), the chunk above it its parent; a type's bases are the types its
declaration line names (`class C(Base)`, `class C extends Base implements I`), and a member
overrides the same-named member of a base (overridden-by, of a subclass). Personalized PageRank
seeded by the symbol's chunks orders them and fills the list with what is two references away
(indirect): the same walk `query` uses to expand its hits.

The order keeps every kind of relation in sight: the parent, the members it overrides and the
types it extends first, then (a third of the list at most) what overrides or extends it, then
callees, callers and tests taken in turn, each kind best first, then indirect ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import chain, zip_longest

import numpy as np

from cora_ci.arrays import isin
from cora_ci.chunking.model import chunk_id, later_parts
from cora_ci.rebind.view import declaring, mentions
from cora_ci.retrieval.catalog import Catalog, Meta
from cora_ci.retrieval.expand import graph_scores
from cora_ci.retrieval.kinds import path_class, prose_class

_REVERSE = 1.0  # callers matter as much as callees here (query weighs them at 0.5)
_MAX_DEPTH = 4  # levels of bases walked for an override
_MAX_SCAN = 400  # referencing chunks whose text is read (a hub type can have thousands)
_MANY = ("overridden-by", "subclass")  # relations a popular base type has by the dozen
_DECL_END = re.compile(r"[:{]\s*$|\bwhere\b")


@dataclass(frozen=True)
class Link:
    """A related chunk, how it relates to the symbol, and its PageRank mass from the symbol."""

    chunk_id: int
    relation: str
    score: float


def related(cat: Catalog, target: int, k: int = 10, name: str | None = None) -> list[Link]:
    """Up to `k` chunks related to chunk `target`, best first (see the module's order); `name`:
    which of its symbols is meant, when small siblings share the chunk (default: the first)."""
    me = cat.meta(target)
    if me is None:
        return []
    sharing = name is not None and name in me.symbols and len(me.symbols) > 1
    if name is not None and name in me.symbols:
        me = me._replace(symbols=(name,))
    family = _family(cat, me)
    g = cat.graph
    mass = graph_scores(g, dict.fromkeys(family, 1.0), _REVERSE, incoming=cat.incoming())
    outs, ins = _neighbours(cat, family)
    structural = _structural(cat, me, ins, outs)
    taken = set(family) | {cid for cid, _ in structural}
    direct: dict[str, list[int]] = {"callee": [], "caller": [], "test": []}
    mentioned: list[int] = []
    mine = _testing(cat, me)
    for cid in outs:
        if cid not in taken and (mine or not _is_test(cat, cid)):  # code calls no test: a name's twin
            direct["callee"].append(cid)
    for cid in _callers(cat, ins, me):
        m = cat.meta(cid)
        if cid in taken or cid in outs or m is None or (sharing and not _naming(cat, m, me.symbols[0])):
            continue  # small siblings share the chunk: a caller of `escape` is not one of `escape_path`
        if prose_class(m.path, m.lang) is not None or path_class(m.path) == "changelog":
            mentioned.append(cid)  # a page that names it: after what runs it
        else:
            direct["test" if not mine and _testing(cat, m) else "caller"].append(cid)
    weight = {**outs, **ins}
    for ids in direct.values():
        ids.sort(key=lambda c: (-mass.get(c, 0.0), -weight.get(c, 0.0), c))
    direct["callee"].sort(key=_called(cat, family, direct["callee"]).__contains__, reverse=True)  # stable
    turns = zip_longest(*([(c, r) for c in ids] for r, ids in direct.items()))
    # a base member with dozens of overrides or a type with dozens of subclasses would fill the
    # list alone: a third of it at most goes to those, the rest after the direct relations
    many = sorted(
        (x for x in structural if x[1] in _MANY), key=lambda x: (_is_test(cat, x[0]), -mass.get(x[0], 0.0))
    )
    cap = max(1, k // 3)
    first = [x for x in structural if x[1] not in _MANY] + many[:cap]
    mentioned.sort(key=lambda c: (-mass.get(c, 0.0), c))
    picked = [*first, *(x for x in chain.from_iterable(turns) if x is not None), *many[cap:],
              *((c, "mention") for c in mentioned)]  # fmt: skip
    seen = {c for c, _ in picked} | set(family)
    indirect = sorted((c for c in mass if c not in seen), key=lambda c: (-mass[c], c))
    picked += [(_canonical(cat, c), "indirect") for c in indirect]
    out: list[Link] = []
    done: set[int] = set(family)
    top = max(mass.values(), default=0.0)
    for cid, rel in picked:
        if cid in done or cat.meta(cid) is None:
            continue
        done.add(cid)
        out.append(Link(cid, rel, top if rel == "parent" else mass.get(cid, 0.0)))
        if len(out) >= k:
            break
    return out


def neighbours_of(cat: Catalog, target: int, relation: str) -> dict[int, float]:
    """What references the symbol of chunk `target` ("callers": its callers and the tests that use
    it, as `related` lists them) or what it references ("callees"), with the weight of the
    references."""
    me = cat.meta(target)
    if me is None:
        return {}
    outs, ins = _neighbours(cat, _family(cat, me))
    if relation == "callees":
        return outs
    return {c: ins.get(c, 0.0) for c in _callers(cat, ins, me)}


def _canonical(cat: Catalog, cid: int) -> int:
    """The first part of a split symbol (the one its anchor names), else the chunk itself."""
    m = cat.meta(cid)
    if m is None or m.anchor is None or "::" not in m.anchor:
        return cid
    first = chunk_id(m.path, m.anchor.split("::", 1)[1])
    return first if first != cid and cat.meta(first) is not None else cid


def _family(cat: Catalog, me: Meta) -> list[int]:
    """The symbol's chunks: all its parts and everything below them."""
    out = [me.id]
    if me.anchor and "::" in me.anchor:
        qual = me.anchor.split("::", 1)[1]
        first = chunk_id(me.path, qual)
        out = [first] if cat.meta(first) is not None else [me.id]
        out += later_parts(me.path, qual, lambda cid: cat.meta(cid) is not None)
        if me.id not in out:
            out.append(me.id)
    return list(dict.fromkeys(out + [d for c in out for d in cat.descendants(c)]))


def _neighbours(cat: Catalog, family: list[int]) -> tuple[dict[int, float], dict[int, float]]:
    """What the family references and what references it (outside it): chunk id -> edge weight,
    each canonical (a reference to a later part of a split symbol is one to the symbol)."""
    g = cat.graph
    nodes = g.nodes(family)
    own = set(family)
    outs: dict[int, float] = {}
    ins: dict[int, float] = {}
    for n in nodes.tolist():
        for j, w in zip(g.indices[g.indptr[n] : g.indptr[n + 1]].tolist(),
                        g.weights[g.indptr[n] : g.indptr[n + 1]].tolist(), strict=True):  # fmt: skip
            c = _canonical(cat, int(g.ids[j]))
            if c not in own:
                outs[c] = outs.get(c, 0.0) + w
    edges = np.flatnonzero(isin(g.indices, nodes))
    for e in edges.tolist():
        c = _canonical(cat, int(g.ids[g.sources[e]]))
        if c not in own:
            ins[c] = ins.get(c, 0.0) + float(g.weights[e])
    return outs, ins


def _callers(cat: Catalog, ins: dict[int, float], me: Meta) -> list[int]:
    """The referencing chunks, and for a member the tests that use its type and name it; a file
    chunk (an import line) only when nothing else of its file references the symbol."""
    found = dict(ins)
    if me.kind != "type" and me.parent is not None and me.symbols:
        parent = cat.meta(me.parent)
        if parent is not None and parent.kind == "type":
            _, type_ins = _neighbours(cat, [_canonical(cat, parent.id)])
            tests = [c for c in sorted(type_ins) if c not in found and _is_test(cat, c)][:_MAX_SCAN]
            for c in tests:
                m = cat.meta(c)
                if m is not None and _naming(cat, m, me.symbols[0]):
                    found[c] = type_ins[c]
    return without_import_lines(cat, list(found))


def without_import_lines(cat: Catalog, ids: list[int]) -> list[int]:
    """`ids` without the file chunks (import lines) of files that have another chunk among them."""
    metas = [m for m in (cat.meta(c) for c in ids) if m is not None]
    busy = {m.path for m in metas if m.kind != "file"}
    return [m.id for m in metas if m.kind != "file" or m.path not in busy]


def _is_test(cat: Catalog, cid: int) -> bool:
    m = cat.meta(cid)
    return m is not None and _testing(cat, m)


def _testing(cat: Catalog, m: Meta) -> bool:
    """A test's chunk: by its path, a Rust `mod tests`'s in the file it tests, or a Rust function
    marked `#[test]`."""
    return path_class(m.path) == "test" or cat.test_by_code(m)


def _text(cat: Catalog, m: Meta) -> str:
    return cat.table.text(m.row)


def _called(cat: Catalog, family: list[int], callees: list[int]) -> set[int]:
    """Of the `callees`, the chunks the symbol's chunks reference, those it calls (`name(`, `.name(`, `new
    Name(`) rather than names: httpx's `Client.send` listed the types of its annotations
    (`AuthTypes`, `Response`, `Request`, hubs of the graph) above the three functions it calls,
    which the default ten left out."""
    texts = [_text(cat, m) for c in family if (m := cat.meta(c)) is not None]
    calls = {n for t in texts for n in _CALL.findall(t)}
    return {c for c in callees if (m := cat.meta(c)) is not None and any(s in calls for s in m.symbols)}


_CALL = re.compile(r"(?<![\w$])([A-Za-z_$][\w$]*)\s*\(")  # a name called (from the name's start: linear)


def _naming(cat: Catalog, m: Meta, name: str) -> bool:
    """Whether the chunk of `m` names `name` on a line of its own text."""
    return any(mentions(t, name) for t in _text(cat, m).split("\n"))


def _structural(
    cat: Catalog, me: Meta, ins: dict[int, float], outs: dict[int, float]
) -> list[tuple[int, str]]:
    """The parent, and the type hierarchy: bases and subclasses of a type, overridden and
    overriding members of a member."""
    out: list[tuple[int, str]] = []
    parent = cat.meta(me.parent) if me.parent is not None else None
    if parent is not None and parent.kind != "file":
        out.append((_canonical(cat, parent.id), "parent"))
    if me.kind == "type":
        out += [(b, "base") for b in _bases(cat, me, outs)]
        out += [(s, "subclass") for s in _subclasses(cat, me, ins)]
        return out
    if parent is None or parent.kind != "type" or not me.symbols:
        return out
    name = me.symbols[0]
    owner = cat.meta(_canonical(cat, parent.id)) or parent
    level, seen = _bases(cat, owner), {owner.id}
    for _ in range(_MAX_DEPTH):  # the nearest base that has the member
        hit = [m for b in level if (m := _member(cat, b, name)) is not None]
        if hit:
            out += [(m, "overrides") for m in hit]
            break
        seen.update(level)
        level = [x for b in level for x in _bases(cat, cat.meta(b)) if x not in seen]  # type: ignore[arg-type]
    _, owner_ins = _neighbours(cat, [owner.id])
    for s in _subclasses(cat, owner, owner_ins):
        m = _member(cat, s, name)
        if m is not None:
            out.append((m, "overridden-by"))
    return out


def _bases(cat: Catalog, t: Meta, outs: dict[int, float] | None = None) -> list[int]:
    """The types `t`'s declaration names besides itself (the types it extends or implements)."""
    if outs is None:
        outs, _ = _neighbours(cat, [t.id])
    decl = _declaration(cat, t)
    return [c for c in sorted(outs) if (m := cat.meta(c)) is not None and m.kind == "type" and
            m.symbols and _names(decl, m.symbols[0])]  # fmt: skip


def _subclasses(cat: Catalog, t: Meta, ins: dict[int, float]) -> list[int]:
    """The types whose declaration names `t`."""
    if not t.symbols:
        return []
    kinds = [(c, m) for c in sorted(ins) if (m := cat.meta(c)) is not None and m.kind == "type"]
    return [c for c, m in kinds[:_MAX_SCAN] if _names(_declaration(cat, m), t.symbols[0])]


def _declaration(cat: Catalog, t: Meta) -> str:
    """A type's declaration: from the line naming it to the line that opens its body (or a few)."""
    if not t.symbols:
        return ""
    lines = _text(cat, t).split("\n")
    at = declaring(lines, t.symbols[0], t.lang)
    if at is None:
        return ""
    decl = lines[at : at + 6]
    end = next((i for i, line in enumerate(decl) if _DECL_END.search(line)), len(decl) - 1)
    text = "\n".join(decl[: end + 1])
    # what follows the type's own name: `class Foo(Base)` names Base, not Foo
    pos = re.search(rf"\b{re.escape(t.symbols[0])}\b", text)
    return text[pos.end() :] if pos else text


def _names(text: str, name: str) -> bool:
    return bool(re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text))


def _member(cat: Catalog, type_id: int, name: str) -> int | None:
    """The member of type `type_id` (any of its parts) named `name`."""
    t = cat.meta(type_id)
    if t is None:
        return None
    for c in _family(cat, t):
        m = cat.meta(c)
        if m is not None and m.id != t.id and m.parent is not None and name in m.symbols:
            parent = cat.meta(m.parent)
            if parent is not None and _canonical(cat, parent.id) == _canonical(cat, t.id):
                return _canonical(cat, c)
    return None
