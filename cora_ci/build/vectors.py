"""The build's vector stage: which chunks need the model, which keep or copy a stored vector."""

from __future__ import annotations

import hashlib
import time
from typing import Any, NamedTuple

import numpy as np

from cora_ci.arrays import first_of_each, isin, positions, sorted_unique
from cora_ci.build.common import Progress
from cora_ci.bundle import Bundle
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.tables import Rows
from cora_ci.bundle.vectors import Planes, planes_width, width
from cora_ci.chunking.model import Chunk

_EMBED_STEP = 64  # texts per model call and progress report
_EAGER = 2048  # texts a first build holds before it embeds them
_KEY_BYTES = 16  # of a text's sha256: its key (8 would let a contributor collide two texts)
_KEY = np.dtype([("hi", "<u8"), ("lo", "<u8")])  # a text key, comparable by numpy


class Texts:
    """The texts a build may embed, by text key, and the codes of those it has embedded.

    A text seen earlier in the build (copied code, boilerplate) is embedded once. With `eager` (a
    build with no stored vector to copy, so every text is embedded) texts are embedded `_EAGER` at
    a time as files are chunked, and only their codes kept, as the file's `Planes` (65 bytes at
    256 dimensions): a first build held every chunk's text until its vector stage (~0.6 KB a
    chunk), then every vector as floats (1 KB), then a byte a component (257 bytes)."""

    def __init__(self, embedder: Any, eager: bool) -> None:
        self._embedder = embedder
        self._eager = eager
        self._todo: dict[bytes, str] = {}
        self._row: dict[bytes, int] = {}  # key -> its row in the codes
        self._codes: list[Any] = []  # blocks of `Planes` rows, in `_row`'s order
        self.embedded = 0  # texts run through the model
        self.seconds = 0.0  # spent in the model and quantising

    def add(self, key: bytes, text: str) -> None:
        if key in self._row or key in self._todo:
            return
        self._todo[key] = text
        if self._eager and len(self._todo) >= _EAGER:
            self._embed(sorted(self._todo), None)

    def codes(self, keys: Any, progress: Progress) -> Planes:
        """The codes of `keys` (a `_KEY` array, one row each), as `Planes`: the texts not embedded yet are
        embedded now. Keys are matched as arrays and the rows filled block by block: no Python
        object a chunk, and the blocks are not joined first (a second copy of every code)."""
        rows = self._rows(keys)
        raw = sorted_unique(keys[rows < 0]).tobytes()
        self._embed(sorted(raw[i : i + _KEY_BYTES] for i in range(0, len(raw), _KEY_BYTES)), progress)
        if len(raw):
            rows = self._rows(keys)
        dim = self._embedder.info.dim
        out = np.empty((len(keys), planes_width(dim)), dtype=np.uint8)
        ends = np.cumsum([len(b) for b in self._codes], dtype=np.intp)
        which = np.searchsorted(ends, rows, side="right")  # each key's block
        order = np.argsort(which, kind="stable")
        bounds = np.searchsorted(which[order], np.arange(len(ends) + 1))
        for b, block in enumerate(self._codes):
            mine = order[bounds[b] : bounds[b + 1]]
            out[mine] = block[rows[mine] - (ends[b] - len(block))]
        return Planes(out, dim)

    def _rows(self, keys: Any) -> Any:
        """Each key's row in the codes, -1 for a key not embedded yet (`_row` is in row order)."""
        return positions(np.frombuffer(b"".join(self._row), dtype=_KEY), keys)

    def _embed(self, todo: list[bytes], progress: Progress | None) -> None:
        """Each step quantised as it comes (`vectors.quantise`): no vector is held as floats."""
        from cora_ci.bundle.vectors import planes, quantise

        t = time.perf_counter()
        if progress is not None:
            progress("embed", 0, len(todo))
        block = np.empty((len(todo), planes_width(self._embedder.info.dim)), dtype=np.uint8)
        for i in range(0, len(todo), _EMBED_STEP):
            part = todo[i : i + _EMBED_STEP]
            vectors = self._embedder.embed_documents([self._todo.pop(k) for k in part])
            block[i : i + len(part)] = planes(quantise(np.asarray(vectors, dtype=np.float32))).rows
            if progress is not None:
                progress("embed", i + len(part), len(todo))
        self._row.update((k, len(self._row)) for k in todo)
        self._codes.append(block)
        self.embedded += len(todo)
        self.seconds += time.perf_counter() - t


def text_keys(chunks: list[Chunk], texts: Texts | None = None) -> bytes:
    """Hashes of the embedded texts: the vector cache's keys (16 bytes of sha256 each); each text
    also into `texts`, by its key, when given (what the vector stage may embed)."""
    from cora_ci.embedding import document_text

    out = []
    for c in chunks:
        text = document_text(c)
        key = hashlib.sha256(text.encode()).digest()[:_KEY_BYTES]
        if texts is not None:
            texts.add(key, text)
        out.append(key)
    return b"".join(out)


class VectorPlan(NamedTuple):
    """How the vector index changes: ids to add with vectors the model made now, and ids to add
    with vectors copied as stored from the previous bundle (moved or copied code); the others
    keep theirs, and those of chunks no longer there go."""

    ids: Any  # np.uint64 array
    vectors: Planes  # codes of the vectors the model made now
    stored_ids: Any  # np.uint64 array
    stored: Any  # uint8 codes, exactly as the previous bundle holds them
    embedded: int  # texts run through the model


def plan_vectors(
    embedder: Any, old: Bundle | None, old_rows: Rows, kept: Rows, fresh: Rows, paths: list[str],
    keys: dict[str, bytes], texts: Texts, progress: Progress,
) -> VectorPlan:  # fmt: skip
    """Vectors for the chunks of the changed files `paths` (their rows in `fresh`, their text
    `keys` by path, the texts to embed by key in `texts`). A chunk whose id and embedded text are
    unchanged keeps its stored vector in place; another chunk whose text a changed or removed file
    held before (code moved between files, a renamed file) gets a copy of that vector; only new
    texts are embedded (some may have been, as files were chunked: `Texts`). The previous texts'
    keys are worked out from those files' chunks: a bundle stores none (16 bytes a chunk, 3-4% of
    a bundle, for copies from unchanged files, which cost an embedding of their chunk)."""
    ids = mf.ids_of(b"".join(fresh.top(p, "ids") for p in paths))
    ks = np.frombuffer(b"".join(keys[p] for p in paths), dtype=_KEY)
    left = [p for p in old_rows if p not in kept]  # the previous versions of changed or removed files
    gone = mf.ids_of(b"".join(old_rows.top(p, "ids") for p in left))
    before = _old_keys(old, left)
    if len(before) != len(gone):
        before = np.zeros(0, dtype=_KEY)
    stay = _same(ids, ks, gone, before)
    add, add_keys = ids[~stay], ks[~stay]
    wanted = isin(before, add_keys) if len(before) else np.zeros(0, dtype=bool)
    stored = _stored_vectors(old, gone[wanted], before[wanted])
    known = np.frombuffer(b"".join(stored), dtype=_KEY)
    copy = isin(add_keys, known)
    copied = [stored[k.tobytes()] for k in add_keys[copy]]
    return VectorPlan(
        add[~copy],
        texts.codes(add_keys[~copy], progress),
        add[copy],
        np.asarray(copied, dtype=np.uint8).reshape(len(copied), width(embedder.info.dim)),
        texts.embedded,
    )


def _old_keys(old: Bundle | None, paths: list[str]) -> Any:
    """The text keys of the chunks of `paths` in `old` (the files' chunk order), from their chunks;
    none when `old` holds no vectors to reuse."""
    if old is None or old.model is None or not paths:
        return np.zeros(0, dtype=_KEY)
    table, at = old.chunks, [old.chunks.file_index(p) for p in paths]
    files = [fi for fi in at if fi is not None]
    if len(files) < len(at):
        return np.zeros(0, dtype=_KEY)  # not the rows' files: nothing to reuse
    return np.frombuffer(text_keys([table.chunk(r) for fi in files for r in table.file_rows(fi)]), dtype=_KEY)


def _same(ids: Any, keys: Any, before: Any, before_keys: Any) -> Any:
    """Which chunks (`ids`, their text `keys`) had the same id and text before (`before`, with
    `before_keys`; a previous bundle without text keys keeps none): they keep their vectors."""
    if not len(before) or len(before_keys) != len(before):
        return np.zeros(len(ids), dtype=bool)
    at = positions(before, ids)
    return (at >= 0) & (before_keys[at] == keys)


def _stored_vectors(old: Bundle | None, ids: Any, keys: Any) -> dict[bytes, Any]:
    """The previous bundle's vectors (codes, as stored) of the chunks `ids` by their text `keys`:
    the first chunk with each text."""
    if old is None or not len(ids) or old.vectors is None:  # opened (and its layout checked) only now
        return {}
    rows = np.sort(first_of_each(keys))
    found = [keys[r].tobytes() for r in rows]
    return dict(zip(found, old.vectors.get_stored(ids[rows].tolist()), strict=True))
