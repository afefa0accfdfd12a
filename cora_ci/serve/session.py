"""A bundle kept open between calls: what makes the MCP server's answers warm.

A one-shot `cora-ci query` pays for the process, the model and the indexes every time (~0.4 s);
a session pays once. The bundle, its indexes, its graph and the model stay loaded; each call
re-reads only the working tree's files it binds to. Before each call the session checks whether
the bundle it holds was replaced (the hook or a build swapped a new one in, or a new archive was
downloaded over the old) and, if so, opens the new one, so one call always reads one bundle.
A call that meets the old bundle's files already gone runs once more on the new one.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from cora_ci.bundle import Bundle
from cora_ci.errors import CoraError
from cora_ci.rebind.bind import Known, WorkTree
from cora_ci.render.bundles import refs_of
from cora_ci.render.many import Many, answer_many, open_where, share_embedder
from cora_ci.render.outline import Outline, outline
from cora_ci.render.query import Answer, Where, answer_with, boosts_for, check_names, embedder_for
from cora_ci.render.related import Related, related_results
from cora_ci.render.source import BundleChunks, Shown, show, work_tree
from cora_ci.retrieval.catalog import catalog
from cora_ci.retrieval.types import Filters

T = TypeVar("T")
_SWAPPED = ("CORA-BND-003", "CORA-BND-004")


class Session:
    """One bundle (a directory or an archive) and the working tree its results re-bind to."""

    def __init__(self, where: Where, model: str | None = None) -> None:
        self.where = where
        self.model = model
        self._lock = threading.Lock()  # one call at a time: the bundle's lazy parts open once
        self._bundle: Bundle | None = None
        self._stamp: tuple[int, ...] | None = None
        self._tree: WorkTree | None = None
        self._known = Known()
        self._embedder: tuple[str | None, Any] | None = None  # (model sha256, embedder)

    @property
    def name(self) -> str:
        return str(self.where.bundle)

    def bundle(self) -> Bundle:
        """The bundle now at the session's path (opened again when it was replaced)."""
        with self._lock:
            return self._current()

    def warm(self) -> None:
        """Open the bundle and its indexes, load its model and answer one question before the
        first call needs them: what a search opens on first use (tantivy's segments, the model's
        sessions, the answer's code and caches) made a first search at 50k chunks 141 ms, now
        63 (the next ones ~30: the rest is the files a question reads first)."""
        with self._lock:
            model = self._model_for(self._current())
            if model is not None:
                model.embed_query("warm")
        self.search("how does the main entry point start", k=1)

    def search(
        self, text: str, k: int = 10, budget: int | None = None, filters: Filters | None = None
    ) -> Answer:
        def run(b: Bundle) -> Answer:
            check_names([b], filters or Filters(), ())
            boosts = boosts_for(b, (), self._tree.root if self._tree is not None else None)
            tree, model = self._fresh_tree(), self._model_for(b)
            return answer_with(b, text, tree, model, self.name, k, budget, boosts, filters or Filters())

        return self._run(run)

    def show(self, anchor: str) -> Shown:
        return self._run(lambda b: show(self._source(b), anchor))

    def related(self, anchor: str, k: int = 10, full: bool = False) -> tuple[Related, Bundle]:
        return self._run(lambda b: (related_results(self._source(b), anchor, k, full), b))

    def outline(self, path: str) -> tuple[Outline, Bundle]:
        return self._run(lambda b: (outline(self._source(b), path), b))

    def _run(self, fn: Callable[[Bundle], T]) -> T:
        with self._lock:
            bundle = self._current()
            try:
                return fn(bundle)
            except CoraError as e:
                if e.code not in _SWAPPED or not self._replaced(bundle):
                    raise
            self._bundle = None
            return fn(self._current())

    def _current(self) -> Bundle:
        if self._bundle is not None and not self._replaced(self._bundle):
            return self._bundle
        stamp = self._stamp_now()
        bundle = open_where(self.where)
        bundle.lexical, bundle.vectors, catalog(bundle).graph
        self._bundle, self._stamp = bundle, stamp
        self._tree = work_tree(bundle, self.where.repo, self.where.default_repo)
        self._known = Known()  # files as the new bundle's tree reads them
        return bundle

    def _replaced(self, bundle: Bundle) -> bool:
        return bundle.replaced() or self._stamp_now() != self._stamp

    def _stamp_now(self) -> tuple[int, ...] | None:
        """An archive's identity (a new download is another file or other bytes); a directory's
        replacement is `Bundle.replaced`'s to see."""
        try:
            st = os.stat(self.where.bundle)
        except OSError:
            return None
        return () if stat.S_ISDIR(st.st_mode) else (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def _fresh_tree(self) -> WorkTree | None:
        """The working tree as it is now: files are read again on every call (and decoded again
        only when their bytes changed)."""
        if self._tree is None:
            return None
        return WorkTree(self._tree.root, self._tree.max_bytes, self._known)

    def _source(self, bundle: Bundle) -> BundleChunks:
        return BundleChunks(bundle, self._fresh_tree())

    def _model_for(self, bundle: Bundle) -> Any:
        """The bundle's model, loaded once while the bundles keep being built with it."""
        sha = (bundle.model or {}).get("model_sha256")
        if self._embedder is None or self._embedder[0] != sha:
            self._embedder = (sha, embedder_for(bundle, self.model))
        return self._embedder[1]


def search_all(sessions: list[Session], text: str, k: int = 10, budget: int | None = None,
               filters: Filters | None = None) -> Answer:  # fmt: skip
    """One ranking over every session's bundle (`retrieval.many`), each bundle as it is now."""
    if len(sessions) == 1:
        return sessions[0].search(text, k, budget, filters)
    with contextlib.ExitStack() as stack:
        for s in sessions:  # in order: two searches never wait on each other crosswise
            stack.enter_context(s._lock)
        bundles = [s._current() for s in sessions]
        many = Many(bundles, refs_of([b.manifest for b in bundles], [s.name for s in sessions],
                                     [b.id for b in bundles]), [s.where for s in sessions])  # fmt: skip
        embedders = share_embedder(many, bundles[0], sessions[0]._model_for(bundles[0]))
        return answer_many(many, text, embedders, k, budget, (), filters or Filters())
