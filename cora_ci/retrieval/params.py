"""The ranking's weights (`Params`, the measured defaults in `PARAMS`) and what a hit's `explain`
holds: one place for every knob `search` and `many` turn, and the benchmarks set."""

from __future__ import annotations

from dataclasses import dataclass, field

from cora_ci.retrieval.fusion import Fusion
from cora_ci.retrieval.query import Query

EXPLAIN_KEYS = (
    "query", "bm25_rank", "bm25_score", "vector_rank", "vector_score", "fused", "definition", "name",
    "evidence", "popular", "tested", "nested", "demoted", "dir", "kind", "file", "graph", "diversity",
    "boost", "related",
)  # fmt: skip


@dataclass(frozen=True)
class Params:
    """Ranking weights. Defaults are the measured choice (bench/quality.py, bench/RESULTS.md)."""

    fusion: Fusion = field(default_factory=Fusion)
    lexical: bool = True  # the switches let the benchmark rank by one side, or without features
    vectors: bool = True
    features: bool = True
    pool: int = 100  # candidates taken from each side
    pool_named: int = 50  # ... for a query that is one identifier (`search.pool_size`)
    keep: int = 6  # ... of which a sentence that names no code scores this many times k, best fused first
    rarity: float = 0.5  # a query word's weight in its vector: (its IDF here / the most) to this
    definition: float = 2.0  # added for the defining chunk of an identifier query: it comes first
    definition_in_text: float = 0.15  # ... of an identifier named inside a sentence
    related: float = 1.5  # added for a caller or callee of the definition a sentence asks them of
    name: float = 0.2  # times the share of query words in the chunk's symbol or file name
    demote: float = 0.3  # multiplier for tests, examples, vendored and generated code
    docs: float = 0.3  # ... for prose (Markdown, reStructuredText, plain text)
    docs_report: float = 0.3  # ... and this more in a bug report: it asks which code to change
    stub: float = 0.4  # ... for type stubs and declaration files (.pyi, .d.ts)
    private: float = 0.85  # ... for a private symbol (`_helper`) when a sentence does not name it
    data: float = 0.8  # ... for variables, constants and a class's fields when a sentence does not name them
    nested: float = 0.9  # ... for a function nested in a function, whose enclosing one takes its score
    dir_boost: float = 1.5  # multiplier for chunks under a `dir:` boost
    kind: float = 1.5  # multiplier for chunks of the kind a sentence asks for (`Query.kind`)
    file: float = 0.15  # times each of the file's other best scores (up to file_count of them),
    file_decay: float = 0.7  # ... the n-th weighted this to the n
    file_count: int = 5
    diversity: float = 0.8  # the n-th chunk of one file is multiplied by this to the n
    spread: float = 0.3  # ... for a question (`Query.question`): its answer spans more files
    floor: float = 0.2  # ... but a chunk of this share of the best score never below it (`select.diverse`)
    evidence: float = 1.0  # added for the chunk a traceback's innermost frame in the repository names
    evidence_file: float = 0.3  # ... for the other candidates of a file a report names, times the clue's
    seeds: int = 5  # top hits that seed PageRank
    graph: float = 0.1  # added: this times the graph score (PageRank mass / the largest mass)
    popular: float = 0.05  # added for a sentence: this times how much of the code refers to the chunk
    tested: float = 0.3  # added for a sentence to a tested file's chunks: this times what its test adds
    graph_min: float = 0.2  # graph-only chunks below this share of the largest mass are not added
    graph_slots: float = 0.2  # share of the places kept for chunks only the graph found (every 5th) ...
    graph_after: int = 10  # ... after the first this many, which are all direct hits
    reverse: float = 0.5  # weight of "is referenced by" edges relative to "references"
    hubs: float = 1.0  # a chunk's PageRank mass times 1 - this x how much of the code refers to it


PARAMS = Params()


def decay(q: Query, params: Params) -> float:
    """How much each further chunk of one file is discounted in the top k (`select.diverse`): a
    question's answer is spread over more files than a description's, which names one thing."""
    if not params.features or q.relation:  # a name's callers or callees: by their references, not spread
        return 1.0
    return params.spread if q.question else params.diversity
