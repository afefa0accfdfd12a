"""Token counts from the embedding model's real WordPiece tokenizer, not an estimate.

Counting per line is exact for whole chunks: BERT's pre-tokenizer splits on whitespace, so the
tokens of "a\\nb" are the tokens of "a" followed by those of "b". For the same reason a line's count
is the sum of the counts of its space-separated words, and code repeats its words so much that a
per-word cache answers most lookups. A new plain-ASCII word is split on punctuation exactly as BERT's
pre-tokenizer does and handed to the tokenizer's own WordPiece model, skipping the per-call overhead of
the full pipeline. Both shortcuts are checked against the full tokenizer by a property test.
"""

from __future__ import annotations

import itertools
import re
from functools import cache
from importlib import resources
from typing import Any

# Lines the cache may split itself: ASCII with no control character but tab. BERT's normaliser
# deletes other control characters (joining the words around them), so those lines go to the tokenizer.
_UNSAFE = re.compile(r"[^\t\x20-\x7e]")
_CACHE_LIMIT = 1 << 20  # words; cleared when full, so memory stays bounded on huge corpora
# BERT's pre-tokenizer on ASCII: every non-alphanumeric printable character is a word of its own.
_PIECES = re.compile(r"[a-z0-9]+|[^a-z0-9]")
# A longer text is tokenized window by window: the tokenizer keeps ~0.5 KB per token of a call, so a
# 50 MB line in one call would take gigabytes.
_WINDOW = 1 << 16
_BREAK = re.compile(r"\s|[^\w\s]")  # BERT splits at whitespace and at every punctuation mark


class TokenCounter:
    def __init__(self, tokenizer: Any) -> None:
        self._tk = tokenizer
        self._words: dict[str, int] = {}
        self._wordpiece = tokenizer._tokenizer.model
        # Added tokens ([CLS], [MASK], ...) are matched anywhere before normalisation: such words
        # take the full pipeline.
        self._special = [t.content.lower() for t in tokenizer._tokenizer.get_added_tokens_decoder().values()]

    def count(self, text: str) -> int:
        return len(self._tk.encode(text, add_special_tokens=False).ids)

    def count_lines(self, lines: list[str]) -> list[int]:
        """Exact per-line counts: cached words for plain ASCII lines, the tokenizer for the rest."""
        words = self._words
        if len(words) > _CACHE_LIMIT:
            words.clear()
        split = [None if _UNSAFE.search(line) else line.split() for line in lines]
        new = {w for ws in split if ws is not None for w in ws if w not in words}
        if new:
            tokenize = self._wordpiece.tokenize
            special = [w for w in new if "[" in w and any(t in w.lower() for t in self._special)]
            words.update(zip(special, self._encode_counts(special), strict=True))
            for w in new.difference(special):
                words[w] = sum(len(tokenize(p)) for p in _PIECES.findall(w.lower()))
        other = [line for line, ws in zip(lines, split, strict=True) if ws is None]
        other_counts = iter(self._encode_counts(other))
        return [next(other_counts) if ws is None else sum(map(words.__getitem__, ws)) for ws in split]

    def clear_cache(self) -> None:
        """Forget the cached words (benchmarks measure cold starts with it)."""
        self._words.clear()

    def _encode_counts(self, texts: list[str]) -> list[int]:
        if not texts:
            return []
        short = [t if len(t) <= _WINDOW else "" for t in texts]
        counts = [len(e.ids) for e in self._tk.encode_batch(short, add_special_tokens=False)]
        return [self._long_count(t) if len(t) > _WINDOW else n for t, n in zip(texts, counts, strict=True)]

    def _long_count(self, text: str) -> int:
        """Tokens of a text over `_WINDOW` characters, counted window by window (exact when each
        window ends at a space or a punctuation mark, as nearly every real text allows)."""
        return sum(self.count(text[a:b]) for a, b in itertools.pairwise(_windows(text, 0)))

    def slice(self, text: str, max_tokens: int) -> list[str]:
        """Cut one over-long line into consecutive segments of at most `max_tokens` tokens.

        Tokenized a window at a time (memory stays bounded on a 50 MB line); a window's last,
        incomplete segment starts the next window."""
        out: list[str] = []
        pos, width = 0, _WINDOW
        while pos < len(text):
            end = _window_end(text, pos, width)
            offsets = self._tk.encode(text[pos:end], add_special_tokens=False).offsets
            cuts = [pos + offsets[i][0] for i in range(max_tokens, len(offsets), max_tokens)]
            if end >= len(text):
                bounds = [pos, *cuts, len(text)]
                out.extend(text[a:b] for a, b in itertools.pairwise(bounds) if a < b)
                break
            if not cuts:  # fewer than max_tokens tokens in the window: widen it
                width *= 2
                continue
            out.extend(text[a:b] for a, b in itertools.pairwise([pos, *cuts]) if a < b)
            pos = cuts[-1]
        return out


def _window_end(text: str, pos: int, width: int) -> int:
    """End of the window from `pos`: about `width` characters, cut before a space or punctuation
    mark in its last quarter when there is one, so tokens are not split."""
    end = pos + width
    if end >= len(text):
        return len(text)
    tail = text[end - width // 4 : end]
    found = [m.start() for m in _BREAK.finditer(tail)]
    return end - width // 4 + found[-1] if found else end


def _windows(text: str, pos: int) -> list[int]:
    bounds = [pos]
    while bounds[-1] < len(text):
        bounds.append(_window_end(text, bounds[-1], _WINDOW))
    return bounds


@cache
def default_counter() -> TokenCounter:
    """The WordPiece tokenizer of the bundled models (all-MiniLM-L6-v2's uncased vocabulary)."""
    from tokenizers import BertWordPieceTokenizer

    vocab = resources.files("cora_ci.embedding.minilm").joinpath("vocab.txt")
    with resources.as_file(vocab) as path:
        return TokenCounter(BertWordPieceTokenizer(str(path), lowercase=True))
