"""The one member a result of merged siblings shows: small members (one-line methods, a C header's
prototypes) are chunked together, and a result whose chunk holds the member a query names (its
identifier, a report's frame, a name whose callers it asks for) is that member's own lines, named
after it, not the chunk named after its first member."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cora_ci.chunking.model import OVERLOAD, Chunk
from cora_ci.rebind.bind import Bound
from cora_ci.rebind.view import View
from cora_ci.render.siblings import implementation, naming_member, sibling, siblings

if TYPE_CHECKING:
    from cora_ci.retrieval.query import Query

# the name a query asks for, or its frames' functions with their files' stems (`asked_by`)
Asked = str | tuple[tuple[str | None, str], ...] | None
Member = tuple[str, str | None]  # a member's symbol and anchor


def asked(q: Query) -> str | None:
    """The name a query asks for, as it is qualified (`Auth.login`, `login`): an identifier's, or
    that of the one identifier a sentence asks about ("where is `uv_close` defined")."""
    parts = q.identifier or q.named
    return ".".join(parts) if parts else None


def asked_by(q: Query, text: str) -> Asked:
    """What a query (`text`, as `q` analyses it) names for a result of merged siblings to be cut to
    (`own`): the functions its traceback's frames are in, innermost first (okio's `at
    okio.Buffer.readByte(Buffer.java:237)` is `readByte`'s line among the twenty one-line members
    merged around it, not the first of them), then the name it asks for."""
    from cora_ci.retrieval.frames import clues

    named = asked(q)
    frames = tuple(dict.fromkeys(
        (c.path.replace("\\", "/").rsplit("/", 1)[-1].split(".", 1)[0] if c.path else None,
         ".".join(c.dotted[-2:]) if len(c.dotted) > 1 else c.name)
        for c in clues(text) if c.frame and c.name))  # fmt: skip
    if not frames:
        return named
    return (*frames, (None, named)) if named is not None else frames


def own(chunk: Chunk, bound: Bound, names: Asked, related: bool) -> tuple[Bound, Member] | None:
    """The lines and name of the member `names` names (for a report's frames, the first one in a
    file of the chunk's stem that the chunk holds: `Buffer.java`'s frame is `Buffer.kt`'s) when
    `chunk` merges several small siblings and one of them is so named; for a `related` hit, the
    member that names it (`_user`). None: the chunk as it is."""
    c = chunk
    if names is None or len(c.symbols) < 2 or len(c.anchors) != len(c.symbols):
        return None
    if not isinstance(names, str):  # a report's frames: the innermost one in this chunk's file it defines
        stem = c.path.rsplit("/", 1)[-1].split(".", 1)[0]
        first = next((a for s, a in names if s in (None, stem) and a.rsplit(".", 1)[-1] in c.symbols), None)
        return own(chunk, bound, first, related) if first is not None else None
    name = names.rsplit(".", 1)[-1]
    if name not in c.symbols:
        return _user(chunk, bound, name) if related else None
    mine = [a for s, a in zip(c.symbols, c.anchors, strict=True) if s == name]
    qualified = [a for a in mine if _qualified_as(a, names)]
    mine = qualified or mine  # Go's `Viper.Debug` beside the package's `Debug`: the method
    if len({OVERLOAD.sub("", a) for a in mine}) == 1 and len(mine) > 1:  # overloads: all, named
        anchor, family = implementation(bound.view, c, OVERLOAD.sub("", mine[0]))  # after the body
        return Bound(family, bound.stale), (name, anchor)
    return Bound(sibling(bound.view, c, mine[0]), bound.stale), (name, mine[0])


def _user(chunk: Chunk, bound: Bound, name: str) -> tuple[Bound, Member] | None:
    """A caller or callee of `name` ("what uses `keyDelimiter`") among merged siblings: the one
    member whose lines name it, its own lines and named after it (it was named after the chunk's
    first member: viper's `find` for the `split` beside it that uses the constant)."""
    found = naming_member(bound.view, chunk, name)
    if found is None:
        return None
    symbol, anchor, lines = found
    return Bound(lines, bound.stale), (symbol, anchor)


def _qualified_as(anchor: str, asked: str) -> bool:
    """Whether `anchor` (`viper.go::Viper.Debug`) is the name `asked` (`Viper.Debug`, `Debug`)."""
    qual = OVERLOAD.sub("", anchor.split("::", 1)[-1])
    return qual == asked or qual.endswith("." + asked)


def named(chunk: Chunk, words: Sequence[str], view: View | None = None) -> Member | None:
    """For a chunk of several members (small siblings merged), the member the query's `words` name
    most, if it is not the first: each word its name holds counts thrice, one its own lines hold
    (`view`: the chunk's lines) once, a word by its stem (`Auth.login` for a query about logging in,
    not `Auth.hash`; requests' `ChunkedEncodingError`, whose doc says "sent an invalid chunk", for
    "the server sent an invalid chunk", not `InvalidSchema`, the first of fourteen exceptions merged
    whose name holds a word of it)."""
    if len(chunk.symbols) < 2 or not words:
        return None
    from cora_ci.bundle.stems import stem
    from cora_ci.bundle.terms import terms

    wanted = {stem(w.lower()) for w in words}

    def held(text: str) -> int:
        return len(wanted.intersection(stem(t) for t in terms(text)))

    if view is not None and len(chunk.anchors) == len(chunk.symbols):
        own = siblings(view, chunk)
        scores = [2 * held(s) + held(v.text()) for s, v in zip(chunk.symbols, own, strict=True)]
        members: list[Member] = list(zip(chunk.symbols, chunk.anchors, strict=True))
    else:  # no lines to read (or anchors that do not pair with the symbols): by name alone
        members = [(s, _anchor(chunk, s)) for s in chunk.symbols]
        scores = [3 * held(s) for s in chunk.symbols]
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    return members[best] if best > 0 and scores[best] > 0 else None


def _anchor(chunk: Chunk, symbol: str) -> str | None:
    return next((a for a in chunk.anchors if a.endswith(("." + symbol, "::" + symbol))), chunk.anchor)
