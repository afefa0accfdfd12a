"""One member's lines in a chunk of merged siblings (small members chunked together: one-line
methods, a C header's prototypes, `@overload` stubs with their implementation): from the line
declaring it, with the attribute, decorator and comment lines just above, to the line before the
next sibling's. What a result cut to its member, `show`, `outline` and `related` print."""

from __future__ import annotations

from cora_ci.chunking.model import OVERLOAD, Chunk
from cora_ci.files.langs import JS_LANGS
from cora_ci.rebind.view import View, declaring, indentation, mentions

_ATTACHED = ("@", "#", "//", "/*", "*", "[", "--")
# JavaScript's `#` begins a private member's name (`#routes = []`), no comment or attribute
_ATTACHED_JS = tuple(p for p in _ATTACHED if p != "#")


def implementation(view: View, chunk: Chunk, family: str) -> tuple[str, View]:
    """Of the overloads anchored `family` plus a parameter list that share `chunk` (Python's
    `@overload` stubs merged with the function that implements them, TypeScript's signatures),
    the implementation's anchor: a member with a body before a stub, then the longest, then the
    last (a language that has stubs puts the implementation after them); `family` itself when
    none is there. And the lines of them all, first to last: the family, not its neighbours
    (an httpx trial's `Pool.get` came back with the `put` merged after it)."""
    members = [a for a in chunk.anchors if a.startswith(family) and OVERLOAD.sub("", a) == family]
    views = [sibling(view, chunk, a) for a in members]
    if not members:
        return family, view
    ranked = [(stub(v, chunk.lang), -len(v.shown), -i) for i, v in enumerate(views)]
    best = min(range(len(members)), key=ranked.__getitem__)
    first, last = min(v.start for v in views), max(v.end for v in views)
    span = {n: t for n, t in view.shown.items() if first <= n <= last}
    return members[best], View(view.path, first, last, span)


def stub(view: View, lang: str) -> bool:
    """A declaration without a body: Python's `@overload`, a TypeScript signature (no `{`)."""
    lines = [t.strip() for _, t in sorted(view.shown.items()) if t.strip()]
    if any(t.startswith(("@overload", "@typing.overload", "@t.overload")) for t in lines):
        return True
    code = [t for t in lines if not t.startswith(("//", "/*", "*"))]  # a JSDoc's `{@link}` is no body
    return lang in JS_LANGS and bool(code) and not any("{" in t for t in code)


def naming_member(view: View, chunk: Chunk, name: str) -> tuple[str, str, View] | None:
    """Of small siblings merged in `chunk`, the one member whose own lines name `name` (its
    symbol, anchor and lines); None when none or several do."""
    members = list(zip(chunk.symbols, chunk.anchors, siblings(view, chunk), strict=True))
    naming = [(s, a, v) for s, a, v in members if any(mentions(t, name) for _, t in v.rendered())]
    return naming[0] if len(naming) == 1 else None


def sibling(view: View, chunk: Chunk, anchor: str) -> View:
    """One symbol's lines in a chunk of merged siblings: from the line declaring it (with attribute,
    decorator and comment lines just above) to the line before the next sibling's. By its anchor's
    place among the chunk's, so of two overloads of one name the second is the second."""
    rows = sorted(view.shown.items())
    if not rows:
        return view
    k = chunk.anchors.index(anchor) if anchor in chunk.anchors else 0
    return _cut(view, rows, _declarations(rows, chunk.symbols[: k + 2], chunk.lang), k, chunk.lang)


def siblings(view: View, chunk: Chunk) -> list[View]:
    """`sibling`'s lines of each of the chunk's anchors, in their order, the declarations found in
    one pass (each member's own search is quadratic in the members: 2.7 ms for requests' fourteen
    exceptions)."""
    rows = sorted(view.shown.items())
    if not rows:
        return [view for _ in chunk.anchors]
    starts = _declarations(rows, chunk.symbols[: len(chunk.anchors) + 1], chunk.lang)
    return [_cut(view, rows, starts, k, chunk.lang) for k in range(len(chunk.anchors))]


def _cut(view: View, rows: list[tuple[int, str]], starts: list[int | None], k: int, lang: str) -> View:
    """The `k`-th member's lines of `rows`, given where each member is declared (`starts`)."""
    mine, after = starts[k], starts[k + 1] if k + 1 < len(starts) else None
    at = _opened(rows, mine, 0) if mine is not None else 0
    nxt = _opened(rows, after, at + 1) if after is not None and after > at else len(rows)
    attached = _ATTACHED_JS if lang in JS_LANGS else _ATTACHED
    while nxt - 1 > at and rows[nxt - 1][1].lstrip().startswith(attached):
        nxt -= 1
    while at > 0 and rows[at - 1][1].lstrip().startswith(attached):
        at -= 1
    keep = rows[at:nxt]
    while len(keep) > 1 and not keep[-1][1].strip():
        keep.pop()
    return View(view.path, keep[0][0], keep[-1][0], dict(keep))


def _opened(rows: list[tuple[int, str]], at: int, floor: int) -> int:
    """Where the declaration named on row `at` begins: that row, or where it closes a body (C's
    `} uv_timespec64_t;` after an anonymous `typedef struct {`), the row opening it (not before
    `floor`), braces counted back."""
    if not rows[at][1].lstrip().startswith("}"):
        return at
    depth = 0
    for j in range(at, floor - 1, -1):
        depth += rows[j][1].count("}") - rows[j][1].count("{")
        if depth <= 0:
            return j
    return at


def _declarations(rows: list[tuple[int, str]], names: list[str], lang: str) -> list[int | None]:
    """The row declaring each of `names`, siblings in source order: the first row after the
    previous sibling's that declares it at the first sibling's indentation (a body's deeper rows
    may call the next sibling, `return !isOpen();`, or quote it, `return "bar()";`), else at any
    (`declaring`: a comment on an earlier sibling's row may name a later one), else any row
    declaring it (None: none names it)."""
    texts = [t for _, t in rows]
    out: list[int | None] = []
    i = 0
    level: int | None = None  # the siblings' indentation
    for name in names:
        at = declaring(texts, name, lang, i, level) if level is not None else None
        if at is None:
            at = declaring(texts, name, lang, i)
        if at is None:
            at = declaring(texts, name, lang)
        out.append(at)
        if at is not None:
            i = at + 1
            level = indentation(texts[at]) if level is None else level
    return out
