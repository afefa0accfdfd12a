"""Which candidate a name's definition bonus goes to: one principal per definition family (a
split definition's parts, overloads, a type and the blocks extending it, a class and its
constructor), and a file's header kept behind the file's definition. Ranking's features
(`search._features`) apply the bonus; this decides its share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from cora_ci.chunking.model import OVERLOAD
from cora_ci.retrieval.catalog import Catalog, Meta

EXTENSIONS = ("impl:", "extension:")  # hierarchy entries (`label:name`) of blocks that extend a type
HEADER = 0.1  # a file's header where the file's definition of the name asked for is found
K = TypeVar("K")


class Candidate(Protocol):
    """What these read and write of a ranking candidate (`search._Cand`)."""

    meta: Meta
    score: float
    explain: dict[str, Any]


def family(m: Meta, constructors: bool = False) -> str:
    """What a definition's parts and overloads share: its anchor without an overload suffix. With
    `constructors` (a bare name asked for), a constructor named as its type (Java's, C#'s, C++'s
    `MethodSpec.MethodSpec`) is of the type's family: short, it outscored the class on BM25 and
    took the definition of `MethodSpec`."""
    a = m.anchor or ""
    if "::" not in a:
        return a
    a = OVERLOAD.sub("", a)
    owner, _, name = a.rpartition(".")
    if constructors and m.kind == "method" and owner and owner.rpartition("::")[2].rpartition(".")[2] == name:
        return owner
    return a


def principal(cat: Catalog, cands: Mapping[K, Candidate], constructors: bool = False) -> dict[str, K]:
    """Per definition family, the candidate that gets the full definition bonus: a split one's
    first part; of a type and its extensions (Rust's `impl S` blocks, Swift's `extension S`), the type;
    of overloads (`f(int)`, `f(str)` and the `f(x)` that implements them), the longest (the
    implementation, not a bare signature), the first in the file of equals. Keys are chunk ids,
    or bundle and chunk id (`many.py`)."""
    best: dict[str, K] = {}
    for key, c in cands.items():
        if c.meta.anchor is None:
            continue
        fam = family(c.meta, constructors)
        have = best.get(fam)
        if have is None:
            best[fam] = key
            continue
        h, m = cands[have].meta, c.meta
        if m.anchor == h.anchor:  # parts of one split definition: the first
            better = m.start_line < h.start_line
        elif m.kind == h.kind == "type" and extends(cat, m) != (h_extends := extends(cat, h)):
            better = h_extends  # the declaration over the block extending it
        else:  # overloads: the longest
            better = (m.end_line - m.start_line, -m.start_line) > (h.end_line - h.start_line, -h.start_line)
        if better:
            best[fam] = key
    return best


def extends(cat: Catalog, m: Meta) -> bool:
    """The chunk adds to a type declared elsewhere (a Rust `impl`, a Swift `extension`) rather than
    declaring it: its own hierarchy entry says so (read only for a type that matches a name asked
    for, or rivals another member of its family: a few chunks a query)."""
    hierarchy = cat.table.chunk(m.row).hierarchy
    return bool(hierarchy) and hierarchy[-1].startswith(EXTENSIONS)


def headers_behind_definitions(cands: Mapping[K, Candidate]) -> set[K]:
    """A file's header chunk (package, namespace, imports) named after its file matches a name
    asked for as the file's definition of it does (`IMediator.cs`'s `namespace MediatR;` came
    second to `interface IMediator`): where that definition is found, the header adds nothing
    and ranks behind the file's other chunks. The keys of the headers lowered, which take no
    share of their file's score (`search._file_share`); a class that lowered one already (a
    test's header) keeps its name in `explain`."""
    defined = {c.meta.path for c in cands.values() if c.explain["definition"]}
    lowered = set()
    for key, c in cands.items():
        if c.meta.kind == "file" and c.meta.path in defined:
            c.score *= HEADER
            c.explain["demoted"] = c.explain["demoted"] or "header"
            lowered.add(key)
    return lowered
