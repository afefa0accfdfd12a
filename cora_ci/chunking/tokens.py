"""Token counts from the embedding model's real WordPiece vocabulary, not an estimate.

Counting per line is exact for whole chunks: BERT's pre-tokenizer splits on whitespace, so the
tokens of "a\\nb" are the tokens of "a" followed by those of "b". For the same reason a line's count
is the sum of the counts of its space-separated words, and code repeats its words so much that a
per-word cache answers most lookups. A new plain-ASCII word is split on punctuation exactly as BERT's
pre-tokenizer does and handed to WordPiece directly; other lines take the whole tokenizer
(`bert.py`, plain Python). Both paths are checked against the `tokenizers` library by property tests.
"""

from __future__ import annotations

import itertools
import re
from functools import cache

from cora_ci.chunking import bert
from cora_ci.embedding.info import BUNDLED

_CACHE_LIMIT = 1 << 20  # words; cleared when full, so memory stays bounded on huge corpora
# A longer text is taken window by window: a 50 MB line's words or offsets at once would take gigabytes.
_WINDOW = 1 << 16
_BREAK = re.compile(r"\s|[^\w\s]")  # BERT splits at whitespace and at every punctuation mark


class TokenCounter:
    def __init__(self, vocab: dict[str, int]) -> None:
        self.vocab = vocab
        self._words: dict[str, int] = {}  # a raw space-separated ASCII word -> its tokens
        self._pieces = _Pieces(vocab)  # a pre-tokenized word -> its tokens

    def count(self, text: str) -> int:
        """Tokens of `text`; a text over `_WINDOW` characters counted window by window (exact when
        each window ends at a space or a punctuation mark, as nearly every real text allows)."""
        if len(text) <= _WINDOW:
            return self._count(text)
        bounds = [0]
        while bounds[-1] < len(text):
            bounds.append(_window_end(text, bounds[-1], _WINDOW))
        return sum(self._count(text[a:b]) for a, b in itertools.pairwise(bounds))

    def _count(self, text: str) -> int:
        return bert.count(text, self.vocab, self._pieces.__getitem__)

    def count_lines(self, lines: list[str]) -> list[int]:
        """Exact per-line counts: cached words for plain ASCII lines, the tokenizer for the rest."""
        words, pieces = self._words, self._pieces.__getitem__
        if len(words) > _CACHE_LIMIT:
            self.clear_cache()
        # Lines the cache may split itself: plain ASCII. BERT's normaliser deletes control
        # characters (joining the words around them), so lines with one go to `bert` whole.
        split = [None if bert.NOT_PLAIN.search(line) else line.split() for line in lines]
        new = {w for ws in split if ws is not None for w in ws if w not in words}
        for w in new:  # a special token ([CLS], ...) is matched before the word is lower-cased
            words[w] = (self._count(w) if "[" in w and bert.SPECIAL.search(w)
                        else sum(map(pieces, bert.PLAIN_WORDS.findall(w.lower()))))  # fmt: skip
        return [self.count(line) if ws is None else sum(map(words.__getitem__, ws))
                for line, ws in zip(lines, split, strict=True)]  # fmt: skip

    def clear_cache(self) -> None:
        """Forget the cached words (benchmarks measure cold starts with it)."""
        self._words.clear()
        self._pieces.clear()

    def slice(self, text: str, max_tokens: int) -> list[str]:
        """Cut one over-long line into consecutive segments of at most `max_tokens` tokens.

        Tokenized a window at a time (memory stays bounded on a 50 MB line); a window's last,
        incomplete segment starts the next window."""
        out: list[str] = []
        pos, width = 0, _WINDOW
        while pos < len(text):
            end = _window_end(text, pos, width)
            starts = bert.starts(text[pos:end], self.vocab)
            cuts = [pos + starts[i] for i in range(max_tokens, len(starts), max_tokens)]
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


class _Pieces(dict[str, int]):
    """A pre-tokenized word -> its WordPiece tokens, counted on first sight."""

    def __init__(self, vocab: dict[str, int]) -> None:
        super().__init__()
        self.vocab = vocab

    def __missing__(self, word: str) -> int:
        n = self[word] = bert.word_count(word, self.vocab)
        return n


@cache
def default_counter() -> TokenCounter:
    """The WordPiece vocabulary of the bundled models (all-MiniLM-L6-v2's, uncased)."""
    text = (BUNDLED / "minilm" / "vocab.txt").read_text("utf-8")
    return TokenCounter(dict(zip(text.splitlines(), itertools.count(), strict=False)))
