"""Reading a bundle's BM25 index (`lexical.py` writes it): a read-only view that searches it.

tantivy takes a lock file where it opens an index, so the view opens a private directory of
links to the bundle's files (`lexical.SHADOW_DIR`), removed as soon as the searcher holds them:
the bundle itself is never written. A sentence's words are also searched by their other forms in
the index and two adjacent words as the identifier they spell (`stems.py`), each looked up in
the term dictionary once per open bundle.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import tantivy

from cora_ci.bundle import stems
from cora_ci.bundle.leftovers import LINKS
from cora_ci.bundle.lexical import FIELDS, SHADOW_DIR, TOKENIZER, analyzer, meta_template
from cora_ci.bundle.panics import is_panic, quiet
from cora_ci.bundle.segments import check_fast, check_meta, check_store
from cora_ci.bundle.terms import terms
from cora_ci.errors import CoraError

DocIds = Callable[[int], Sequence[int]]  # a segment's (the n-th non-empty bucket's) chunk ids, in order
_LOCKS = (".tantivy-meta.lock", ".tantivy-writer.lock")
_FILE = re.compile(r'filepath: "([0-9a-f]{32}\.[a-z]+|meta\.json)"')
_WHY = re.compile(r'error: "([^".]+)')
_Asked = tuple[str, int, frozenset[str], bool, frozenset[str], frozenset[str], bool]  # a search's arguments


@contextlib.contextmanager
def _unreadable(name: Path) -> Iterator[None]:
    """tantivy's failures on a damaged index (ValueError, or a Rust panic: pyo3's PanicException is
    a BaseException) as CORA-BND-004 naming the index, never a traceback, and a panic's message
    kept off stderr (`panics.quiet`)."""
    try:
        with quiet():
            yield
    except (ValueError, OSError) as e:
        file = _FILE.search(str(e))
        where = name / file.group(1) if file else name
        why = _WHY.search(str(e))
        raise CoraError(
            "CORA-BND-004", f"{where}: unreadable BM25 index ({(why.group(1) if why else str(e))[:160]})"
        ) from None
    except BaseException as e:
        if not is_panic(e):
            raise
        raise CoraError("CORA-BND-004", f"{name}: unreadable BM25 index (tantivy panicked)") from None


def idf(docs: int, holding: int) -> float:
    """tantivy's BM25 IDF of a term `holding` of `docs` documents hold."""
    return math.log(1 + (docs - holding + 0.5) / (holding + 0.5))


def _level(field: str, term: str) -> float:
    """Each field's own rarity, as tantivy weighs it: an identifier's name match."""
    return 1.0


_REMEMBERED = 1 << 16  # words' forms and joined pairs a warm process keeps (then forgets at once)


def _remember(seen: dict[str, Any], key: str, value: Any) -> None:
    if len(seen) >= _REMEMBERED:
        seen.clear()
    seen[key] = value


class LexicalIndex:
    """A read-only view of a bundle's BM25 index: `names` (default: every file of `directory`) are
    linked into a private directory that tantivy opens. With `segments` (the manifest's), meta.json
    and doc stores and fast fields are checked first (`segments`); `name` is the index as errors
    name it; `keep` is kept alive as long as this index (the bundle holding the directory fd its
    links go through); `doc_ids` gives each segment's chunk ids in document order (a hit's
    segment and document name its chunk)."""

    def __init__(self, directory: Path, doc_ids: DocIds, names: list[str] | None = None,
                 segments: list[Any] | None = None, name: Path | None = None,
                 keep: object = None) -> None:  # fmt: skip
        self._keep = keep
        self._doc_ids = doc_ids
        self._name = name or directory
        shadow = Path(tempfile.mkdtemp(prefix=f"{LINKS}{os.getpid()}-", dir=SHADOW_DIR))
        try:
            # Not realpath: a bundle read through its pinned directory (`store.pin`) must stay so.
            real = os.path.abspath(directory)
            for n in os.listdir(real) if names is None else names:
                if n not in _LOCKS and "/" not in n:
                    os.symlink(os.path.join(real, n), shadow / n)
            if segments is not None:
                try:
                    check_meta(directory, segments, meta_template(shadow / "scratch"))
                    for seg in segments:
                        if seg:
                            check_store(directory / f"{seg[0]}.store")
                            check_fast(directory / f"{seg[0]}.fast")
                except ValueError as e:
                    raise CoraError("CORA-BND-004", f"{self._name}: {e}") from None
            with _unreadable(self._name):
                self._index = tantivy.Index.open(str(shadow))
                # No reload: a bundle never changes, and the watcher thread of the default policy
                # takes tantivy's meta lock in the shadow directory while it is being removed.
                self._index.config_reader("Manual", 0)
                self._index.register_tokenizer(TOKENIZER, analyzer())
                self._searcher = self._index.searcher()
                self._schema = self._index.schema
        finally:  # the searcher holds its files open (mapped): the links are no longer needed
            shutil.rmtree(shadow, ignore_errors=True)
        self._last: tuple[_Asked, list[tuple[int, float]]] | None = None
        self._forms: dict[str, list[str]] = {}
        self._held: dict[str, int] = {}

    @property
    def num_docs(self) -> int:
        with _unreadable(self._name):
            n: int = self._searcher.num_docs
        return n

    def search(self, query: str, k: int, expand: frozenset[str] = frozenset(), join: bool = False,
               twice: frozenset[str] = frozenset(), body_only: frozenset[str] = frozenset(),
               whole: bool = False) -> list[tuple[int, float]]:  # fmt: skip
        """BM25 over the name, path and body fields with their boosts: (chunk id, score), best first;
        the words of `expand` also by their other forms in the index, with `join` two adjacent
        words also as the one identifier they spell (`stems.py`), the terms of `twice` at twice
        the weight, the terms of `body_only` in the body alone, with `whole` a word's rarity in a
        name no greater than in the body (`_rarity`). The last answer is kept: a query
        prefetched while the model loads is not run twice."""
        key = (query, k, expand, join, twice, body_only, whole)
        if self._last is not None and self._last[0] == key:
            return list(self._last[1])
        out = self._search(query, k, expand, join, twice, body_only, whole)
        self._last = (key, out)
        return list(out)

    def forms(self, word: str) -> list[str]:
        """`word`'s other forms in this index (remembered: a warm server asks again)."""
        got = self._forms.get(word)
        if got is None:
            with _unreadable(self._name):
                got = stems.forms(word, self._prefixed)
            _remember(self._forms, word, got)
        return got

    def holds(self, term: str) -> bool:
        """Whether a chunk's body has the term `term`."""
        return self.frequency(term) > 0

    def frequency(self, term: str, field: str = "body") -> int:
        """How many chunks' `field` (their bodies) have the term `term` (remembered, as `forms`)."""
        key = term if field == "body" else f"{field}\0{term}"
        got = self._held.get(key)
        if got is None:
            with _unreadable(self._name):
                got = int(self._searcher.doc_freq(field, term))
            _remember(self._held, key, got)
        return got

    def _rarity(self, field: str, term: str) -> float:
        """The boost that gives `term` in the name field the IDF it has in the body, where that is
        lower. tantivy weighs each field by its own document frequency, so a word most chunks'
        code holds (chi's `middleware`) is rare among names, and for "panic recovery middleware"
        chi's recoverer was BM25's 28th, under names holding one of its words; BM25F (Robertson
        and Zaragoza) counts a word's rarity over the whole document. A body holds its chunk's
        header, so its count is the document's, give or take. Paths keep their own: a file named
        for a common word is still what a question about it asks for (gson's `JsonReader.java`
        for "streaming JSON reader"; measured both ways in bench/RESULTS.md)."""
        if field != "name" or (named := self.frequency(term, field)) == 0:
            return 1.0
        n = self._searcher.num_docs
        return min(1.0, idf(n, max(named, self.frequency(term))) / idf(n, named))

    def _absent(self, field: str, term: str) -> bool:
        """Whether no chunk's `field` (a name or a path) holds `term`: its clause would match nothing
        and still cost a look-up in every segment. A sentence's words and their other forms are a
        third of its ~37 clauses (a path holds few of them): left out, the hits are the same and
        tantivy's share of a 50k-chunk sentence ~0.2 ms less (`frequency` remembers each answer)."""
        return field != "body" and self.frequency(term, field) == 0

    def holding(self, term: str, k: int) -> list[int]:
        """Up to `k` chunks whose body has the term `term` as it is, most by BM25 first."""
        with _unreadable(self._name):
            query = tantivy.Query.term_query(self._schema, "body", term)
            return [self._chunk_of(a) for _, a in self._searcher.search(query, k).hits]

    def holding_any(self, groups: list[list[str]], k: int) -> list[int]:
        """Up to `k` chunks whose body has every term of one of `groups` as it is, most by BM25
        first (a message's runs of words, each in one chunk: `emitted.said`)."""
        with _unreadable(self._name):
            each = [
                tantivy.Query.boolean_query(
                    [(tantivy.Occur.Must, tantivy.Query.term_query(self._schema, "body", t)) for t in group]
                )
                for group in groups
                if group
            ]
            if not each:
                return []
            query = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in each])
            return [self._chunk_of(a) for _, a in self._searcher.search(query, k).hits]

    def _chunk_of(self, addr: Any) -> int:
        """The chunk id of a hit's document address (its segment's n-th document)."""
        ids = self._doc_ids(addr.segment_ord)
        if addr.doc >= len(ids):
            raise CoraError("CORA-BND-004", f"{self._name}: a segment holds more documents than chunks")
        return int(ids[addr.doc])

    def _prefixed(self, prefix: str, limit: int) -> list[str]:
        return [t for t, _ in self._searcher.terms_with_prefix("body", prefix, limit=limit)]

    def _search(self, query: str, k: int, expand: frozenset[str], join: bool, twice: frozenset[str],
                body_only: frozenset[str], whole: bool) -> list[tuple[int, float]]:  # fmt: skip
        words = sorted(set(terms(query)))
        if not words or k <= 0:
            return []
        weight = {w: 2.0 if w in twice else 1.0 for w in words}
        for w in sorted(expand.intersection(words)):  # `streaming` also as `streams`, weighted lower
            for f in self.forms(w):
                weight.setdefault(f, stems.WEIGHT)
        for j in stems.joined(query, self.holds) if join else ():  # `client session`: `ClientSession`
            weight.setdefault(j, stems.WEIGHT)
        rarity = self._rarity if whole else _level
        clauses = [
            (tantivy.Occur.Should,
             tantivy.Query.boost_query(tantivy.Query.term_query(self._schema, field, w),
                                       boost * wt * rarity(field, w)))
            for field, boost in FIELDS.items() for w, wt in sorted(weight.items())
            if (field == "body" or w not in body_only) and not (whole and self._absent(field, w))
        ]  # fmt: skip
        out = []
        with _unreadable(self._name):
            result = self._searcher.search(tantivy.Query.boolean_query(clauses), k)
            for score, addr in result.hits:
                cid = self._chunk_of(addr)
                if math.isfinite(score):
                    out.append((cid, float(score)))
        out.sort(key=lambda t: (-t[1], t[0]))
        return out
