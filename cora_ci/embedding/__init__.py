"""Stage 3: chunks to vectors, fully offline.

Two models ship in the package, verified by sha256 before use: `minilm`, an int8 ONNX build of
all-MiniLM-L6-v2 in `minilm/` (tools/model/build_model.py), run by onnxruntime; and `static`, a
token-vector table in `minilm_static/` distilled from it and trained on code (tools/model/), summed
in numpy, over 100x faster. `default` names one of them (`DEFAULT_MODEL`, chosen by
bench/RESULTS.md's quality and build-time table). `load_embedder(DIR)` takes any ONNX sentence
encoder directory or static table instead, and `load_embedder("none")` means a lexical-only bundle.

Long chunks. Chunks may hold ~800 tokens, the model's window is `max_length` (256 for MiniLM;
the static table reads the whole text).
A chunk is embedded as `document_text`: its context (path, symbol hierarchy, header) first, then
its code, truncated to the window. Nothing is lost for search: the bundle's BM25 index holds the
full text, and the head of a symbol (signature, docstring, first statements) carries most of what
it means. bench/embed_speed.py measures how many chunks and tokens truncation touches.

Determinism. Each text runs alone, so its vector never depends on the other texts of a call (see
`runtime`). Import cost. Importing this package loads neither numpy nor onnxruntime; `Embedder`
resolves lazily, and onnxruntime sessions are created on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cora_ci.embedding.info import ModelInfo, document_text

if TYPE_CHECKING:
    from cora_ci.embedding.runtime import Embedder
    from cora_ci.embedding.static import StaticEmbedder

__all__ = ["DEFAULT_MODEL", "MODELS", "Deferred", "Embedder", "ModelInfo", "bundled", "deferred_embedder",
           "document_text", "load_embedder"]  # fmt: skip

MODELS = ("static", "minilm")  # the bundled models, by the names `--model` takes
DEFAULT_MODEL = "static"  # what "default" (and no --model) means: bench/RESULTS.md, issue 18


def bundled(spec: str | None) -> str | None:
    """The bundled model a spec names ("default" resolved), or None for "none" and directories."""
    name = DEFAULT_MODEL if spec is None or spec == "default" else spec
    return name if name in MODELS else None


def load_embedder(spec: str | None) -> Embedder | StaticEmbedder | None:
    """None or "default": the default bundled model; "static" or "minilm": that bundled model;
    "none": no embeddings; anything else: a model directory."""
    from cora_ci.embedding import loading

    name = bundled(spec)
    if name == "minilm":
        return loading.load_minilm()
    if name == "static":
        return loading.load_static()
    if spec == "none":
        return None
    return loading.load_directory(Path(str(spec)))


class Deferred:
    """An embedder known by its `info` at once and loaded (weights read and checked, onnxruntime
    imported) on first use of anything else: an update that embeds nothing, such as a hook's
    no-op, then pays none of it."""

    def __init__(self, info: ModelInfo, load: Callable[[], Embedder | StaticEmbedder]) -> None:
        self.info = info
        self._load = load
        self._real: Embedder | StaticEmbedder | None = None

    def __getattr__(self, name: str) -> Any:  # only what `__init__` did not set
        if self._real is None:
            self._real = self._load()
        return getattr(self._real, name)


def deferred_embedder(spec: str | None) -> Deferred | Embedder | StaticEmbedder | None:
    """`load_embedder`, except that a bundled model, whose identity is known without reading it,
    is loaded only when first used."""
    from cora_ci.embedding import loading

    name = bundled(spec)
    if name == "minilm":
        return Deferred(loading.MINILM_INFO, loading.load_minilm)
    if name == "static":
        return Deferred(loading.STATIC_INFO, loading.load_static)
    return load_embedder(spec)


def __getattr__(name: str) -> Any:
    if name == "Embedder":  # lazily: the runtime module imports numpy
        from cora_ci.embedding.runtime import Embedder

        return Embedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
