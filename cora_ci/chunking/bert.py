"""BERT's uncased WordPiece tokenizer (all-MiniLM-L6-v2's vocabulary) in plain Python: how many
tokens a text has and where each starts, for chunk budgets.

It does what `tokenizers`' `BertWordPieceTokenizer(vocab, lowercase=True)` does, rule for rule:
special tokens (`[CLS]`, ...) matched in the raw text; the normaliser (control characters and
U+FFFD dropped, whitespace made a space, CJK ideographs set apart, accents stripped by NFD, each
character lower-cased on its own, as Rust's `char::to_lowercase`); the pre-tokenizer (split at
whitespace, every punctuation mark a word, ASCII symbols included); WordPiece (greedy longest
match, `##` continuations, a word over 100 characters or with an unknown piece one `[UNK]`).
Property tests hold it to that library (tests/test_properties.py) on every character Unicode had
assigned by 3.2 and has not moved to another category since: the library's character classes
come from Unicode 9's tables and ours from Python's, so a character assigned or reclassified since
may be counted differently (a chunk a token longer or shorter, never a lost line). In Python so
that chunking needs no tokenizer library: a hook's environment leaves `tokenizers` and the Hugging
Face client it pulls in to the `minilm` extra, and a process that chunks reads a vocabulary
(~5 ms) instead of loading a tokenizer (~70 ms).

Counting needs no offsets: each distinct character of a text is normalised once and the text
rewritten by one `str.translate` (punctuation and ideographs padded with spaces, so `split()` is
the pre-tokenizer). `starts` keeps each token's offset in the raw text, for cutting an over-long
line: plain ASCII by one regular expression, other text a character at a time.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from functools import lru_cache, partial

SPECIAL = re.compile(r"\[(?:PAD|UNK|CLS|SEP|MASK)\]")  # matched before normalising, case and all
_MAX_CHARS = 100  # WordPiece's max_input_chars_per_word
# Unicode's White_Space (Rust's char::is_whitespace), not str.isspace: U+001C-U+001F are not in it.
_WHITE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                   "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")  # fmt: skip
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))  # fmt: skip
# Controls, format characters, private use, surrogates: dropped; an unassigned code point is kept.
_CONTROL = frozenset(("Cc", "Cf", "Co", "Cs"))
# Text that normalises to itself, lower-cased (printable ASCII and whitespace), and its words
# (runs of letters and digits, each other printable character a word of its own).
NOT_PLAIN = re.compile(r"[^\t\n\r\x20-\x7e]")
PLAIN_WORDS = re.compile(r"[a-z0-9]+|[^a-z0-9\s]")
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def wordpiece(word: str, vocab: dict[str, int]) -> list[int]:
    """BERT's greedy longest-match-first split of one lower-case word into vocabulary ids; none
    when a piece is not in the vocabulary (BERT then gives the word one unknown token)."""
    if word in vocab:
        return [vocab[word]]
    return [i for _, i in _pieces(word, vocab)]


def piece_starts(word: str, vocab: dict[str, int]) -> list[int]:
    """Where each of `word`'s tokens starts in it: [0] for a word that is one token or `[UNK]`."""
    if len(word) > _MAX_CHARS or word in vocab:
        return [0]
    return [start for start, _ in _pieces(word, vocab)] or [0]


def _pieces(word: str, vocab: dict[str, int]) -> list[tuple[int, int]]:
    """(start, id) of each WordPiece piece of `word`; none if one is unknown."""
    out: list[tuple[int, int]] = []
    start, n = 0, len(word)
    while start < n:
        end = n
        while end > start:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                out.append((start, vocab[piece]))
                break
            end -= 1
        else:
            return []
        start = end
    return out


def word_count(word: str, vocab: dict[str, int]) -> int:
    """Tokens of one pre-tokenized word."""
    if len(word) > _MAX_CHARS:
        return 1
    return len(wordpiece(word, vocab)) or 1


@lru_cache(maxsize=1 << 16)
def normal(c: str) -> str:
    """One raw character as the normaliser and the pre-tokenizer leave it: "" (dropped), " ", or its
    text with each punctuation mark (and an ideograph) between spaces, so that `split()` isolates it."""
    if c == "\x00" or c == "\ufffd" or (c not in "\t\n\r" and unicodedata.category(c) in _CONTROL):
        return ""
    if c in _WHITE:
        return " "
    code = ord(c)
    cjk = any(lo <= code <= hi for lo, hi in _CJK)
    text = "".join(ch for ch in unicodedata.normalize("NFD", c) if unicodedata.category(ch) != "Mn")
    text = "".join(f" {ch} " if _punct(ch) else ch for ch in text.lower())
    return f" {text} " if cjk else text


def _punct(c: str) -> bool:
    return c in _ASCII_PUNCT or unicodedata.category(c)[0] == "P"


def pretokenized(text: str) -> list[str]:
    """The words of `text` (no special token in it) as WordPiece receives them."""
    table = {ord(c): normal(c) for c in set(text)}
    return text.translate(table).split()


def segments(text: str) -> Iterator[tuple[int, str, bool]]:
    """(offset, part, is a special token) of `text`, in order."""
    pos = 0
    for m in SPECIAL.finditer(text):
        if m.start() > pos:
            yield pos, text[pos : m.start()], False
        yield m.start(), m.group(), True
        pos = m.end()
    if pos < len(text):
        yield pos, text[pos:], False


def count(text: str, vocab: dict[str, int], counted: Callable[[str], int] | None = None) -> int:
    """Tokens of `text`, as the tokenizer counts them without [CLS] and [SEP]; `counted` gives a
    pre-tokenized word's (default `word_count`; a cache of it where words repeat)."""
    words = counted or partial(word_count, vocab=vocab)
    return sum(1 if special else sum(map(words, pretokenized(part))) for _, part, special in segments(text))


def starts(text: str, vocab: dict[str, int]) -> list[int]:
    """Each token's offset in `text` (a special token's, a piece's first character's)."""
    out: list[int] = []
    for base, part, special in segments(text):
        if special:
            out.append(base)
            continue
        if not NOT_PLAIN.search(part):  # plain ASCII: the words are runs of letters and digits, and marks
            for m in PLAIN_WORDS.finditer(part.lower()):
                out.extend(base + m.start() + s for s in piece_starts(m.group(), vocab))
            continue
        chars: list[str] = []  # the normalised text, and where each of its characters came from
        where: list[int] = []
        for i, c in enumerate(part, start=base):
            n = normal(c)
            chars.append(n)
            where.extend([i] * len(n))
        flat = "".join(chars)
        for m in re.finditer(r"\S+", flat):
            out.extend(where[m.start() + s] for s in piece_starts(m.group(), vocab))
    return out
