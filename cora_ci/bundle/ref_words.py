"""A chunk's references as stored (format 12.0): places among the words of its own text.

An update re-resolves the graph edges of files that use a name whose definitions changed, from the
names each of their chunks uses (`FileLinks.refs`), so those are stored with each file. Stored as
strings they were two fifths of a file's blob, 5% of a bundle (axum: 95 of 231 KB of blobs,
compressed). Every name a chunk uses is written in its code: stored as the gaps between their
places among the distinct words (`\\w+`) of the chunk's text, in the order they first occur, small
integers that pack in a byte, they cost a quarter of that (axum's blobs 231 -> 160 KB). A name
that is not one of those words (a Ruby `empty?`, a redacted line) is kept as its string after
the places. Reading them needs the chunk's text, which only an update's re-resolution and a few
answers (`related`, `diff`) ask for: `LazyRefs` decodes a file's on first use (a test file's names
for the code it is named for are found in its code instead: `tested.used_like`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any


def encode(names: Sequence[str], text: str) -> list[int | str]:
    """`names` (sorted, distinct: `FileLinks.refs`' lists) as gaps between their places among the
    distinct words of `text` in the order they first occur, then those that are no word of it."""
    if not names:
        return []
    words = words_of(text)
    place = {w: i for i, w in enumerate(words)}
    at = sorted(place[n] for n in names if n in place)
    out: list[int | str] = [b - a for a, b in zip([-1, *at], at, strict=False)]
    out += [n for n in names if n not in place]
    return out


def decode(stored: Sequence[Any], text: str) -> list[str]:
    """The names `encode` stored for a chunk of `text`, sorted (ValueError if they do not fit it)."""
    if not stored:
        return []
    words = words_of(text)
    names: list[str] = []
    at = -1
    for v in stored:
        if isinstance(v, str):
            names.append(v)
            continue
        at += v
        if not (type(v) is int and v > 0 and at < len(words)):
            raise ValueError("a reference's place is not a word of its chunk")
        names.append(words[at])
    return sorted(names)


def words_of(text: str) -> list[str]:
    """The distinct words (`\\w+`) of `text` in the order they first occur: ASCII code (nearly all
    of it) cut by a table in C, twice as fast as the pattern, which cuts the rest the same way."""
    cut = text.translate(_NOT_WORD).split() if text.isascii() else _WORD.findall(text)
    return list(dict.fromkeys(cut))


_WORD = re.compile(r"\w+")
_NOT_WORD = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isalnum() or c == "_")})


def spelled(refs: Mapping[int, list[str]]) -> list[str]:
    """The names among `refs` that are stored as strings, no word of their chunk's text, read
    without the texts (all of them where `refs` is not stored: a fresh file's)."""
    if isinstance(refs, LazyRefs):
        return [v for s in refs.stored for v in s if isinstance(v, str)]
    return [n for names in refs.values() for n in names]


class LazyRefs(Mapping[int, list[str]]):
    """A file's chunk id -> names it uses, decoded from `stored` (by chunk position) against its
    chunks' texts (`texts()`) when first read; CORA-BND-004 naming `path` if they do not fit."""

    def __init__(self, path: str, ids: list[int], stored: list[Any], texts: Callable[[], list[str]]) -> None:
        self._path, self._ids, self.stored, self._texts = path, ids, stored, texts
        self._refs: dict[int, list[str]] | None = None

    def _decoded(self) -> dict[int, list[str]]:
        if self._refs is None:
            from cora_ci.errors import CoraError

            try:
                texts = self._texts()
                if len(texts) != len(self.stored):
                    raise ValueError("one text per chunk expected")
                self._refs = {self._ids[i]: decode(s, texts[i]) for i, s in enumerate(self.stored) if s}
            except (ValueError, TypeError, KeyError) as e:
                msg = f"the shard row of {self._path!r}: references unreadable: {e}"
                raise CoraError("CORA-BND-004", msg) from None
        return self._refs

    def __getitem__(self, cid: int) -> list[str]:
        return self._decoded()[cid]

    def __iter__(self) -> Iterator[int]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())
