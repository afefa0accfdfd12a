"""Hits to an answer within a token budget: each result is the code that matched, its own lines.

A result's lines are its hit's chunk: a method hit is the method, never the class around it. The
enclosing symbol (a method's class, a nested function's function, a subsection's section) is
context, reported apart as a `Parent` (its anchor, its whole span, its declaration only), so a
frame can never be detached from the hit: its span always holds the hit's lines. Views of one file
that overlap (two hits on the same lines, a class skeleton and one of its members) merge into one
result, named after the best-ranked hit in it, so a line is never printed twice.

Packing keeps rank order: every hit starts at its signature (the lowest-ranked dropped while even
that is over budget), then, best first, each gets its full text if the answer still fits; the
first that does not fit stays a signature and so does everything below it, so a result is never
elided while a lower-ranked one is printed whole. The budget counts what is printed: the code
(its lines and `. . .` markers) and, when `overhead` is given, each result's metadata and
commentary, with the embedding model's tokenizer (the unit of a chunk's `tokens`). Hits with
`full` (boosts) are always verbatim and may exceed the budget by themselves, and so may the best
hit's signature: an answer is never empty for a small budget. Results the budget leaves out are
counted (`Packed.left`) and said in a note (`left_out`): an agent that got two of the five results
it asked for knows to ask again with more tokens rather than think there were two.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, Protocol

from cora_ci.chunking.model import Chunk, later_parts, part_of
from cora_ci.chunking.tokens import default_counter
from cora_ci.rebind.bind import Bound, Stale
from cora_ci.rebind.view import View, commented, declaring, from_chunk, merge, signature
from cora_ci.render.members import Asked, named, own
from cora_ci.retrieval.types import Hit

Mode = Literal["sig", "full"]


class ChunkSource(Protocol):
    def chunk(self, chunk_id: int) -> Chunk | None: ...

    def bind(self, chunk: Chunk) -> Bound: ...

    def family(self, chunk: Chunk) -> list[Chunk]: ...

    def unchanged(self, path: str) -> bool: ...

    def span(self, chunk: Chunk) -> tuple[int, int]: ...


@dataclass(frozen=True)
class Parent:
    """The symbol around a result: where it is and its declaration, not its code."""

    path: str
    start: int  # the whole symbol's span (all parts of a split one), which holds the result's lines
    end: int
    symbol: str
    anchor: str | None
    kind: str
    label: str  # `class Auth`, `section Install`: its last hierarchy entry, readable
    text: str  # the declaration alone (decorators, `class Auth(Base):`, a heading)


@dataclass
class Result:
    """One block of the answer: a hit, with whatever overlapped it merged in."""

    view: View
    chunk: Chunk  # the best hit of the block: its kind and, unless `named`, its symbol and anchor
    hit: Hit
    elided: bool  # the best hit was cut to its signature for the budget
    stale: Stale
    parent: Parent | None  # the symbol around the best hit (context, outside the result's lines)
    members: list[int] = field(default_factory=list)  # chunk ids of all hits merged here
    named: tuple[str, str | None] | None = None  # (symbol, anchor) of the member of the chunk that matched
    parts: tuple[int, ...] = ()  # the parts of the best hit's split symbol merged here, when several

    @property
    def text(self) -> str:
        return self.view.text()

    @property
    def symbol(self) -> str:
        return self.named[0] if self.named else self.chunk.symbol

    @property
    def anchor(self) -> str | None:
        return self.named[1] if self.named else self.chunk.anchor

    @cached_property
    def tokens(self) -> int:
        """Tokens of the code shown, as the budget counts them (loads the tokenizer on first use)."""
        return view_tokens(self.view)


def view_tokens(view: View) -> int:
    return sum(default_counter().count_lines([t for _, t in view.rendered()]))


@dataclass
class _Item:
    rank: int
    hit: Hit
    chunk: Chunk
    bound: Bound
    parent: Parent | None = None  # set once the cut to `k` is made: it costs a look at the family
    mode: Mode | None = None
    member: tuple[str, str | None] | None = None  # the one member of merged siblings it shows
    _sig: View | None = None
    _named: tuple[tuple[str, str | None] | None] | None = None

    @property
    def current(self) -> bool:
        return self.bound.stale != "missing"

    def view(self) -> View | None:
        """The view this item shows in its mode (None: dropped for the budget)."""
        if self.mode is None:
            return None
        if self.mode == "sig":
            if self._sig is None:
                self._sig = signature(self.bound.view, self.chunk.symbol, self.chunk.lang)
            return self._sig
        return self.bound.view

    def named(self, words: Sequence[str]) -> tuple[str, str | None] | None:
        """The member it is named after: the one it shows, else the one `words` name most of the
        siblings merged in its chunk (`members.named`; worked out once, a budget costs the
        answer many times)."""
        if self.member is not None:
            return self.member
        if self._named is None:
            self._named = (named(self.chunk, words, self.bound.view),)
        return self._named[0]


class Overhead(Protocol):
    """What the answer prints besides the code, in tokens: for each result (its metadata and
    commentary), and `note`, for the note saying results were left out when the format prints it
    among the results (JSON's `notes`)."""

    note: int

    def __call__(self, result: Result, /) -> int: ...


@dataclass
class Packed:
    results: list[Result]
    left: int = 0  # results within `k` the budget left out, not even a signature printed


def left_out(n: int) -> str:
    """The note for `n` results the budget left out."""
    return f"{n} more result{'s' if n != 1 else ''} did not fit the token budget: a larger budget shows them"


def pack(hits: list[Hit], source: ChunkSource | Sequence[ChunkSource], budget: int | None,
         k: int | None = None, overhead: Overhead | None = None,
         words: Sequence[str] = (), asked: Asked = None) -> list[Result]:  # fmt: skip
    """`packed`'s results."""
    return packed(hits, source, budget, k, overhead, words, asked).results


def packed(hits: list[Hit], source: ChunkSource | Sequence[ChunkSource], budget: int | None,
           k: int | None = None, overhead: Overhead | None = None,
           words: Sequence[str] = (), asked: Asked = None) -> Packed:  # fmt: skip
    """The answer for `hits` (best first) within `budget` tokens (None: everything verbatim), at most
    `k` results once overlapping hits are merged; with several bundles, `source` has one source
    per bundle and each hit's `origin` says which. `words`: the query's, to name a result holding
    several members after the one they name; `asked`: the name an identifier query asks for, whose
    lines alone a chunk of several members merged shows (`uv_close`, not the 22 prototypes
    around it), or the functions a report's frames name, innermost first (`asked_by`)."""
    sources = source if isinstance(source, Sequence) else [source]
    items = _items(hits, sources, asked)
    for i in items:
        i.mode = "full"
    if k is not None:  # the cut is on results, so k hits merged are not k results (boosts aside)
        items = _new_beyond(items, k)
        ranked = [members for _, members in sorted(_groups(items), key=_rank)
                  if not any(it.hit.full for it in members)]  # fmt: skip
        gone = {id(it) for members in ranked[k:] for it in members}
        items = [i for i in items if id(i) not in gone]
    for i in items:
        i.parent = parent_of(sources[i.hit.origin], i.chunk, i.bound)
    rest = [i for i in items if not i.hit.full]
    if budget is None:
        return Packed(_results(items, words))
    whole, cost = len(_groups(items)), _Cost(overhead, words)
    _spend(rest, items, budget, cost)
    results = _results(items, words)
    if overhead is not None and overhead.note and len(results) < whole:
        _spend(rest, items, budget - overhead.note, cost)  # the note is printed too: room for it
        results = _results(items, words)
    return Packed(results, max(0, whole - len(results)))


def filled(k: int, attempt: Callable[[int], tuple[list[Hit], Packed]]) -> Packed:
    """`k` results when the ranking has them: `attempt(n)` ranks `n` hits (of the candidates
    gathered for `k`) and packs at most `k` results; hits that merge (overlapping lines) leave
    fewer, so the ranking is asked again for twice as many hits, or as many more as were merged
    away twice over if that is more, up to five times (a large file's neighbouring members can
    merge by the dozen). Results the budget left out count: more hits would not print."""
    want = k
    for _ in range(6):
        hits, got = attempt(want)
        ranked, have = sum(not h.full for h in hits), len(got.results) + got.left
        if have >= k or ranked < want:
            break
        want = max(want + 2 * (k - have), 2 * want)
    return got


def _spend(rest: list[_Item], items: list[_Item], budget: int, cost: _Cost) -> None:
    """Tokens in rank order: each result in full while the answer fits, from the first that does
    not, signatures (none in full below an elided one), and from the first whose signature does
    not fit either, nothing; the best is kept at least as a signature (an answer is never empty)
    unless a boosted file took the budget. A user trial asked for ten results in 800 tokens and
    got ten signatures, the best one's 240 lines of code left out to print nine lower ones'
    first lines."""
    for i in rest:
        i.mode = None
    whole = True
    for n, i in enumerate(rest):
        if whole:
            i.mode = "full"
            if cost(items) <= budget:
                continue
            whole = False
        i.mode = "sig"
        if cost(items) > budget:
            if n > 0 or len(rest) < len(items):
                i.mode = None
            break


def _rank(group: tuple[View, list[_Item]]) -> int:
    return min(it.rank for it in group[1])


def _items(hits: list[Hit], sources: Sequence[ChunkSource], asked: Asked = None) -> list[_Item]:
    seen: set[tuple[int, int]] = set()
    out: list[_Item] = []
    for rank, h in enumerate(hits):
        if (h.origin, h.chunk_id) in seen:
            continue
        seen.add((h.origin, h.chunk_id))
        source = sources[h.origin]
        chunk = source.chunk(h.chunk_id)
        if chunk is None:
            continue
        out.append(_own(_Item(rank, h, chunk, source.bind(chunk)), asked))
    return _unframed(out, sources)


def _own(item: _Item, names: Asked) -> _Item:
    """The item cut to the member `names` names, when its chunk merges small siblings (`members.own`)."""
    got = own(item.chunk, item.bound, names, bool(item.hit.explain.get("related")))
    if got is not None:
        item.bound, item.member = got
    return item


def _unframed(items: list[_Item], sources: Sequence[ChunkSource]) -> list[_Item]:
    """The items less those that enclose a better-ranked one (a class skeleton below one of its
    methods): that one's `parent` says where it sits, and its lines are not the answer's."""
    around: set[tuple[int, str]] = set()
    out: list[_Item] = []
    for it in items:
        if it.chunk.anchor is not None and (it.hit.origin, it.chunk.anchor) in around and not it.hit.full:
            continue
        out.append(it)
        c: Chunk | None = it.chunk
        for _ in range(64):  # the chain of enclosing chunks (bounded: a damaged bundle may loop)
            c = sources[it.hit.origin].chunk(c.parent) if c is not None and c.parent is not None else None
            if c is None or c.kind == "file":
                break
            if c.anchor is not None:
                around.add((it.hit.origin, c.anchor))
    return out


def parent_of(source: ChunkSource, chunk: Chunk, bound: Bound) -> Parent | None:
    """The symbol around `chunk` (not its file): the whole span of all its parts, in the same line
    numbering as the chunk's view, and its declaration."""
    p = source.chunk(chunk.parent) if chunk.parent is not None else None
    if p is None or p.kind == "file" or not p.hierarchy:
        return None
    missing = bound.stale == "missing"
    if missing or source.unchanged(p.path):  # indexed lines: from the catalog, no text decoded
        head: View | None = from_chunk(p)
        start, end = source.span(p)
    else:  # its parts and everything inside it (a section's subsections too), as they are now
        views = [v for c in source.family(p) if (v := _view(source, c)) is not None]
        head = _view(source, p)
        if not views:
            return None
        start, end = min(v.start for v in views), max(v.end for v in views)
    if head is None:
        return None
    decl = signature(_declaring_part(source, p, head, missing or source.unchanged(p.path)), p.symbol, p.lang)
    text = "\n".join(t for n, t in decl.rendered() if n is not None)
    label = p.hierarchy[-1].replace(":", " ", 1)
    return Parent(p.path, start, end, p.symbol, p.anchor, p.kind, label, text)


def _declaring_part(source: ChunkSource, p: Chunk, head: View, indexed: bool) -> View:
    """The part of a split symbol whose lines declare it: a class whose doc comment alone fills its
    first part (commons-lang's `StringUtils`, 50 lines of javadoc before `public class`) was shown
    as the parent `/**`. `indexed`: the parts as the bundle has them, else as the tree has them."""
    if _declares(head, p.symbol, p.lang) or not p.anchor or "::" not in p.anchor:
        return head
    path, qual = p.anchor.split("::", 1)
    for cid in later_parts(path, qual, lambda c: source.chunk(c) is not None):
        part = source.chunk(cid)
        view = None if part is None else from_chunk(part) if indexed else _view(source, part)
        if view is not None and _declares(view, p.symbol, p.lang):
            return view
    return head


def _declares(view: View, name: str, lang: str) -> bool:
    texts = [t for n, t in view.rendered() if n is not None]
    at = declaring(texts, name, lang)
    return at is not None and not commented(texts[at], lang)


def _view(source: ChunkSource, c: Chunk) -> View | None:
    """A part's view as the working tree has it (None: gone from it)."""
    b = source.bind(c)
    return b.view if b.stale != "missing" else None


def _new_beyond(items: list[_Item], k: int) -> list[_Item]:
    """The items, less those ranked past the first `k` hits that show a line an item before them
    shows. Past `k` are the hits an answer asks for again when its hits merged (`filled`): one
    that merges only lengthens a result already there, and a class's members merged into its
    skeleton round after round (an httpx trial: `SENSITIVE_HEADERS -k 4` printed the whole
    240-line `Headers` class, its outline at `-k 3`)."""
    shown: dict[tuple[int, str, bool], set[int]] = {}
    out = []
    for it in items:  # in rank order, as `_items` makes them
        view = it.view()
        if view is None:
            continue
        lines = shown.setdefault((it.hit.origin, view.path, it.current), set())
        if it.rank >= k and not it.hit.full and not lines.isdisjoint(view.shown):
            continue
        lines.update(view.shown)
        out.append(it)
    return out


def _groups(items: list[_Item]) -> list[tuple[View, list[_Item]]]:
    """Merged views, each with the items it is made of: views of one file merge when they show a
    line in common (a skeleton and its member both show the member's signature; two hits on the
    same lines), never across the indexed/current line numbering of a `missing` result, nor
    across bundles; and parts of one split definition (one anchor) merge wherever they are, so
    that a long function is one of the `k` results, not two or three (pydantic's `Field -k 2`
    was its first and its fifth part). Ranges that overlap are not enough: module code's range
    spans the functions it elides, and a hit on one of them is that function, not the file
    around it (merged, one `_make.py` answer was lines 21-3084)."""
    pieces = [((it.hit.origin, v.path, it.current), v, it) for it in items if (v := it.view()) is not None]
    pieces.sort(key=lambda p: (p[0], p[1].start, p[1].end))
    root = list(range(len(pieces)))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    for i, (key, view, _) in enumerate(pieces):
        for j in range(i + 1, len(pieces)):
            other_key, other, _ = pieces[j]
            if other_key != key or other.start > view.end:
                break
            if not view.shown.keys().isdisjoint(other.shown.keys()):
                root[find(j)] = find(i)
    parts: dict[tuple[tuple[int, str, bool], str], int] = {}
    for i, (key, _, it) in enumerate(pieces):  # parts of one split definition: one result, not two
        anchor = it.member[1] if it.member is not None else it.chunk.anchor
        if anchor is not None and "::" in anchor:
            root[find(i)] = find(parts.setdefault((key, anchor), i))
    groups: dict[int, list[int]] = {}
    for i in range(len(pieces)):
        groups.setdefault(find(i), []).append(i)
    return [(merge([pieces[i][1] for i in g]), [pieces[i][2] for i in g]) for g in groups.values()]


class _Cost:
    """Tokens of the answer: merged views' code (remembered by the views they merge, since packing
    re-costs the answer once per decision and most groups are unchanged) plus each result's
    printed metadata and commentary when `overhead` says how much."""

    def __init__(self, overhead: Overhead | None, words: Sequence[str]) -> None:
        self._groups: dict[tuple[int, ...], int] = {}
        self._overhead = overhead
        self._words = words

    def __call__(self, items: list[_Item]) -> int:
        total = 0
        groups = _groups(items)
        for view, members in groups:
            key = tuple(id(it.view()) for it in members)
            if key not in self._groups:
                self._groups[key] = view_tokens(view)
            total += self._groups[key]
        if self._overhead is not None:
            total += sum(self._overhead(r) for r in _results(items, self._words, groups))
        return total


def _parts(best: _Item, members: list[_Item]) -> tuple[int, ...]:
    """The part numbers of `best`'s split symbol among `members`, when more than one merged."""
    parts = {
        p[0] for it in members if it.chunk.anchor == best.chunk.anchor and (p := part_of(it.chunk.header))
    }
    return tuple(sorted(parts)) if len(parts) > 1 else ()


def _results(items: list[_Item], words: Sequence[str],
             groups: list[tuple[View, list[_Item]]] | None = None) -> list[Result]:  # fmt: skip
    ranked: list[tuple[int, Result]] = []
    for view, members in groups if groups is not None else _groups(items):
        best = min(members, key=lambda it: it.rank)
        stale: Stale = best.bound.stale
        if stale is None and any(it.bound.stale == "moved" for it in members):
            stale = "moved"
        ids = [it.chunk.id for it in sorted(members, key=lambda it: it.rank)]
        elided = best.mode == "sig" and best.view() is not best.bound.view  # cut, not short
        member = best.named(words)
        result = Result(
            view, best.chunk, best.hit, elided, stale, best.parent, ids, member, _parts(best, members)
        )
        ranked.append((best.rank, result))
    return [r for _, r in sorted(ranked, key=lambda t: t[0])]
