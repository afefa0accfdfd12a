"""What a bundle records about its embedding model, and what a chunk's embedded text is.

Kept free of numpy and onnxruntime so that reading or comparing model metadata costs no heavy import.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cora_ci.chunking.model import Chunk

POOLINGS = ("mean", "cls")
# The bundled models are package data installed as plain files beside this module (never zipped):
# found by path, since `importlib.resources.files` imports its readers and zipfile (~8 ms of a
# query or hook process).
BUNDLED = Path(__file__).resolve().parent
_MAX_HEADER = 400  # characters, about 100 tokens of the 256-token window


@dataclass(frozen=True)
class ModelInfo:
    """Identity and settings of an embedding model; goes into the bundle manifest (`asdict`).

    Two bundles' vectors are comparable only if their ModelInfo is equal: the checksums pin the
    weights and the tokenizer, the other fields pin how text becomes a vector.
    """

    name: str
    dim: int
    model_sha256: str
    tokenizer_sha256: str
    max_length: int
    pooling: str
    query_prefix: str
    document_prefix: str


def document_text(chunk: Chunk) -> str:
    """The text embedded for a chunk: context lines first, then the verbatim code.

    The model sees at most `max_length` tokens and truncation cuts the end, so the symbol
    hierarchy ("class:Foo > method:bar") and the natural-language header come first and always
    survive; the code fills the rest of the window. The path is left out on purpose: the vector is
    then a function of the code alone, so a renamed file or a function moved to another file reuses
    its vector instead of being embedded again (BM25 indexes the path, and ranking weighs it).
    """
    lines: list[str] = []
    if chunk.hierarchy:
        lines.append(" > ".join(chunk.hierarchy))
    if chunk.header:
        # A merged chunk's header lists every member's signature; capped, so code still fits.
        head = chunk.header
        lines.append(head if len(head) <= _MAX_HEADER else head[:_MAX_HEADER] + " ...")
    lines.append(chunk.text)
    return "\n".join(lines)
