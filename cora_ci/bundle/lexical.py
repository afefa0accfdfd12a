"""The BM25 part of a bundle: a tantivy index over identifier-aware terms.

Terms are made here, not by tantivy's tokenizers: an identifier is indexed whole and as its parts
(`parseHeaderLinks` and `parse_header_links` both give `parse`, `header`, `links`), and queries go
through the same function, so a query term always meets the indexed form. Only the chunk id is
stored; texts live in the manifest. The index is written by one thread in one commit, then its
random segment id is replaced by one derived from the content, so the same chunks give the same
bytes (the manifest records their checksums). tantivy takes a lock file when it opens an index, so a
reader opens a private directory of symlinks and the bundle itself is never written.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import tantivy

FIELDS = {"name": 3.0, "path": 1.5, "body": 1.0}  # field -> query boost
_WORD = re.compile(r"\w+")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^\W\d_A-Za-z]+")
_HEAP = 256 * 1024 * 1024  # one writer thread; large enough that a repository fits one segment
_LOCKS = (".tantivy-meta.lock", ".tantivy-writer.lock")


def terms(text: str) -> list[str]:
    """Lower-cased words of `text`, each identifier followed by its camelCase / snake_case parts."""
    out: list[str] = []
    for word in _WORD.findall(text):
        out.extend(_word_terms(word))
    return out


@lru_cache(maxsize=1 << 18)
def _word_terms(word: str) -> tuple[str, ...]:
    """Code repeats its identifiers, so each distinct word is split once."""
    parts = [p.lower() for p in _PART.findall(word)]
    return (word.lower(), *parts) if len(parts) > 1 else (word.lower(),)


class LexicalDoc(NamedTuple):
    id: int
    name: str  # symbol names and anchor
    path: str
    body: str  # header and code


def _schema() -> Any:
    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("id", stored=True, indexed=True, fast=True)
    for name in FIELDS:
        sb.add_text_field(name, stored=False, tokenizer_name="whitespace", index_option="freq")
    return sb.build()


def write_index(directory: Path, docs: Iterable[LexicalDoc]) -> None:
    """Build the index in `directory` (created), deterministically for the same docs in the same order."""
    directory.mkdir(parents=True)
    index = tantivy.Index(_schema(), path=str(directory))
    writer = index.writer(heap_size=_HEAP, num_threads=1)
    for d in docs:
        doc = tantivy.Document()
        doc.add_unsigned("id", d.id)
        doc.add_text("name", " ".join(terms(d.name)))
        doc.add_text("path", " ".join(terms(d.path)))
        doc.add_text("body", " ".join(terms(d.body)))
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    del writer, index
    _stable_segment_ids(directory)


def _stable_segment_ids(directory: Path) -> None:
    """Rename each segment after a hash of its files and drop lock files: same content, same bytes."""
    meta_path = directory / "meta.json"
    meta = json.loads(meta_path.read_text())
    for seg in meta["segments"]:
        old = seg["segment_id"].replace("-", "")
        files = sorted(p for p in directory.iterdir() if p.name.startswith(old + "."))
        h = hashlib.sha256()
        for p in files:
            h.update(p.suffix.encode() + b"\0" + p.read_bytes())
        new = h.hexdigest()[:32]
        for p in files:
            p.rename(directory / (new + p.suffix))
        seg["segment_id"] = f"{new[:8]}-{new[8:12]}-{new[12:16]}-{new[16:20]}-{new[20:]}"
    meta_path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    skip = {*_LOCKS, ".managed.json"}
    managed = sorted(p.name for p in directory.iterdir() if p.name not in skip)
    (directory / ".managed.json").write_text(json.dumps(managed) + "\n")
    for lock in _LOCKS:
        (directory / lock).unlink(missing_ok=True)


class LexicalIndex:
    """A read-only view of a bundle's BM25 index."""

    def __init__(self, directory: Path) -> None:
        self._shadow = Path(tempfile.mkdtemp(prefix="cora-bm25-"))
        atexit.register(shutil.rmtree, self._shadow, True)
        for p in directory.iterdir():
            if p.name not in _LOCKS:
                os.symlink(p.resolve(), self._shadow / p.name)
        self._index = tantivy.Index.open(str(self._shadow))
        self._searcher = self._index.searcher()
        self._schema = self._index.schema

    @property
    def num_docs(self) -> int:
        n: int = self._searcher.num_docs
        return n

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """BM25 over the name, path and body fields with their boosts: (chunk id, score), best first."""
        words = sorted(set(terms(query)))
        if not words or k <= 0:
            return []
        clauses = [
            (tantivy.Occur.Should,
             tantivy.Query.boost_query(tantivy.Query.term_query(self._schema, field, w), boost))
            for field, boost in FIELDS.items() for w in words
        ]  # fmt: skip
        result = self._searcher.search(tantivy.Query.boolean_query(clauses), k)
        out = []
        for score, addr in result.hits:
            (cid,) = self._searcher.doc(addr)["id"]
            out.append((int(cid), float(score)))
        out.sort(key=lambda t: (-t[1], t[0]))
        return out
