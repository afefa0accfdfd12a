"""A query word's other forms that the index holds: `streaming` also finds `streams`, `validators`
`validation`, `routing` `routes`.

The index keeps words as written (an identifier must match exactly, and other indexed terms would
be another bundle format), so forms are joined at query time: the word's Snowball stem, the
index's words that begin with it (tantivy's term dictionary, by prefix) and have the same stem,
each searched too at a lower weight. Only a sentence's words get them (`search.expanded`); an
identifier is searched as written. Measured in bench/RESULTS.md (2026-11-25).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

WEIGHT = 0.5  # a form's boost, times its field's, against the word as written
_MIN = 4  # shorter words (`get`, `set`, `id`) have too many unrelated forms
_LIMIT = 200  # index words read per prefix, the most frequent first


@cache
def _stemmer() -> Any:
    """Made on first use: the package imports its ~30 languages (~20 ms), which a process that
    asks no sentence (a hook, an identifier query) need not pay."""
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=1 << 14)
def stem(word: str) -> str:
    s: str = _stemmer().stemWord(word)
    return s


def forms(word: str, prefixed: Callable[[str, int], list[str]]) -> list[str]:
    """The index's other words with `word`'s stem; `prefixed(prefix, limit)` lists the index's
    words that start with `prefix`. Only plain alphabetic words of `_MIN` letters or more."""
    if len(word) < _MIN or not word.isalpha() or not word.isascii():
        return []
    root = stem(word)
    # Snowball's `happi` is also the stem of `happy`, which does not start with it
    prefix = root[:-1] if root.endswith("i") else root
    if len(prefix) < 3:
        return []
    return sorted(t for t in prefixed(prefix, _LIMIT) if t != word and t.isalpha() and stem(t) == root)
