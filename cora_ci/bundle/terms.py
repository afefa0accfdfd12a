"""Identifier-aware terms, the same for the index and the query: an identifier is a term whole
and as its parts (`parseHeaderLinks` and `parse_header_links` both give `parse`, `header`,
`links`). tantivy splits text into lower-cased words itself (in Rust, `TOKEN`); `field_text`
appends the extra parts of compound words to a field, so a document's terms are exactly what
`terms` yields for a query."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

TOKEN = r"[\p{L}\p{N}_]+"  # tantivy's (Rust) word pattern; `_words` mirrors it
_WORD = re.compile(r"\w+")
_COMPOUND = re.compile(r"\b\w*[^\Wa-z]\w*")  # the \w+ words holding anything but a-z
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
    out: list[str] = []
    for w in _words(word):
        out.append(_lower(w))
        parts = _PART.findall(w)
        if len(parts) > 1:
            out.extend(_lower(p) for p in parts)
    return tuple(out)


@lru_cache(maxsize=1 << 18)
def _extra_parts(word: str) -> tuple[str, ...]:
    """The parts of a word's compound sub-words, as written (tantivy lower-cases them)."""
    out: list[str] = []
    for w in _words(word):
        parts = _PART.findall(w)
        if len(parts) > 1:
            out.extend(parts)
    return tuple(out)


def _words(match: str) -> list[str]:
    """A Python `\\w+` match as tantivy's `[\\p{L}\\p{N}_]+` splits it: Python's `\\w` also takes a few
    symbols with a numeric value (`㊀`), which end a word there. (A character newer than Python's
    Unicode tables may still be split differently.)"""
    if match.isascii():
        return [match]
    return [w for w in _NOT_WORD.split("".join(c if _is_word(c) else " " for c in match)) if w]


def _is_word(c: str) -> bool:
    return c == "_" or unicodedata.category(c)[0] in "LN"


def _lower(s: str) -> str:
    """Lower case one character at a time, as tantivy does (no final-sigma rule)."""
    return s.lower() if s.isascii() else "".join(c.lower() for c in s)


def field_text(text: str) -> str:
    """`text` and then the parts of its compound words: what tantivy's word tokenizer and
    lower-caser turn into exactly `terms(text)`."""
    extra: list[str] = []
    for word in _COMPOUND.findall(text):  # a word of lower-case ASCII letters has no parts
        extra.extend(_extra_parts(word))
    return f"{text}\n{' '.join(extra)}" if extra else text
