"""The first sentence of a doc comment or docstring: what a chunk's header says of its symbol
(`assemble.py`) and what a result's summary line shows (`render/formats.py`). Apart from the
chunker so that a query, which renders but never chunks, does not import it."""

from __future__ import annotations

import re

# a comment's marker opening a line, and XML tags (`<see cref="X"/>`); a closing `*/` is cut apart:
# as one alternation, a line of 100,000 spaces was read from each of them (quadratic)
_DOC_MARKER = re.compile(r"^\s*(//!|///?|/\*\*?|\*/|\*|#+|\"\"\"|\'\'\'|--)\s?")
_TAG = re.compile(r"</?\w++[^<>]*+>")
_SENTENCE = re.compile(r"(.+?[.!?])(\s|$)")


def first_sentence(doc: str) -> str:
    """The first sentence of a doc comment or docstring, without comment markers or XML tags."""
    words: list[str] = []
    for raw in doc.splitlines():
        line = _TAG.sub("", _DOC_MARKER.sub("", raw, count=1)).strip().removesuffix("*/")
        line = line.strip().strip("\"'").strip()
        if not line:
            if words:
                break
            continue
        if line.startswith(("@", ":param", ":return", "Args:", "Returns:")):
            break
        words.append(line)
    text = " ".join(" ".join(words).split())
    m = _SENTENCE.match(text)
    sentence = m.group(1) if m else text
    return sentence[:200]
