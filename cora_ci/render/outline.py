"""`cora-ci outline`: one file's table of contents, each symbol with its kind, lines and anchor.

Read from the bundle's chunks of the file, so it costs a few milliseconds and needs no parse: a
split symbol is one entry over all its parts, each of several small siblings sharing a chunk gets
its own lines. Lines are the working tree's when the file changed since indexing (by anchor, as
`show` finds them); a symbol no longer there keeps its indexed lines, marked `missing`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

import click

from cora_ci.chunking.model import ELISION, Chunk
from cora_ci.errors import CoraError
from cora_ci.rebind.bind import Stale
from cora_ci.rebind.view import View, commented, mentions
from cora_ci.render import nested
from cora_ci.render.formats import attr, escape_text, guard, visible
from cora_ci.render.nested import Inner
from cora_ci.render.siblings import sibling
from cora_ci.render.source import BundleChunks

_SIGNATURE_CHARS = 200


@dataclass(frozen=True)
class Entry:
    anchor: str
    symbol: str
    kind: str  # the chunk kind: type, method, property, field, ...
    declared: str  # the language's word for it: class, interface, function, constructor, ...
    depth: int  # 0 at the top of the file, 1 for a member of a top-level type, ...
    start_line: int
    end_line: int
    signature: str  # the line that declares it
    stale: Stale


@dataclass
class Outline:
    path: str
    lang: str
    entries: list[Entry]


def outline(source: BundleChunks, path: str) -> Outline:
    """The symbols of the indexed file `path` in line order (CORA-QRY-004 if it is not indexed);
    written absolute inside the working tree, the file there."""
    from cora_ci.render.anchors import relative

    table = source.bundle.chunks
    path = relative(source, path)
    fi = table.file_index(path)
    if fi is None:
        raise CoraError("CORA-QRY-004", f"no file {path!r} in {source.bundle.root}")
    chunks = [table.chunk(row) for row in table.file_rows(fi)]
    groups: dict[str, list[tuple[Chunk, str]]] = {}
    for c in chunks:
        if c.kind == "file":
            continue
        for name, anchor in zip(c.symbols, c.anchors, strict=False):
            groups.setdefault(anchor, []).append((c, name))
    entries = [_entry(source, anchor, parts) for anchor, parts in groups.items()]
    if nested.wanted(chunks):  # members of a type kept whole in one chunk
        inner = source.symbols_of(path, chunks)
        entries += [_inner_entry(s) for a, s in inner.items() if a not in groups]
    entries.sort(key=lambda e: (e.start_line, e.depth, -e.end_line))
    return Outline(path, table.file_lang(fi), entries)


def _entry(source: BundleChunks, anchor: str, parts: list[tuple[Chunk, str]]) -> Entry:
    first, name = parts[0]
    views: list[View] = []
    stale: Stale = None
    for c, _ in parts:
        bound = source.bind(c)
        if bound.stale == "missing" and views:
            continue
        view = sibling(bound.view, c, anchor) if len(c.anchors) > 1 else bound.view
        views.append(view)
        stale = bound.stale if bound.stale == "missing" or stale is None else stale
    rows = list(dict(sorted((n, t) for v in views for n, t in v.rendered() if n is not None)).values())
    sig = _declaration(rows, name, first.lang) if rows else views[0].text().split("\n", 1)[0].strip()
    declared = first.hierarchy[-1].split(":", 1)[0] if first.hierarchy else first.kind
    return Entry(
        anchor, name, first.kind, declared, max(len(first.hierarchy) - 1, 0),
        min(v.start for v in views), max(v.end for v in views), sig[:_SIGNATURE_CHARS], stale,
    )  # fmt: skip


def _in_docs(rows: list[str]) -> set[int]:
    """The rows of triple-quoted strings (Elixir's `@doc \"\"\"` heredocs, Python's docstrings): a
    doc's example names what it documents (phoenix's outline declared 119 of 1,586 symbols by a
    line of their docs: `pipe_through [` for `pipe_through`, `iex> conn = put_layout(...)`)."""
    out: set[int] = set()
    inside = False
    for i, t in enumerate(rows):
        marks = t.count('"""') + t.count("'''")
        if inside or marks:
            out.add(i)
        if marks % 2:
            inside = not inside
    return out


def _declaration(rows: list[str], name: str, lang: str) -> str:
    """The line declaring `name`: the first naming it outside a comment or a doc and not only in
    a string (`@SerializedName("name")`), else one naming it, else the first; a line that closes
    a body (C's `} uv_errno_t;`) after the line that opens it (`typedef enum { . . . } uv_errno_t;`)."""
    docs = _in_docs(rows)
    named = [i for i, t in enumerate(rows) if mentions(t, name)]
    code = [i for i in named if i not in docs and not commented(rows[i], lang)]
    at = next(
        (i for i in code if not _only_quoted(rows[i], name)),
        next((i for i in named if not _only_quoted(rows[i], name)), named[0] if named else 0),
    )
    line = rows[at].strip()
    if line.startswith("}"):
        opening = next((t.strip() for t in rows[:at] if t.strip() and not commented(t, lang)), None)
        if opening is not None:
            return f"{opening} {ELISION} {line}"
    return line


def _only_quoted(line: str, name: str) -> bool:
    """`name` occurs in `line` only as a string (`@SerializedName("name")`, Kotlin's
    `@Deprecated(replaceWith = ReplaceWith("delegate"))` above `fun delegate()`): an annotation
    naming the symbol, not the line that declares it."""
    bare = line
    for q in ('"', "'", "`"):
        bare = bare.replace(f"{q}{name}{q}", "")
    return not mentions(bare, name)


def _inner_entry(s: Inner) -> Entry:
    return Entry(s.anchor, s.sym.name, s.sym.kind, s.sym.label, s.depth, s.start, s.end,
                 s.signature[:_SIGNATURE_CHARS], s.stale)  # fmt: skip


def as_indexed(path: str) -> str:
    """A path as the bundle names files: `/`-separated, relative, without a leading `./`."""
    return path.replace("\\", "/").removeprefix("./")


def outline_dict(o: Outline) -> dict[str, Any]:
    return {"path": o.path, "lang": o.lang, "symbols": [asdict(e) for e in o.entries]}


def as_json(o: Outline, bundle: str, bundle_id: str | None) -> str:
    doc = {"bundle": bundle, "bundle_id": bundle_id, **outline_dict(o)}
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _line(e: Entry) -> str:
    stale = f"  [{e.stale}]" if e.stale else ""
    return f"{e.start_line}-{e.end_line}  {'  ' * e.depth}{e.signature}{stale}"


def as_cora(o: Outline) -> str:
    """One `<cora:chunk>` whose content lists the symbols: lines, declaration, anchor."""
    end = max((e.end_line for e in o.entries), default=1)
    rows = "\n".join(f"{_line(e)}  (anchor: {e.anchor})" for e in o.entries)
    note = (
        f"Outline of {o.path}: {len(o.entries)} symbols, one per line: lines, declaration, anchor. "
        "Pass an anchor to show or related."
    )
    return (
        "<cora:chunk>\n"
        f'  <cora:metadata>\n    file="{attr(o.path)}" lines="1-{end}" kind="outline" lang="{attr(o.lang)}"\n'
        "  </cora:metadata>\n"
        f"  <cora:commentary>\n    {escape_text(note)}\n  </cora:commentary>\n"
        f"  <cora:content>\n{guard(rows)}\n  </cora:content>\n"
        "</cora:chunk>"
    )


def as_text(o: Outline) -> Iterator[str]:
    yield click.style(visible(o.path), bold=True) + click.style(
        f"  {o.lang}, {len(o.entries)} symbols", dim=True
    )
    width = max((len(f"{e.start_line}-{e.end_line}") for e in o.entries), default=3)
    for e in o.entries:
        lines = click.style(f"{e.start_line}-{e.end_line}".rjust(width), dim=True)
        stale = click.style(f"  [{e.stale}]", fg="yellow", bold=True) if e.stale else ""
        qual = e.anchor.split("::", 1)[-1]
        body = "  " * e.depth + visible(e.signature)
        yield f"{lines}  {body}{stale}  " + click.style(f"::{visible(qual)}", dim=True)
