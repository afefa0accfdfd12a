"""The static embedding tier: a token-vector table, looked up and pooled in numpy, no transformer.

The table starts as model2vec's distillation of the bundled all-MiniLM-L6-v2
(tools/model/distill_static.py): each token of MiniLM's WordPiece vocabulary run through the
transformer once and weighted by how rare the token is in code (SIF); it is then projected to 256
dimensions and trained so that sums of rows match MiniLM's vectors of real code chunks and doc
comments (tools/model/tokenlearn_static.py), then on code itself: doc comments' first sentences
against the code they document (tools/model/contrast_static.py). At run time a text's vector is
the normalised sum of its tokens' rows, the whole text and not a 256-token window:
over 20,000 chunks a second on one core, against ~60 for the transformer, which is what makes a
first build take seconds (bench/RESULTS.md).

Tokenising is ours, in plain Python, and the same for documents and queries: identifiers are split
at camelCase and snake_case boundaries (`parseHTTPResponse` -> parse, http, response) so that a
query's words meet the code's names, lowercased, then WordPiece (greedy longest match, `##`
continuations) on the table's vocabulary. Punctuation carries no meaning in a bag of tokens and is
dropped. A text is cut into tokens (runs of letters, digits and `_`) on its UTF-8 bytes with one
`bytes.translate` and `split`, ~4x faster than a regular expression over the text; each distinct
token is then split into words once per embedder (a cache, since code repeats its names), the new
tokens of a batch all at once. `words` and `wordpiece` are the reference the fast path is tested
against.
"""

from __future__ import annotations

import io
import re
import struct
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from cora_ci.chunking.bert import wordpiece
from cora_ci.embedding.info import ModelInfo
from cora_ci.files.text import word_runs

Vector = npt.NDArray[np.float32]
# `words`, the reference: raw words are runs of letters and digits (underscores and punctuation
# split), each split further at case boundaries: capitalised or lower runs, upper-case runs not
# followed by lower case (HTTP in HTTPResponse), digit runs; letters other than A-Z count as lower
# case, so a word in another script stays whole. `_Tokens` does the same on bytes.
_RAW = re.compile(r"[^\W_]+")
_WORDS = re.compile(r"[A-Z]?[^\W\dA-Z_]+|[A-Z]+(?![^\W\dA-Z_])|[0-9]+")
_MARK = re.compile(r"[^\w\s]")  # a punctuation mark: one BERT token
_MAX_WORD = 48  # longer "words" (hashes, base64) are noise; WordPiece would cut them into junk
_CACHE_LIMIT = 1 << 19  # distinct tokens remembered per embedder (then forgotten, all at once)
# `_WORDS` on plain ASCII, and the newline that separates tokens in a batch.
_ASCII_WORDS = re.compile(rb"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+|\n")
_STEP = 1024  # texts tokenised at a time: their tokens are held in memory together
# Rows are packed as little-endian int32. The separator row is -1 (four 0xff bytes), which no table
# has: a row's last byte is < 0x80, so a run of 0xff bytes never goes on across the end of a row,
# and a search from the left finds each separator where it stands, never astride two rows.
_PACK = "<{}i"
_SEP = struct.pack(_PACK.format(1), -1)
_TEXT_END = b"\x00"  # the token between two texts of a batch


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


class _Tokens:
    """Token (bytes) -> its table rows, learnt on first sight: lookups stay in C.

    A token is a run of ASCII letters, digits and `_`, and of the bytes of other scripts' UTF-8
    (which a token boundary never cuts): its rows are those of `words` of its text. Rows are kept
    packed (`_PACK`), so the rows of a whole batch of texts are one `bytes.join` of its tokens'
    (`_TEXT_END` between texts gives `_SEP`). The plain-ASCII tokens new in a batch are split at
    case boundaries by one regular expression over all of them, and their rows come out as one
    string cut at `_SEP`; tokens with other scripts' letters or marks take `words` itself.
    """

    def __init__(self, vocab: dict[str, int]) -> None:
        self.vocab = vocab
        self.rows: dict[bytes, bytes] = {_TEXT_END: _SEP}
        self._words = _Words(vocab)

    def ids(self, toks: list[bytes]) -> npt.NDArray[np.int32]:
        """The rows of `toks`, in order (`_SEP` for `_TEXT_END`)."""
        try:  # once a build is under way nearly every token is known: no set of them is made
            packed = b"".join(map(self.rows.__getitem__, toks))
        except KeyError:
            self._learn(toks)
            packed = b"".join(map(self.rows.__getitem__, toks))
        return np.frombuffer(packed, "<i4")

    def _learn(self, toks: list[bytes]) -> None:
        if len(self.rows) > _CACHE_LIMIT:
            self.rows.clear()
            self.rows[_TEXT_END] = _SEP
            self._words.clear()
        new = set(toks).difference(self.rows)
        plain = [t for t in new if t.isascii()]
        if plain:  # "parseHTTP\nutf8" -> "parse http \n utf 8" -> rows(parse, http) SEP rows(utf, 8)
            split = b" ".join(_ASCII_WORDS.findall(b"\n".join(plain))).lower()
            packed = b"".join(map(self._words.__getitem__, split.split(b" ")))
            self.rows.update(zip(plain, packed.split(_SEP), strict=True))
        for t in new.difference(plain):
            self.rows[t] = _packed(
                [i for w in words(t.decode("utf-8", "surrogatepass")) for i in wordpiece(w, self.vocab)]
            )


class _Words(dict[bytes, bytes]):
    """A lower-case ASCII word -> its packed WordPiece rows (none for a word over `_MAX_WORD`);
    the newline between two tokens -> `_SEP`."""

    def __init__(self, vocab: dict[str, int]) -> None:
        super().__init__({b"\n": _SEP})
        self.vocab = vocab

    def __missing__(self, word: bytes) -> bytes:
        ids = self[word] = _packed([] if len(word) > _MAX_WORD else wordpiece(word.decode(), self.vocab))
        return ids

    def clear(self) -> None:
        super().clear()
        self[b"\n"] = _SEP


def _packed(ids: list[int]) -> bytes:
    return struct.pack(_PACK.format(len(ids)), *ids)


def tokens(texts: Sequence[str]) -> list[bytes]:
    """The tokens of `texts` in order, `_TEXT_END` after each but the last (see `_Tokens`); lone
    surrogates pass through as their bytes. A text's own NUL bytes are breaks, as all ASCII
    punctuation is: only the separator makes a `_TEXT_END` token."""
    return b"".join((b" ", _TEXT_END, b" ")).join(map(word_runs, texts)).split()


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
        self._tokens = _Tokens({t: i for i, t in enumerate(tokens)})

    def ids(self, text: str) -> list[int]:
        """The table rows of `text`'s tokens, in order."""
        ids: list[int] = self._tokens.ids(tokens([text])).tolist()
        return ids

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """float32 [n, dim], one row per text: its tokens' rows summed, then L2-normalised."""
        out = np.zeros((len(texts), self.info.dim), np.float32)
        for start in range(0, len(texts), _STEP):
            self._sum_rows(texts[start : start + _STEP], out[start : start + _STEP])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, np.float32(1e-12))
        return out

    def _sum_rows(self, texts: Sequence[str], out: Vector) -> None:
        prefix, table, scales = self.info.document_prefix, self._table, self._scales
        flat = self._tokens.ids(tokens([prefix + text for text in texts])).astype(np.intp)
        cuts = [-1, *np.flatnonzero(flat < 0).tolist(), len(flat)]  # text i: between cuts i and i + 1
        rows = table.take  # take, not [ids]: ~25% less time a text
        for i, text in enumerate(texts):
            ids = flat[cuts[i] + 1 : cuts[i + 1]]
            if not ids.size:
                ids = np.array(self._marks(text), np.intp)
            if scales is None:
                rows(ids, axis=0).sum(axis=0, out=out[i])
            else:  # the sum of the scaled int8 rows
                np.dot(scales.take(ids), rows(ids, axis=0), out=out[i])

    def _marks(self, text: str) -> list[int]:
        vocab = self._tokens.vocab
        return [vocab[c] for c in _MARK.findall(text) if c in vocab] or [vocab.get("[UNK]", 0)]

    def embed_query(self, text: str) -> Vector:
        """float32 [dim]: a query is embedded as a document is (static vectors have no prefix)."""
        vector: Vector = self.embed_documents([self.info.query_prefix + text])[0]
        return vector

    def embed_weighted(self, text: str, weigh: Callable[[str], float]) -> Vector:
        """float32 [dim]: `embed_query` with each word's rows times `weigh(word)` (a word of
        `words`), so that a query can weigh its words by their rarity in the searched code: the
        table's own weights say how rare a token is in code at large, not in this repository,
        where a project's name (`rich`) is in a fifth of the chunks and steered the vectors to
        every `__rich__` method. All weights 1 give `embed_query`'s vector (up to rounding)."""
        counts = Counter(words(self.info.document_prefix + self.info.query_prefix + text))  # as `embed_query`
        ids: list[int] = []
        weights: list[float] = []
        for word, n in counts.items():
            pieces = wordpiece(word, self._tokens.vocab)
            if pieces and (w := n * weigh(word)) > 0:
                ids += pieces
                weights += [w] * len(pieces)
        rows, by = np.array(ids, np.intp), np.array(weights, np.float32)
        if self._scales is not None:
            by *= self._scales.take(rows)
        out: Vector = np.dot(by, self._table.take(rows, axis=0)).astype(np.float32)  # as `_sum_rows`
        norm = float(np.linalg.norm(out))
        if norm < 1e-12:  # no weighed word: as the text is embedded unweighed (never a zero vector)
            return self.embed_query(text)
        return out / np.float32(norm)

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
    tokens: bytes, vectors: bytes | Path, scales: bytes | None
) -> tuple[list[str], npt.NDArray[np.generic], npt.NDArray[np.float32] | None]:
    """`parse_table`, with int8 rows kept as they are and their scales apart (what the embedder
    runs on: no float32 copy of the whole table); other rows as float32 and no scales. `vectors`
    given as a path is mapped read-only: a process that embeds a few texts (a hook, a query)
    touches their rows only (~10 ms less than reading the 7.6 MB table)."""
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


def _npy(data: bytes | Path) -> npt.NDArray[np.generic]:
    source = io.BytesIO(data) if isinstance(data, bytes) else data
    array: npt.NDArray[np.generic] = np.load(source, mmap_mode=None if isinstance(data, bytes) else "r",
                                             allow_pickle=False)  # fmt: skip
    return array
