"""Stage 6: ranking. A query against a bundle -> `Hit`s, best first (rendering is `cora_ci.render`).

`search` fuses BM25 and vector search, applies the query-aware ranking, expands along the reference
graph and applies boosts and filters; `parse_boost` / `read_boosts` / `bundle_boosts` read boost
directives from the command line, a `.cora-boosts` file and a bundle.
"""

from cora_ci.boosts import parse_boost, read_boosts
from cora_ci.retrieval.boosts import bundle_boosts, merge
from cora_ci.retrieval.params import EXPLAIN_KEYS, PARAMS, Params
from cora_ci.retrieval.search import search
from cora_ci.retrieval.types import Boost, Filters, Hit

__all__ = [
    "EXPLAIN_KEYS",
    "PARAMS",
    "Boost",
    "Filters",
    "Hit",
    "Params",
    "bundle_boosts",
    "merge",
    "parse_boost",
    "read_boosts",
    "search",
]
