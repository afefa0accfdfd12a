"""The static embedding tier: a token-vector table, looked up and pooled in numpy, no transformer.

The table starts as model2vec's distillation of the bundled all-MiniLM-L6-v2
(tools/model/distill_static.py): each token of MiniLM's WordPiece vocabulary run through the
transformer once and weighted by how rare the token is in code (SIF); it is then projected to 256
dimensions and trained so that sums of rows match MiniLM's vectors of real code chunks and doc
comments (tools/model/tokenlearn_static.py). At run time a text's
vector is the normalised sum of its tokens' rows, the whole text and not a 256-token window:
~15,000-25,000 chunks a second on one core, against ~60 for the transformer, which is what makes a
first build take seconds (bench/RESULTS.md).

Tokenising is ours, in plain Python, and the same for documents and queries: identifiers are split
at camelCase and snake_case boundaries (`parseHTTPResponse` -> parse, http, response) so that a
query's words meet the code's names, lowercased, then WordPiece (greedy longest match, `##`
continuations) on the table's vocabulary. Punctuation carries no meaning in a bag of tokens and is
dropped. Each distinct word is tokenised once per embedder (a cache), since code repeats its names.
"""

from __future__ import annotations

import io
import re
import unicodedata
from collections.abc import Sequence
from itertools import chain

import numpy as np
import numpy.typing as npt

from cora_ci.embedding.info import ModelInfo

Vector = npt.NDArray[np.float32]
# Raw words: runs of letters and digits (underscores and punctuation split). Each distinct raw word
# is split further once, on a cache miss, at case boundaries: capitalised or lower runs, upper-case
# runs not followed by lower case (HTTP in HTTPResponse), digit runs; letters other than A-Z count
# as lower case, so a word in another script stays whole.
_RAW = re.compile(r"[^\W_]+")
_WORDS = re.compile(r"[A-Z]?[^\W\dA-Z_]+|[A-Z]+(?![^\W\dA-Z_])|[0-9]+")
_MARK = re.compile(r"[^\w\s]")  # a punctuation mark: one BERT token
_MAX_WORD = 48  # longer "words" (hashes, base64) are noise; WordPiece would cut them into junk
_CACHE_LIMIT = 1 << 19  # distinct raw words remembered per embedder (then forgotten, all at once)


def words(text: str) -> list[str]:
    """Lower-cased sub-words of `text`: identifiers split at case and underscore boundaries, and
    accents stripped as BERT's uncased tokenizer strips them (its vocabulary has none)."""
    return [w for raw in _RAW.findall(text) for w in _split(raw)]


def _split(raw: str) -> list[str]:
    """`words` of one raw word (a run of letters and digits)."""
    out = [w.lower() for w in _WORDS.findall(raw) if len(w) <= _MAX_WORD]
    return [w if w.isascii() else _unaccented(w) for w in out]


def _unaccented(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")


def wordpiece(word: str, vocab: dict[str, int], unknown: int = -1) -> list[int]:
    """BERT's greedy longest-match-first split of one lower-case word into vocabulary ids."""
    if word in vocab:
        return [vocab[word]]
    ids: list[int] = []
    start, n = 0, len(word)
    while start < n:
        end = n
        found = unknown
        while end > start:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                found = vocab[piece]
                break
            end -= 1
        if found == unknown:  # as BERT: a word with an unknown piece is one unknown token
            return []
        ids.append(found)
        start = end
    return ids


class _Ids(dict[str, tuple[int, ...]]):
    """Raw word -> its token ids, computed on first sight: lookups of known words stay in C."""

    def __init__(self, vocab: dict[str, int]) -> None:
        super().__init__()
        self.vocab = vocab

    def __missing__(self, raw: str) -> tuple[int, ...]:
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        if raw.isascii() and raw.isalpha() and raw.islower() and len(raw) <= _MAX_WORD:
            ids = self[raw] = tuple(wordpiece(raw, self.vocab))  # most words: nothing to split
        else:  # `raw` is one _RAW match already: `words` would find it again
            ids = self[raw] = tuple(i for w in _split(raw) for i in wordpiece(w, self.vocab))
        return ids


class StaticEmbedder:
    """Texts to L2-normalised float32 vectors by summing table rows; the `Embedder` interface.

    A vector depends only on its own text (no batch effects), so incremental and full builds agree
    bit for bit, and queries are embedded exactly as documents are. A text without a known word
    (`{}`, `---`) is embedded by its punctuation marks, which BERT keeps as tokens, or else by the
    unknown token: a vector is never zero (a zero one is undefined by cosine, and `verify` takes
    it for damage).
    """

    def __init__(self, info: ModelInfo, tokens: Sequence[str], table: npt.NDArray[np.generic],
                 scales: npt.NDArray[np.float32] | None = None) -> None:  # fmt: skip
        if table.shape != (len(tokens), info.dim):
            raise ValueError(f"table {table.shape} does not match {len(tokens)} tokens of {info.dim} dims")
        if scales is not None and scales.shape != (len(tokens),):
            raise ValueError(f"scales {scales.shape} do not match {len(tokens)} tokens")
        self.info = info
        self.workers = 1
        # int8 rows stay int8, each text scales its own rows: converting the whole table to float32
        # took ~60-140 ms of every process that embeds a few chunks (a hook), for 30 MB of memory
        self._table = np.ascontiguousarray(table if scales is not None else table.astype(np.float32))
        self._scales = np.ascontiguousarray(scales, dtype=np.float32) if scales is not None else None
        self._ids = _Ids({t: i for i, t in enumerate(tokens)})

    def ids(self, text: str) -> list[int]:
        """The table rows of `text`'s tokens, in order."""
        return list(chain.from_iterable(map(self._ids.__getitem__, _RAW.findall(text))))

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """float32 [n, dim], one row per text: its tokens' rows summed, then L2-normalised."""
        prefix = self.info.document_prefix
        out = np.zeros((len(texts), self.info.dim), np.float32)
        table, scales = self._table, self._scales
        for i, text in enumerate(texts):
            ids = np.array(self.ids(prefix + text) or self._marks(text), np.intp)  # converted once
            if scales is None:
                table[ids].sum(axis=0, out=out[i])
            else:  # the sum of the scaled int8 rows
                np.dot(scales[ids], table[ids], out=out[i])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, np.float32(1e-12))
        return out

    def _marks(self, text: str) -> list[int]:
        vocab = self._ids.vocab
        return [vocab[c] for c in _MARK.findall(text) if c in vocab] or [vocab.get("[UNK]", 0)]

    def embed_query(self, text: str) -> Vector:
        """float32 [dim]: a query is embedded as a document is (static vectors have no prefix)."""
        vector: Vector = self.embed_documents([self.info.query_prefix + text])[0]
        return vector

    def token_count(self, text: str) -> int:
        return len(self.ids(text))


def parse_table(
    tokens: bytes, vectors: bytes, scales: bytes | None
) -> tuple[list[str], npt.NDArray[np.float32]]:
    """`tokens.txt` (one token a line, in row order) and `vectors.npy` as float32: int8 rows times
    `scales.npy` (one float32 per row) when given, else float16 or float32 rows."""
    names, table, scale = read_table(tokens, vectors, scales)
    floats = table.astype(np.float32)
    return names, floats if scale is None else floats * scale[:, None]


def read_table(
    tokens: bytes, vectors: bytes, scales: bytes | None
) -> tuple[list[str], npt.NDArray[np.generic], npt.NDArray[np.float32] | None]:
    """`parse_table`, with int8 rows kept as they are and their scales apart (what the embedder
    runs on: no float32 copy of the whole table); other rows as float32 and no scales."""
    names = tokens.decode("utf-8").split("\n")
    if names and names[-1] == "":
        names.pop()
    table = _npy(vectors)
    if table.dtype == np.int8 and scales is None:
        raise ValueError("int8 vectors.npy without scales.npy")
    if table.ndim != 2 or table.shape[0] != len(names):
        raise ValueError(f"vectors.npy has shape {table.shape}, tokens.txt {len(names)} lines")
    if scales is None:
        return names, table.astype(np.float32), None
    scale = _npy(scales).astype(np.float32)
    if scale.shape != (len(names),):
        raise ValueError(f"scales.npy has shape {scale.shape}, expected ({len(names)},)")
    if table.dtype != np.int8:
        return names, table.astype(np.float32) * scale[:, None], None
    return names, table, scale


def _npy(data: bytes) -> npt.NDArray[np.generic]:
    array: npt.NDArray[np.generic] = np.load(io.BytesIO(data), allow_pickle=False)
    return array
