"""Markdown, reStructuredText and AsciiDoc by heading sections; YAML, JSON and TOML by top-level keys.

Nested headings become nested sections (their path is the hierarchy); a key's comments above
it, and the braces or `---` lines around keys, go with the key instead of becoming chunks.
"""

from __future__ import annotations

import re
from typing import Any

from cora_ci.chunking.extractor import Extractor, Sym, last_row
from cora_ci.chunking.nodes import text_of
from cora_ci.chunking.outline import parser_for
from cora_ci.chunking.symbols import squash

Node = Any
_TRIVIAL = re.compile(r"^[\W_]*$")
_COMMENT = re.compile(r"^\s*(#|//)")


def _text(src: bytes, node: Node) -> str:
    return squash(text_of(src, node))


def _leaf(kind: str, name: str, start: int, end: int) -> Sym:
    return Sym(
        kind=kind,
        label=kind,
        name=name,
        start=start,
        end=end,
        def_start=start,
        head_start=start,
        sig_end=start,
    )


def markdown(root: Node, src: bytes) -> list[Sym]:
    top: list[Sym] = []
    stack: list[tuple[Node, list[Sym]]] = [(root, top)]
    while stack:
        node, out = stack.pop()
        for c in node.named_children:
            if c.type != "section":
                continue
            heading = next((h for h in c.named_children if h.type.endswith("_heading")), None)
            content = heading.child_by_field_name("heading_content") if heading is not None else None
            name = _plain(_text(src, content)) if content is not None else "(untitled)"
            sym = _leaf("section", name.strip("# ") or "(untitled)", c.start_point[0], last_row(c))
            out.append(sym)
            stack.append((c, sym.children))
    return top


# A heading's inline markup: an image (`![Rack](contrib/logo.webp)`, its alt text), a link (its
# text), an HTML tag (nothing). rack's README sections were anchored `![Rack](contrib/logo.webp)/...`.
_IMAGE_OR_LINK = re.compile(r"!?\[([^\[\]\n]*)\]\([^)\n]*\)")
_TAG = re.compile(r"</?[A-Za-z][^<>\n]*>")


def _plain(heading: str) -> str:
    return " ".join(_TAG.sub("", _IMAGE_OR_LINK.sub(r"\1", heading)).split())


def rst(root: Node, src: bytes, lines: list[str]) -> list[Sym]:
    """reStructuredText sections. The grammar gives each title with its adornment, not what the
    section holds: a title's level is the order in which its adornment style (overlined or not,
    its character) first appears in the file, as docutils reads it, and a section runs to the next
    title of its level or above."""
    heads: list[tuple[int, int, str]] = []  # (row, level, title)
    levels: dict[tuple[bool, str], int] = {}
    for c in (c for c in root.named_children if c.type == "section"):
        title = next((t for t in c.named_children if t.type == "title"), None)
        if title is None:
            continue
        under = lines[c.end_point[0]].strip()[:1] if c.end_point[0] < len(lines) else ""
        style = (c.start_point[0] < title.start_point[0], under)
        heads.append((c.start_point[0], levels.setdefault(style, len(levels)), _text(src, title).strip()))
    return _nested(heads, len(lines))


# AsciiDoc: a section title (`== Getting Started`, Markdown's `#` too) and a delimited block's line
# (`----` listing, `....` literal, `====` example, `****` sidebar, `////` comment, `|===` table), inside
# which nothing is a title. No grammar of the pack reads AsciiDoc: os-lib's 2,895-line Readme.adoc
# was read as reStructuredText, its sections the `[source,scala]` lines before its listings.
_ADOC_TITLE = re.compile(r"^(={1,6}|#{1,6})[ \t]++(\S.*)$")  # its closing marks cut in `asciidoc`
_ADOC_BLOCK = re.compile(r"^(?:([-.=*+_/])\1{3,}|\|===+|```)[ \t]*$")


def asciidoc(lines: list[str]) -> list[Sym]:
    """AsciiDoc sections: a title's level is its count of `=` (or `#`), and a section runs to the
    next title of its level or above."""
    heads: list[tuple[int, int, str]] = []
    block: str | None = None  # the delimiter of the block the line is in
    for row, line in enumerate(lines):
        if (m := _ADOC_BLOCK.match(line)) is not None:
            block = None if block == line.strip() else block or line.strip()
        elif block is None and (m := _ADOC_TITLE.match(line)) is not None:
            title = m[2].rstrip()
            closed = title.removesuffix(m[1]).rstrip()  # `== Title ==`
            cut = closed != title.removesuffix(m[1]) and closed != ""
            heads.append((row, len(m[1]), closed if cut else title))
    return _nested(heads, len(lines))


def _nested(heads: list[tuple[int, int, str]], rows: int) -> list[Sym]:
    """Sections of (row, level, title) titles: each runs to the next title of its level or above."""
    top: list[Sym] = []
    stack: list[tuple[int, Sym]] = []  # the open sections, outermost first: one pass, any number of titles
    for row, level, name in heads:
        while stack and stack[-1][0] >= level:
            stack.pop()[1].end = row - 1
        sym = _leaf("section", name or "(untitled)", row, row)
        (stack[-1][1].children if stack else top).append(sym)
        stack.append((level, sym))
    for _, sym in stack:
        sym.end = rows - 1
    return top


def keys(lang: str, root: Node, src: bytes) -> list[Sym]:
    """The top-level keys as chunks, unless two share a line: a compact document (`{"a": 1, "b":
    2}` on one line) would repeat that line in every key's chunk (a 2 KB one-line JSON took 12x
    its bytes), so it is chunked by lines instead (no keys)."""
    ex = Extractor(lang, src)
    out: list[Sym] = []
    for node, name in _key_nodes(lang, root, src):
        start, _, _ = ex.expand_up(node)
        if out and start <= out[-1].end:
            return []
        out.append(_leaf("key", name, start, last_row(node)))
    return out


def _key_nodes(lang: str, root: Node, src: bytes) -> list[tuple[Node, str]]:
    found: list[tuple[Node, str]] = []
    if lang == "toml":
        for c in root.named_children:
            if c.type in ("pair", "table", "table_array_element") and c.named_children:
                found.append((c, _text(src, c.named_children[0]).strip("\"'")))
        return found
    if lang == "json":
        objects = [c for c in root.named_children if c.type == "object"]
        for obj in objects[:1]:
            for pair in obj.named_children:
                key = pair.child_by_field_name("key")
                if pair.type == "pair" and key is not None:
                    found.append((pair, _text(src, key).strip("\"'")))
        return found
    for doc in root.named_children:  # yaml: stream > document > block_node > block_mapping > pairs
        if doc.type != "document":
            continue
        for node in doc.named_children:
            mapping = next((m for m in node.named_children if m.type == "block_mapping"), None)
            for pair in mapping.named_children if mapping is not None else []:
                key = pair.child_by_field_name("key")
                if pair.type == "block_mapping_pair" and key is not None:
                    found.append((pair, _text(src, key).strip("\"'")))
    return found


def absorb_trivia(syms: list[Sym], lines: list[str]) -> None:
    """Give braces, `---` and comment lines next to a key to that key instead of a chunk of their own."""
    covered: set[int] = set()
    for s in syms:
        covered.update(range(s.start, s.end + 1))
    runs: list[list[int]] = []
    cur: list[int] = []
    for r, line in enumerate(lines):
        if r in covered:
            if cur:
                runs.append(cur)
            cur = []
        elif line.strip():
            cur.append(r)
    if cur:
        runs.append(cur)
    ordered = sorted(syms, key=lambda s: s.start)
    for run in runs:
        trivial = all(_TRIVIAL.match(lines[x].strip()) for x in run)
        if not (trivial or all(_TRIVIAL.match(lines[x].strip()) or _COMMENT.match(lines[x]) for x in run)):
            continue
        nxt = next((s for s in ordered if s.start > run[-1]), None)
        prev = next((s for s in reversed(ordered) if s.end < run[0]), None)
        adjacent_next = nxt is not None and all(not lines[x].strip() for x in range(run[-1] + 1, nxt.start))
        if nxt is not None and (adjacent_next or (trivial and prev is None)):
            nxt.start = run[0]
        elif trivial and prev is not None:
            prev.end = run[-1]


def outline(lang: str, src: bytes, lines: list[str]) -> list[Sym]:
    if lang == "asciidoc":
        return asciidoc(lines)
    root = parser_for(lang).parse(src).root_node
    if lang == "markdown":
        return markdown(root, src)
    if lang == "rst":
        return rst(root, src, lines)
    syms = keys(lang, root, src)
    absorb_trivia(syms, lines)
    return syms
