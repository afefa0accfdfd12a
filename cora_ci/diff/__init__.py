"""`cora-ci diff OLD NEW`: what changed between two bundles of one repository, symbol by symbol.

Symbols are matched by anchor (`path::Qualified.name`), which does not depend on line numbers: a
symbol whose anchor is in both bundles is unchanged or `modified` (its signature, or only its
body); one in OLD only is `removed`, in NEW only `added`, except that a removal and an addition are
`moved` when the qualified name is the same in another file, and `renamed` when the code is the
same but for the name. Only files whose git blob differs are read (the manifests' file tables say
which), so a diff costs what changed. The symbols of a file are its outline's: members of a small
type kept whole in one chunk included.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Literal

from cora_ci.bundle import Bundle
from cora_ci.render.nested import indexed_lines
from cora_ci.render.outline import Entry, outline
from cora_ci.render.source import BundleChunks, indexed_blobs

Change = Literal["added", "removed", "modified", "renamed", "moved"]


@dataclass(frozen=True)
class Symbol:
    anchor: str
    path: str
    qual: str
    name: str
    kind: str
    start_line: int
    end_line: int
    signature: str
    text_sha: str  # of its lines
    shape_sha: str  # of its lines with its own name blanked out: a rename keeps it


@dataclass(frozen=True)
class Changed:
    change: Change
    old: Symbol | None
    new: Symbol | None
    detail: str = ""  # modified: "signature" or "body"; moved: "and modified" when it changed too

    @property
    def anchor(self) -> str:
        s = self.new or self.old
        assert s is not None
        return s.anchor


@dataclass
class Diff:
    changes: list[Changed] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # path -> added | removed | modified

    def count(self, change: Change) -> int:
        return sum(c.change == change for c in self.changes)


def changed_files(old: Bundle, new: Bundle) -> dict[str, str]:
    """Files whose blob differs: path -> added | removed | modified."""
    a, b = indexed_blobs(old.manifest), indexed_blobs(new.manifest)
    out = {p: "removed" for p in a if p not in b}
    out |= {p: "added" for p in b if p not in a}
    out |= {p: "modified" for p in a if p in b and a[p] != b[p]}
    return dict(sorted(out.items()))


def symbols(bundle: Bundle, paths: list[str]) -> dict[str, Symbol]:
    """The symbols of the files `paths` of `bundle`, by anchor (as indexed: no working tree)."""
    source = BundleChunks(bundle, None)
    out: dict[str, Symbol] = {}
    for path in paths:
        chunks = source.file_chunks(path)
        if not chunks:
            continue
        lines = indexed_lines(chunks)
        for e in outline(source, path).entries:
            out[e.anchor] = _symbol(e, path, lines[e.start_line - 1 : e.end_line])
    return out


def _symbol(e: Entry, path: str, lines: list[str]) -> Symbol:
    text = "\n".join(t.rstrip() for t in lines)
    shape = re.sub(rf"(?<![\w$]){re.escape(e.symbol)}(?![\w$])", "\0", text) if e.symbol else text
    qual = e.anchor.split("::", 1)[1] if "::" in e.anchor else e.anchor
    return Symbol(e.anchor, path, qual, e.symbol, e.kind, e.start_line, e.end_line, e.signature,
                  _sha(text), _sha(shape))  # fmt: skip


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def diff_bundles(old: Bundle, new: Bundle) -> Diff:
    """Every symbol added, removed, modified, renamed or moved from `old` to `new`."""
    files = changed_files(old, new)
    before = symbols(old, [p for p, c in files.items() if c != "added"])
    after = symbols(new, [p for p, c in files.items() if c != "removed"])
    out: list[Changed] = []
    for anchor in sorted(before.keys() & after.keys()):
        a, b = before[anchor], after[anchor]
        if a.text_sha != b.text_sha:
            out.append(Changed("modified", a, b, "signature" if a.signature != b.signature else "body"))
    gone = [before[k] for k in sorted(before.keys() - after.keys())]
    came = {k: after[k] for k in sorted(after.keys() - before.keys())}
    by_qual = {(s.qual, s.kind): s for s in came.values()}
    by_shape = {(s.shape_sha, s.kind, s.path): s for s in came.values()}
    for s in gone:
        moved = by_qual.get((s.qual, s.kind))
        if moved is not None and moved.anchor in came and moved.path != s.path:
            del came[moved.anchor]
            out.append(Changed("moved", s, moved, "" if moved.text_sha == s.text_sha else "and modified"))
            continue
        renamed = by_shape.get((s.shape_sha, s.kind, s.path))
        if renamed is not None and renamed.anchor in came:
            del came[renamed.anchor]
            out.append(Changed("renamed", s, renamed))
            continue
        out.append(Changed("removed", s, None))
    out += [Changed("added", None, s) for s in came.values()]
    order = {"removed": 0, "renamed": 1, "moved": 2, "modified": 3, "added": 4}
    out.sort(key=lambda c: ((c.new or c.old).path, (c.new or c.old).start_line, order[c.change]))  # type: ignore[union-attr]
    return Diff(out, files)
