"""Jupyter notebooks as the script they amount to, row for row.

A notebook is JSON: its cells' sources as lists of strings, one line each, among the outputs
(base64 images, tables, tracebacks) and metadata. Chunked as JSON, its chunks were mostly that
output (sympy's fresnel_integrals.ipynb: 214 KB of chunk text, nearly all a PNG's base64), its code
no symbols. Here it becomes a script of the kernel's language, as jupytext writes one: each source
line at the row of the file where it stands, code as it is, markdown as comments, IPython's magics
and shell escapes commented out; every other row is left out (blank, and never bridged: a chunk
spanning two cells marks the rows between as elided). Line numbers stay the notebook's own, so
results, anchors and the working tree agree, and the script is chunked by the language's grammar.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from cora_ci.chunking.outline import parser_for
from cora_ci.files.langs import grammar_available

Node = Any
# the kernel's language name (kernelspec, language_info, a v3 cell's) -> ours
_LANGS = {"python": "python", "python3": "python", "r": "r", "julia": "julia", "scala": "scala",
          "javascript": "javascript", "typescript": "typescript", "ruby": "ruby", "bash": "bash",
          "c++": "cpp", "cpp": "cpp", "rust": "rust", "go": "go", "java": "java", "c#": "csharp",
          "csharp": "csharp", "kotlin": "kotlin", "lua": "lua"}  # fmt: skip
_HASH_COMMENTS = frozenset({"python", "r", "julia", "ruby", "bash"})
_TEXT_CELLS = frozenset({"markdown", "heading"})  # heading: nbformat 3's


class Script(NamedTuple):
    lang: str
    lines: list[str]  # as many as the notebook's: a cell's source line at its own row, others ""
    excluded: frozenset[int]  # the rows that hold no source line


def script(lines: list[str]) -> Script | None:
    """The notebook whose rows are `lines` as a script, or None when it is no notebook of ours:
    not a notebook's JSON, a language without a grammar, or two source strings on one row."""
    src = "\n".join(lines).encode("utf-8", "surrogatepass")
    try:
        meta = json.loads(src)
    except (ValueError, RecursionError):  # json nests recursively: a hostile file nests deep
        return None
    if not isinstance(meta, dict) or not isinstance(meta.get("cells", meta.get("worksheets")), list):
        return None
    lang = _LANGS.get(_language(meta).lower())
    if lang is None or not grammar_available(lang):
        return None
    out = [""] * len(lines)
    kept: set[int] = set()
    comment = "#" if lang in _HASH_COMMENTS else "//"
    for kind, strings in _cells(parser_for("json").parse(src).root_node, src):
        for node in strings:
            text, row = _line(node, src), node.start_point[0]
            if text is None or row in kept:
                return None
            kept.add(row)
            out[row] = _shown(kind, text, lang, comment)
    return Script(lang, out, frozenset(range(len(lines))) - kept)


def _language(meta: dict[str, Any]) -> str:
    info = meta.get("metadata")
    info = info if isinstance(info, dict) else {}
    for key in ("kernelspec", "language_info"):
        part = info.get(key)
        if isinstance(part, dict):
            name = part.get("language" if key == "kernelspec" else "name")
            if isinstance(name, str) and name:
                return name
    for ws in meta.get("worksheets") or []:  # nbformat 3: each code cell names its language
        for cell in ws.get("cells", []) if isinstance(ws, dict) else []:
            if isinstance(cell, dict) and isinstance(cell.get("language"), str):
                return str(cell["language"])
    return "python"


def _cells(root: Node, src: bytes) -> list[tuple[str, list[Node]]]:
    """Each cell's type and the string nodes of its source (nbformat 4's `cells`, 3's
    `worksheets[].cells`; a v3 code cell's source is its `input`)."""
    top = _pairs(next((c for c in root.named_children if c.type == "object"), None), src)
    arrays = [top["cells"]] if "cells" in top else [
        _pairs(ws, src).get("cells") for ws in _items(top.get("worksheets"))
    ]  # fmt: skip
    found = []
    for array in arrays:
        for cell in _items(array):
            pairs = _pairs(cell, src)
            kind = _string(pairs.get("cell_type"), src) or ""
            source = pairs.get("source") or pairs.get("input")
            if kind != "raw" and source is not None:
                found.append((kind, _items(source) if source.type == "array" else [source]))
    return found


def _pairs(obj: Node | None, src: bytes) -> dict[str, Node]:
    """An object node's values by key."""
    out: dict[str, Node] = {}
    for pair in obj.named_children if obj is not None and obj.type == "object" else []:
        key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
        name = _string(key, src)
        if pair.type == "pair" and name is not None and value is not None:
            out[name] = value
    return out


def _items(array: Node | None) -> list[Node]:
    return [c for c in array.named_children if c.type != "comment"] if array is not None else []


def _string(node: Node | None, src: bytes) -> str | None:
    if node is None or node.type != "string":
        return None
    try:
        value = json.loads(src[node.start_byte : node.end_byte])
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _line(node: Node, src: bytes) -> str | None:
    """A source string (a JSON string is one row) without its newline; None if it is no string."""
    text = _string(node, src)
    return None if text is None else text.removesuffix("\n").removesuffix("\r")


def _shown(kind: str, text: str, lang: str, comment: str) -> str:
    """A cell's line in the script. Several lines in one string (nbformat 3 allowed a cell's
    source as one) cannot each keep a row: they stay one comment, escaped, still searchable."""
    if "\n" in text or "\r" in text:
        return f"{comment} {json.dumps(text, ensure_ascii=False)[1:-1]}"
    if kind in _TEXT_CELLS:
        return f"{comment} {text}".rstrip() if text.strip() else comment
    if lang == "python" and text.lstrip().startswith(("%", "!")):  # IPython's magics, shell escapes
        return f"# {text}"
    return text
