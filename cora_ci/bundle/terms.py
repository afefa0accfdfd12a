r"""Identifier-aware terms, the same for the index and the query: an identifier is a term whole
and as its parts (`parseHeaderLinks` and `parse_header_links` both give `parse`, `header`,
`links`). `field_text` hands tantivy a field's terms separated by spaces, which its whitespace
tokenizer takes as they are: a document's terms are `terms` of its text by construction, and
indexing costs a third of what tantivy's regex tokenizer did (the segments are the same bytes:
that tokenizer, `[\p{L}\p{N}_]+` and lower case, over the text and its compound words' parts)."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from itertools import chain

from cora_ci.files.text import word_runs

_WORD = re.compile(r"\w+")
_NOT_WORD = re.compile(r" +")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^\W\d_A-Za-z]+")


def terms(text: str) -> list[str]:
    """Lower-cased words of `text`, each identifier followed by its camelCase / snake_case parts."""
    out: list[str] = []
    for word in _WORD.findall(text):
        out.extend(_word_terms(word))
    return out


@lru_cache(maxsize=1 << 18)
def _word_terms(word: str) -> tuple[str, ...]:
    """Code repeats its identifiers, so each distinct word is split once."""
    if word.isascii():
        return tuple(_ascii_terms(word).split())
    out: list[str] = []
    for w in _words(word):
        out.append(_lower(w))
        parts = _PART.findall(w)
        if len(parts) > 1:
            out.extend(_lower(p) for p in parts)
    return tuple(out)


def _ascii_terms(word: str) -> str:
    """An ASCII word's terms joined by spaces: the word, then its camelCase / snake_case parts
    when it has several, all lower-cased in one call."""
    parts = _PART.findall(word)
    return word.lower() if len(parts) < 2 else f"{word} {' '.join(parts)}".lower()


def _words(match: str) -> list[str]:
    """A non-ASCII Python `\\w+` match split into words of letters, digits and `_`
    (`[\\p{L}\\p{N}_]+`, the pattern of tantivy's tokenizer that indexed bundles before): Python's
    `\\w` also takes a few symbols with a numeric value (`㊀`), which end a word there."""
    return [w for w in _NOT_WORD.split("".join(c if _is_word(c) else " " for c in match)) if w]


def _is_word(c: str) -> bool:
    return c == "_" or unicodedata.category(c)[0] in "LN"


def _lower(s: str) -> str:
    """Lower case one character at a time, as tantivy's lower-caser did (no final-sigma rule)."""
    return s.lower() if s.isascii() else "".join(c.lower() for c in s)


def field_text(text: str) -> str:
    """`terms(text)` joined by spaces: what tantivy's whitespace tokenizer indexes as they are.
    Every document field of a build goes through here, so the text is cut on its UTF-8 bytes
    (`word_runs`) and each distinct run's terms looked up whole (~2.4x faster than `\\w+` over
    the str and a lookup a word); a run with non-ASCII bytes is split by `\\w+` when first seen."""
    if len(_RUNS) > _RUNS_LIMIT:
        _RUNS.clear()
    return " ".join(filter(None, map(_RUNS.__getitem__, word_runs(text).split())))


class _Runs(dict[bytes, str]):
    """A run of word bytes -> its terms joined by spaces ("" for a run of no word: `—`)."""

    def __missing__(self, run: bytes) -> str:
        if run.isascii():  # one word, not through `_word_terms`' cache and tuple: ~1.5x a cold process
            out = _ascii_terms(run.decode("ascii"))
        else:
            words = _WORD.findall(run.decode("utf-8", "surrogatepass"))
            out = " ".join(chain.from_iterable(map(_word_terms, words)))
        self[run] = out
        return out


_RUNS = _Runs()
_RUNS_LIMIT = 1 << 18  # distinct runs remembered (then forgotten at once): as many as `_word_terms` keeps
