"""The chunk record: what `cora-ci chunk` prints and what a bundle stores per chunk."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

KINDS = ("file", "type", "method", "property", "field", "event", "module", "section", "key", "lines")
STRATEGIES = ("structural", "markup", "lines")
# What may follow an anchor's qualified name: an overload's parameters, a repeated name's `#n`.
# A function declared, not defined (C's `int uv_run(uv_loop_t*);`, a class's `void f();`, an Elixir
# behaviour's `@callback`): a symbol labelled so, that ranks behind the function's definition
# (`retrieval/definitions.py`) and shares a chunk with no definition (`assemble`)
DECLARATION = "declaration"
OVERLOAD = re.compile(r"\(.*$|#\d+$", re.DOTALL)


class Diagnostic(NamedTuple):
    code: str
    message: str
    line: int | None = None


@dataclass(slots=True)
class Chunk:
    """One retrievable piece of a file (slotted: chunks are many small objects, the chunker's
    output and a reader's per-file cache in `bundle/tables.py`; a build packs them file by file).

    `text` is verbatim source, except that `elided` line ranges (1-based, inclusive) inside
    `start_line..end_line` are replaced by a `. . .` line: a type keeps its member signatures and
    leaves bodies to the members' own chunks, so every body line is embedded once.
    """

    id: int
    path: str
    lang: str
    kind: str
    symbol: str
    symbols: list[str]
    anchor: str | None
    anchors: list[str]
    hierarchy: list[str]
    parent: int | None
    children: list[int]
    start_line: int
    end_line: int
    tokens: int
    header: str
    text: str
    strategy: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    elided: list[tuple[int, int]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["diagnostics"] = [dict(code=c, message=m, line=ln) for c, m, ln in self.diagnostics]
        d["elided"] = [list(r) for r in self.elided]
        return d

    def verbatim_ranges(self) -> list[tuple[int, int]]:
        """Line ranges (1-based, inclusive) whose text this chunk holds verbatim: its range minus `elided`."""
        out: list[tuple[int, int]] = []
        pos = self.start_line
        for a, b in [*sorted(self.elided), (self.end_line + 1, self.end_line + 1)]:
            if a > pos:
                out.append((pos, a - 1))
            pos = max(pos, b + 1)
        return out

    def covered_lines(self) -> set[int]:
        return {line for a, b in self.verbatim_ranges() for line in range(a, b + 1)}


ELISION = ". . ."
ID_BITS = 53  # ids stay exact in JSON consumers that use doubles


MAX_PARTS = 256  # parts of one split symbol looked for by its anchor


def part_key(key: str, k: int) -> str:
    """The id key of part `k` (1-based) of a symbol split into several chunks."""
    return key if k == 1 else f"{key}@part{k}"


PART = re.compile(r"Part (\d+) of (\d+)\.$")  # how a split symbol's header ends (`assemble`)


def part_of(header: str) -> tuple[int, int] | None:
    """(k, n) of a split symbol's part k of n, from its chunk's header; None for a whole one."""
    m = PART.search(header)
    return (int(m.group(1)), int(m.group(2))) if m else None


def later_parts(path: str, qual: str, exists: Callable[[int], bool]) -> list[int]:
    """The ids of parts 2, 3, ... of the symbol `path::qual`, as long as `exists(id)`."""
    out: list[int] = []
    for k in range(2, MAX_PARTS):
        cid = chunk_id(path, part_key(qual, k))
        if not exists(cid):
            break
        out.append(cid)
    return out


def chunk_id(path: str, key: str) -> int:
    """A reproducible id for a chunk: a hash of its path and its identity within the file.

    The key is the anchor (or kind and ordinal for anonymous chunks) and never a line number, so a
    chunk keeps its id when code above it moves and incremental and full builds agree.
    """
    digest = hashlib.blake2b(f"{path}\0{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> (64 - ID_BITS)
