"""Outline to chunks: file chunk, type skeletons, members, merged small siblings, module code.

Parent-child without duplicated code: a type's chunk keeps its declaration, its own lines and the
*signatures* of its members; member bodies live only in the members' chunks. Whatever belongs to
no symbol and is not in the file chunk becomes `module` chunks, so every line is somewhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from cora_ci.chunking.extractor import Sym
from cora_ci.chunking.model import DECLARATION, Chunk, Diagnostic, chunk_id, part_key
from cora_ci.chunking.pack import Piece, Rows
from cora_ci.chunking.sentences import first_sentence
from cora_ci.config import Config

MAX_SIGNATURE_ROWS = 8
_MERGEABLE = frozenset({"type", "method", "property", "field", "event", "section", "key"})


@dataclass
class FileCtx:
    path: str
    lang: str
    rows: Rows
    cfg: Config
    strategy: str
    chunks: list[Chunk] = field(default_factory=list)
    _keys: set[int] = field(default_factory=set)
    _ordinals: dict[str, int] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).name

    def new_id(self, key: str) -> int:
        cid = chunk_id(self.path, key)
        while cid in self._keys:  # a hash collision inside one file: deterministic re-roll
            key += "!"
            cid = chunk_id(self.path, key)
        self._keys.add(cid)
        return cid

    def ordinal(self, kind: str) -> int:
        self._ordinals[kind] = self._ordinals.get(kind, 0) + 1
        return self._ordinals[kind]

    def add(
        self,
        piece: Piece,
        *,
        key: str,
        kind: str,
        symbols: list[str],
        anchors: list[str],
        hierarchy: list[str],
        parent: int | None,
        header: str = "",
        diagnostics: list[Diagnostic] | None = None,
    ) -> Chunk:
        diags = list(diagnostics or [])
        if piece.slice_no:
            key = f"{key}@slice{piece.slice_no}"
            diags.append(Diagnostic("CORA-CHK-008", "line longer than max_tokens sliced", piece.start + 1))
        chunk = Chunk(
            id=self.new_id(key), path=self.path, lang=self.lang, kind=kind,
            symbol=symbols[0] if symbols else "", symbols=symbols,
            anchor=anchors[0] if anchors else None, anchors=anchors,
            hierarchy=hierarchy, parent=parent, children=[],
            start_line=piece.start + 1, end_line=piece.end + 1, tokens=piece.tokens,
            header=header, text=piece.text, strategy=self.strategy,
            diagnostics=diags, elided=piece.elided,
        )  # fmt: skip
        self.chunks.append(chunk)
        return chunk


def link_children(chunks: list[Chunk]) -> None:
    by_id = {c.id: c for c in chunks}
    for c in chunks:
        if c.parent is not None and c.parent in by_id:
            by_id[c.parent].children.append(c.id)


# ---- anchors --------------------------------------------------------------------------------


def assign_anchors(path: str, top: list[Sym], sep: str = ".") -> dict[int, str]:
    """Anchors for every symbol: `path::Outer.Inner.name`, unique within the file.

    Same names are told apart by their parameters, then by `#2`, `#3` in order of appearance;
    nothing depends on line numbers, so edits elsewhere in the file keep anchors stable.
    """
    order: list[tuple[Sym, str]] = []
    stack: list[tuple[list[Sym], tuple[str, ...]]] = [(top, ())]
    while stack:
        syms, prefix = stack.pop()
        for s in syms:
            qual = (*prefix, *s.qual_prefix, s.name)
            order.append((s, sep.join(qual)))
            if s.children:
                stack.append((s.children, qual))
    order.sort(key=lambda p: (p[0].start, p[0].def_start))
    counts: dict[str, int] = {}
    for _, q in order:
        counts[q] = counts.get(q, 0) + 1
    seen: dict[str, int] = {}
    out: dict[int, str] = {}
    for s, q in order:
        full = q + s.params if counts[q] > 1 and s.params else q
        seen[full] = seen.get(full, 0) + 1
        if seen[full] > 1:
            full = f"{full}#{seen[full]}"
        out[id(s)] = f"{path}::{full}"
    return out


# ---- headers ----------------------------------------------------------------------------------


def _owner(stack: list[Sym]) -> str:
    for s in reversed(stack):
        if s.kind == "type":
            return f" of {s.label} {s.name}"
    for s in reversed(stack):
        if s.kind == "namespace":
            return f" in {s.label} {s.name}"
    return ""


def _plural(word: str) -> str:
    if word.endswith("y"):
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x")) else "s")


def header_for(group: list[Sym], ancestors: list[Sym], part: tuple[int, int] | None = None) -> str:
    """One line of natural language before the code (IDX-0050 section 6)."""
    s = group[0]
    owner = _owner(ancestors) or (f" of type {'.'.join(s.qual_prefix)}" if s.qual_prefix else "")
    if s.kind in ("section", "key"):
        text = ""
    elif len(group) > 1:
        label = s.label if all(g.label == s.label for g in group) else s.kind
        names = ", ".join(g.name for g in group)
        text = f"{_plural(label).capitalize()} {names}{owner}."
        if s.kind in ("method", "property"):
            text += " Signatures: " + "; ".join(g.signature for g in group) + "."
    else:
        label = s.label.capitalize()
        if s.kind == "method" and s.label == "function" and not owner:
            label = "Function"
        text = f"{label} {s.name}{owner}."
        if s.kind == "method":
            text += f" Signature: {s.signature}."
        elif s.kind in ("property", "field", "event"):
            text += f" Declaration: {s.signature}."
        doc = first_sentence(s.doc)
        if doc:
            text += f" {doc}"
    if part:
        text = (text + f" Part {part[0]} of {part[1]}.").strip()
    return text


# ---- emitting a tree of symbols -----------------------------------------------------------------


def _signature_rows(child: Sym) -> range:
    """A member's attributes and signature, as its parent's skeleton shows them."""
    last = min(child.sig_end, child.def_start + MAX_SIGNATURE_ROWS - 1)
    return range(min(child.head_start, child.def_start), last + 1)


def own_rows(sym: Sym, keep_signatures: bool) -> tuple[list[int], dict[int, int]]:
    """The rows a container's own chunk shows: its range minus its children's elided parts.

    Also returns the rows before which an elision is silent: a member's doc comment is left
    out of the skeleton (it is in the member's chunk) without a `. . .` line of its own.
    """
    hidden: set[int] = set()
    quiet: dict[int, int] = {}
    for c in sym.children:
        hidden.update(range(c.start, c.end + 1))
        if keep_signatures:
            sig = _signature_rows(c)
            hidden.difference_update(sig)
            quiet[sig.start] = c.start
    return [r for r in range(sym.start, sym.end + 1) if r not in hidden], quiet


def as_namespaces(syms: list[Sym], rows: Rows) -> set[int]:
    """Make each module whose code is only types, with no doc of its own, a namespace (Ruby's `module
    Jekyll` around a file's one class), and return its own rows (declaration, `end`). Each type
    it holds is then a chunk of its own, anchored `Jekyll.PageWithoutAFile`, where a small file
    was one chunk named `Jekyll` (the name of hundreds of jekyll's files) and a larger one had a
    skeleton that held only the class's line."""
    own: set[int] = set()
    stack = list(syms)
    while stack:
        s = stack.pop()
        stack.extend(s.children)
        if s.kind != "type" or s.label != "module" or not s.children or s.start < s.def_start:
            continue  # a class is a type whatever it holds: Kotlin's `sealed class Result { ... }`
        if any(c.kind != "type" for c in s.children):
            continue
        held = {r for c in s.children for r in range(c.start, c.end + 1)}
        if all(rows.blank(r) for r in range(s.def_start + 1, s.end) if r not in held):
            s.kind = "namespace"
            own.update(r for r in range(s.start, s.end + 1) if r not in held)
    return own


@dataclass
class _Leaf:
    sym: Sym
    pieces: list[Piece]
    hierarchy: list[str]
    anchor: str


def emit_symbols(
    ctx: FileCtx,
    top: list[Sym],
    anchors: dict[int, str],
    root_parent: int | None,
    keep_signatures: bool = True,
) -> None:
    """Chunks for a tree of symbols, walking it with an explicit stack."""
    cfg, rows = ctx.cfg, ctx.rows
    level = cfg.chunk_level(ctx.lang)
    stack: list[tuple[list[Sym], int | None, list[str], list[Sym]]] = [(top, root_parent, [], [])]
    while stack:
        syms, parent, hier, ancestors = stack.pop()
        leaves: list[_Leaf] = []
        for s in syms:
            h = [*hier, f"{s.label}:{s.name}"]
            if s.kind == "namespace":
                stack.append((s.children, parent, h, [*ancestors, s]))
                continue
            whole = list(range(s.start, s.end + 1))
            if s.children and s.kind in ("type", "method"):  # a function holding functions, too
                size = sum(rows.tokens[r] for r in whole)
                fits = size <= (cfg.max_tokens if level == "class" else cfg.min_tokens)
                decompose = not fits and s.start != s.end
            else:
                decompose = bool(s.children)
            if decompose:
                cuts = frozenset(c.start for c in s.children)
                shown, quiet = own_rows(s, keep_signatures)
                room = cfg.max_tokens - (rows.marker_tokens if keep_signatures else 0)  # for the tail
                pieces = rows.pack(shown, max(1, room), cfg.overlap_lines, cuts, quiet=quiet)
                if pieces and keep_signatures:
                    pieces[-1] = rows.with_tail(pieces[-1], s.end)
                first = _emit_pieces(ctx, [s], pieces, anchors[id(s)], h, parent, ancestors)
                stack.append((s.children, first, h, [*ancestors, s]))
            else:
                budget = cfg.max_tokens // 4 if level == "block" and s.kind == "method" else cfg.max_tokens
                budget = max(budget, 16)
                pieces = rows.pack(whole, budget, cfg.overlap_lines, frozenset(s.cuts))
                leaves.append(_Leaf(s, pieces, h, anchors[id(s)]))
        _emit_leaves(ctx, leaves, parent, ancestors)


def _emit_pieces(
    ctx: FileCtx,
    group: list[Sym],
    pieces: list[Piece],
    anchor: str,
    hier: list[str],
    parent: int | None,
    ancestors: list[Sym],
    anchors: list[str] | None = None,
) -> int | None:
    first: int | None = None
    key = anchor.split("::", 1)[1] if "::" in anchor else anchor
    for k, piece in enumerate(pieces, start=1):
        part = (k, len(pieces)) if len(pieces) > 1 else None
        c = ctx.add(
            piece, key=part_key(key, k), kind=group[0].kind,
            symbols=[g.name for g in group], anchors=anchors or [anchor], hierarchy=hier,
            parent=parent, header=header_for(group, ancestors, part),
        )  # fmt: skip
        first = c.id if first is None else first
    return first


def _emit_leaves(ctx: FileCtx, leaves: list[_Leaf], parent: int | None, ancestors: list[Sym]) -> None:
    """Emit leaf symbols, merging runs of small adjacent siblings of one kind into one chunk."""
    cfg, rows = ctx.cfg, ctx.rows
    group: list[_Leaf] = []

    def small(leaf: _Leaf) -> bool:
        return (len(leaf.pieces) == 1 and leaf.pieces[0].tokens < cfg.min_tokens
                and leaf.sym.kind in _MERGEABLE)  # fmt: skip

    def flush() -> None:
        if len(group) == 1:
            g = group[0]
            _emit_pieces(ctx, [g.sym], g.pieces, g.anchor, g.hierarchy, parent, ancestors)
        elif group:
            merged = rows.render(list(range(group[0].sym.start, group[-1].sym.end + 1)))
            syms = [g.sym for g in group]
            _emit_pieces(
                ctx,
                syms,
                [merged],
                group[0].anchor,
                group[0].hierarchy,
                parent,
                ancestors,
                [g.anchor for g in group],
            )
        group.clear()

    for leaf in _same_lines(leaves):
        if isinstance(leaf, list):  # names that one line declares (Ruby's `attr_reader :items, :total`)
            flush()
            group.extend(leaf)
            flush()
            continue
        if not small(leaf):
            flush()
            _emit_pieces(ctx, [leaf.sym], leaf.pieces, leaf.anchor, leaf.hierarchy, parent, ancestors)
            continue
        if group:
            last = group[-1].sym
            gap_blank = all(rows.blank(r) for r in range(last.end + 1, leaf.sym.start))
            total = sum(g.pieces[0].tokens for g in group) + leaf.pieces[0].tokens
            if (
                last.kind != leaf.sym.kind
                or (last.label == DECLARATION)
                != (leaf.sym.label == DECLARATION)  # a chunk is one or the other
                or not gap_blank
                or leaf.sym.start <= last.end
                or total > cfg.max_tokens
            ):
                flush()
        group.append(leaf)
    flush()


def _same_lines(leaves: list[_Leaf]) -> list[_Leaf | list[_Leaf]]:
    """The leaves, those of the very same lines as the one before them together in a list: one
    chunk of several symbols, not one chunk of the same text for each. Only leaves of one piece
    each (within the budget): a line too long for it is cut into pieces a symbol at a time."""
    out: list[_Leaf | list[_Leaf]] = []
    for leaf in leaves:
        last = out[-1] if out else None
        first = last[0] if isinstance(last, list) else last
        whole = first is not None and len(first.pieces) == 1 and len(leaf.pieces) == 1
        if whole and first is not None and (first.sym.start, first.sym.end) == (leaf.sym.start, leaf.sym.end):
            out[-1] = [*last, leaf] if isinstance(last, list) else [first, leaf]
        else:
            out.append(leaf)
    return out


def emit_rows(
    ctx: FileCtx,
    runs: list[tuple[list[str], list[int]]],
    kind: str,
    parent: int | None,
    cuts: frozenset[int] = frozenset(),
    max_rows: int = 0,
) -> None:
    """Anonymous chunks (`module`, `lines`) for rows that belong to no symbol."""
    cfg = ctx.cfg
    for hier, rws in runs:
        for piece in ctx.rows.pack(rws, cfg.max_tokens, cfg.overlap_lines, cuts, max_rows):
            ctx.add(piece, key=f"{kind}#{ctx.ordinal(kind)}", kind=kind, symbols=[], anchors=[],
                    hierarchy=hier, parent=parent)  # fmt: skip
