"""Token counts from the embedding model's real WordPiece tokenizer, not an estimate.

Counting per line is exact for whole chunks: BERT's pre-tokenizer splits on whitespace, so the
tokens of "a\\nb" are the tokens of "a" followed by those of "b".
"""

from __future__ import annotations

import itertools
from functools import cache
from importlib import resources
from typing import Any


class TokenCounter:
    def __init__(self, tokenizer: Any) -> None:
        self._tk = tokenizer

    def count(self, text: str) -> int:
        return len(self._tk.encode(text, add_special_tokens=False).ids)

    def count_lines(self, lines: list[str]) -> list[int]:
        if not lines:
            return []
        return [len(e.ids) for e in self._tk.encode_batch(lines, add_special_tokens=False)]

    def slice(self, text: str, max_tokens: int) -> list[str]:
        """Cut one over-long line into consecutive segments of at most `max_tokens` tokens."""
        offsets = self._tk.encode(text, add_special_tokens=False).offsets
        cuts = [offsets[i][0] for i in range(max_tokens, len(offsets), max_tokens)]
        bounds = [0, *cuts, len(text)]
        return [text[a:b] for a, b in itertools.pairwise(bounds) if a < b]


@cache
def default_counter() -> TokenCounter:
    """The tokenizer of the default embedding model (all-MiniLM-L6-v2, uncased WordPiece)."""
    from tokenizers import BertWordPieceTokenizer

    vocab = resources.files("cora_ci.embedding.minilm").joinpath("vocab.txt")
    with resources.as_file(vocab) as path:
        return TokenCounter(BertWordPieceTokenizer(str(path), lowercase=True))
