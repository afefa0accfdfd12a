"""A query word's other forms that the index holds: `streaming` also finds `streams`, `validators`
`validation`, `routing` `routes`.

The index keeps words as written (an identifier must match exactly, and other indexed terms would
be another bundle format), so forms are joined at query time: the word's Snowball stem, the
index's words that begin with it (tantivy's term dictionary, by prefix) and have the same stem,
each searched too at a lower weight. Only a sentence's words get them (`search.bm25`); an
identifier is searched as written. Measured in bench/RESULTS.md (2026-11-25).

Two adjacent words are also one identifier's other form: "client session" is `ClientSession`,
"as dict" `asdict`, "file name" `filename` (an identifier is indexed whole beside its parts, so
the index holds `clientsession`). A phrase that spells an identifier says more than its two words
apart; the pairs the index holds are searched at the same lower weight (2026-11-27). An article
between the two is passed over: a name drops it ("as a dict" is `asdict`, "is an instance"
`isinstance`, "read a line" `readline`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, lru_cache
from itertools import pairwise
from typing import Any

WEIGHT = 0.5  # a form's boost, times its field's, against the word as written
_MIN = 4  # shorter words (`get`, `set`, `id`) have too many unrelated forms
_LIMIT = 200  # index words read per prefix, the most frequent first
_JOINED_MIN = 5  # shorter joined pairs (`a` + `b`, `is` + `a`) name nothing
_WORDS = re.compile(r"[^\W_]+")  # `header_rows` is two words: `HeaderRows` is `headerrows`
_ARTICLES = frozenset(("a", "an", "the"))  # what a name leaves out between its words


@cache
def _stemmer() -> Any:
    """tantivy's English Snowball stemmer (rust-stemmers, in the tantivy wheel): the stems of the
    `snowballstemmer` package (checked word for word on 33,000 words), 50x faster, no ~20 ms of
    importing its ~30 languages."""
    import tantivy

    words = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw())  # a word in, its stem out
    return words.filter(tantivy.Filter.stemmer("english")).build()


@lru_cache(maxsize=1 << 14)
def stem(word: str) -> str:
    got: list[str] = _stemmer().analyze(word)
    return got[0] if got else word


def forms(word: str, prefixed: Callable[[str, int], list[str]]) -> list[str]:
    """The index's other words with `word`'s stem, or with the stem of its other spelling (British
    `tokeniser`, `colour` for American `tokenizer`, `color`, and back: jsoup's `TokeniserState`
    for "HTML tokenizer states"); `prefixed(prefix, limit)` lists the index's words that start with
    `prefix`. Only plain alphabetic words of `_MIN` letters or more."""
    if len(word) < _MIN or not word.isalpha() or not word.isascii():
        return []
    found = set(_same_stem(word, prefixed))
    if (other := _spelled(word)) is not None:
        found.update(_same_stem(other, prefixed))
    return sorted(found - {word})


# British and American spellings of one word, swapped (each side of a pair a regex and its replacement)
_SPELLINGS = (
    (re.compile(r"(?<=[a-z]{3})is(e|er|ers|es|ed|ing|ation|ations|able)$"), r"iz\1"),
    (re.compile(r"(?<=[a-z]{3})iz(e|er|ers|es|ed|ing|ation|ations|able)$"), r"is\1"),
    (re.compile(r"(?<=[a-z])ys(e|er|ers|es|ed|ing)$"), r"yz\1"),
    (re.compile(r"(?<=[a-z])yz(e|er|ers|es|ed|ing)$"), r"ys\1"),
    (re.compile(r"(?<=[a-z]{3})our(s|ed|ing)?$"), r"or\1"),
    (re.compile(r"(?<=[a-z]{3})or(s|ed|ing)?$"), r"our\1"),
)


def _spelled(word: str) -> str | None:
    """`word` in the other spelling, British or American (`serialise` <-> `serialize`, `analyse`
    <-> `analyze`, `behaviour` <-> `behavior`), or None."""
    for pattern, swapped in _SPELLINGS:
        other = pattern.sub(swapped, word)
        if other != word:
            return other
    return None


def _same_stem(word: str, prefixed: Callable[[str, int], list[str]]) -> list[str]:
    """The index's words with `word`'s stem (`word` too, if the index holds it)."""
    root = stem(word)
    # Snowball's `happi` is also the stem of `happy`, which does not start with it
    prefix = root[:-1] if root.endswith("i") else root
    if len(prefix) < 3:
        return []
    return [t for t in prefixed(prefix, _LIMIT) if t.isalpha() and stem(t) == root]


def joined(text: str, holds: Callable[[str], bool]) -> list[str]:
    """Two adjacent words of `text` written as one, where the index `holds` it (`client session`:
    `clientsession`, and `fixed_width`: `FixedWidth`'s `fixedwidth`), an article between them
    passed over and joining nothing itself (`as a dict`: `asdict`, not `adict`), in the order
    written, each once; a word of other letters or with digits (`café`, `utf8`) joins nothing."""
    found = _WORDS.findall(text.lower())
    words = [w if w.isascii() and w.isalpha() else "" for w in found if w not in _ARTICLES]
    pairs: dict[str, None] = {}
    for a, b in pairwise(words):
        if a and b and len(a) + len(b) >= _JOINED_MIN:
            pairs[a + b] = None
            if len(root := stem(b)) >= 3 and root != b:  # "key mappings": `keymap`, "file names": `filename`
                pairs[a + root] = None
    return [p for p in pairs if holds(p)]
