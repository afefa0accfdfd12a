"""Stage 3: the reference graph. Per chunk, the names it uses; resolved to the chunks defining them.

Two halves, so that incremental builds can redo only what changed:

- `extract_refs` (one file): import specifiers and, per chunk, referenced names. Store it per file.
- `build_graph` (all files): resolution to defining chunks and a compact CSR `Graph`; a pure,
  order-independent function of every file's chunks and `FileRefs`.

`personalized_pagerank` runs at query time, seeded with the best hits, to rank related chunks.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cora_ci.graph.build import Graph, build_graph
    from cora_ci.graph.extract import FileRefs, extract_refs
    from cora_ci.graph.rank import personalized_pagerank

__all__ = ["FileRefs", "Graph", "build_graph", "extract_refs", "personalized_pagerank"]
_HOME = {"FileRefs": "extract", "extract_refs": "extract", "Graph": "build", "build_graph": "build",
         "personalized_pagerank": "rank"}  # fmt: skip


def __getattr__(name: str) -> Any:
    """Each name from its module on first use: a bundle reader (`graph.build`'s edges) does not
    load extraction's tree-sitter queries."""
    if name in _HOME:
        return getattr(import_module(f"cora_ci.graph.{_HOME[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
