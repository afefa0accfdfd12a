"""What bench/semble.py and bench/localization.py share: cora-ci's answer as the command line gives
it, result spans, suffix path matching, the NDCG@10 of semble's benchmark, and BM25 over whole files.

A cora-ci result is what `cora-ci query -k K --format json` prints: the hits of
`cora_ci.retrieval.search` (the full ranking, with the boosts the bundle records) packed by
`cora_ci.render.answer.pack` without a budget, so one result per merged block of a file. It is
scored by its **own lines**: the lines its own hits hold verbatim (each hit chunk's range less the
member bodies a type's skeleton elides), not the parent skeleton printed around a member, nor the
range from the first to the last line printed (`start_line`-`end_line` of the JSON, kept as
`printed` for comparison).
"""

from __future__ import annotations

import math
import re
import subprocess
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from benchlib import bm25

from cora_ci.bundle import Bundle
from cora_ci.render.query import answer_with, boosts_for
from cora_ci.retrieval import Filters

Span = tuple[int, int]  # 1-based, inclusive


class Res(NamedTuple):
    """One ranked result: a path, its own line spans, and the range it prints."""

    path: str
    own: tuple[Span, ...]
    printed: Span


def cora_results(bundle: Bundle, text: str, k: int, embedder: Any) -> list[Res]:
    """The answer of `cora-ci query TEXT -k K` (default ranking, no budget), as `Res`s."""
    ans = answer_with(bundle, text, None, embedder, str(bundle.root), k, None, boosts_for(bundle, (), None),
                      Filters())  # fmt: skip
    out = []
    chunks = bundle.chunks
    for r in ans.results:
        own: list[Span] = []
        for cid in r.members:
            row = chunks.row_of.get(cid)
            if row is not None:
                own.extend(chunks.chunk(row).verbatim_ranges())
        out.append(Res(r.view.path, tuple(sorted(own)), (r.view.start, r.view.end)))
    return out


def suffix_match(a: str, b: str) -> bool:
    """Paths equal, or one ends with `/` plus the other (semble's rule)."""
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def overlaps(spans: Iterable[Span], lo: int, hi: int) -> bool:
    return any(a <= hi and lo <= b for a, b in spans)


# ----------------------------------------------------------------------------- semble's NDCG@10


class Target(NamedTuple):
    path: str
    span: Span | None  # None: the file as a whole


def target(t: str | dict[str, Any]) -> Target:
    if isinstance(t, str):
        return Target(t, None)
    return Target(t["path"], (int(t["start_line"]), int(t["end_line"])) if "start_line" in t else None)


def covers(r: Res, t: Target, own: bool = True) -> bool:
    if not suffix_match(r.path, t.path):
        return False
    if t.span is None:
        return True
    return overlaps(r.own if own else (r.printed,), *t.span)


def ndcg10(results: Sequence[Res], targets: Sequence[Target], own: bool = True) -> float:
    """semble's NDCG@10: binary gain at a rank that is the first hit of at least one target; IDCG
    of min(10, number of targets) hits in a row; no targets scores 0."""
    if not targets:
        return 0.0
    first: set[int] = set()
    for t in targets:
        rank = next((i for i, r in enumerate(results[:10]) if covers(r, t, own)), None)
        if rank is not None:
            first.add(rank)
    dcg = sum(1.0 / math.log2(i + 2) for i in first)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(10, len(targets))))
    return dcg / idcg


# ----------------------------------------------------------------------------- baselines

WORDS = re.compile(r"\w+")


def window_results(baseline: Any, text: str, k: int) -> list[Res]:
    """bench/quality.py's 40-line-window BM25 (`WindowBM25`), its windows as results."""
    out = []
    for i in baseline.search(text, k):
        path, a, b = baseline.windows[i]
        out.append(Res(path, ((a, b),), (a, b)))
    return out


def is_test(path: str) -> bool:
    """SWE-bench's test-file rule for its BM25 documents: a path word test, tests or testing."""
    return bool({"test", "tests", "testing"} & set(re.split(r" |_|/|\.", path.lower())))


class FileBM25:
    """BM25 over whole files, SWE-bench's retrieval baseline: every non-test `.py` file is one
    document, its path then its contents (SWE-bench's `file_name_and_contents`); BM25 with
    Anserini's defaults k1=0.9, b=0.4 (SWE-bench searches with Pyserini). Words are lower-cased
    `\\w+` runs without stemming or stop words (Lucene's English analyser would stem and drop
    stop words). The whole issue text is the query (SWE-bench cuts it only past Lucene's clause limit).

    Tokens are cached per git blob, so the next commit of a repository re-reads changed files only.
    """

    def __init__(self, k1: float = 0.9, b: float = 0.4) -> None:
        self.k1, self.b = k1, b
        self._tokens: dict[str, Counter[str]] = {}  # blob id -> word counts of path + contents
        self.paths: list[str] = []

    def index(self, repo: Path) -> None:
        """The documents of `repo`'s HEAD tree."""
        out = subprocess.run(["git", "ls-files", "-s", "-z"], cwd=repo, check=True, capture_output=True)
        docs: list[tuple[str, str]] = []
        for entry in out.stdout.decode("utf-8", "surrogateescape").split("\0"):
            if not entry:
                continue
            meta, path = entry.split("\t", 1)
            if path.endswith(".py") and not is_test(path) and meta.startswith("100"):
                docs.append((path, meta.split()[1]))
        lengths = []
        postings: dict[str, dict[int, int]] = defaultdict(dict)
        self.paths = []
        for path, blob in docs:
            key = f"{blob}\0{path}"
            counts = self._tokens.get(key)
            if counts is None:
                text = (repo / path).read_bytes().decode("utf-8", errors="replace")
                counts = self._tokens[key] = Counter(WORDS.findall(f"{path}\n{text}".lower()))
            d = len(self.paths)
            self.paths.append(path)
            lengths.append(sum(counts.values()))
            for w, tf in counts.items():
                postings[w][d] = tf
        live = {f"{blob}\0{path}" for path, blob in docs}
        self._tokens = {k: v for k, v in self._tokens.items() if k in live}
        self.postings = postings
        self.lengths = np.asarray(lengths, dtype=np.float64)

    def search(self, query: str, k: int) -> list[str]:
        words = Counter(WORDS.findall(query.lower()))  # a repeated word counts again
        scores = bm25(self.postings, self.lengths, words, self.k1, self.b)
        top = np.argsort(-scores, kind="stable")[:k]
        return [self.paths[i] for i in top if scores[i] > 0]


def distinct_files(paths: Iterable[str], n: int) -> list[str]:
    """Files in order of first appearance, the first `n`."""
    return list(dict.fromkeys(paths))[:n]


def mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")
