"""Source to outline: a file parsed with tree-sitter (within a time budget, read past C's macros
where that reads more) and the symbol tree `extractor.Extractor` walks out of it, with the rows
that belong to no symbol (imports, namespaces, leading comments). Rows are 0-based here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

from cora_ci.chunking import macros, rereads
from cora_ci.chunking.extractor import Extractor, Sym, last_row
from cora_ci.chunking.specs import LangSpec, is_comment
from cora_ci.files.langs import C_LANGS

Node = Any  # tree_sitter.Node


@dataclass
class Outline:
    symbols: list[Sym]
    import_rows: set[int]
    namespace_rows: set[int]  # namespace declaration and closing rows
    leading_rows: list[int]  # leading comments / module docstring
    top_rows: list[int]  # first rows of top-level statements: good places to split module code
    error_bytes: int = 0
    error_count: int = 0
    tree: Any = None  # the parsed tree.Tree, for later stages that need more than the outline


@cache
def parser_for(lang: str) -> Any:
    from tree_sitter_language_pack import get_parser

    return get_parser(lang)  # type: ignore[arg-type]


class SlowParse(Exception):
    """A parse stopped past its time budget (`parse`)."""


# A parse's time budget: a grammar's error recovery can be quadratic (tree-sitter-cpp took 343 s
# over 700 KB of `FOO_BAR` lines each opening a `/*`); real code parses at 2-4 MB/s, 25x inside it.
_BUDGET_S = 5.0
_BUDGET_S_PER_MB = 10.0
_BLOCK = 1 << 16  # bytes handed to the parser by a read at a block's start (`_reader`)
_PIECE = 256  # ... by a read inside a block


def parse(lang: str, src: bytes) -> Any:
    """`src`'s tree, read past C's macros where its outline then loses less (`macros.py`):
    the chunker, the graph and the re-binder read one file the same way. `SlowParse` past the time
    budget: only a pathological file can reach it, so the same commit chunks the same way on any
    machine the project's code runs on."""
    return _read(lang, src, None)[0]


class _Walk(NamedTuple):
    """The outline's walk of a tree: its extractor, its symbols, the bytes of its error rows they
    leave unread (`_unparsed`) and its count of errors."""

    ex: Extractor
    symbols: list[Sym]
    unread: int
    errors: int


class _Read(NamedTuple):
    """A tree, and its outline's walk where choosing the tree needed one."""

    tree: Any
    walked: _Walk | None


def _read(lang: str, src: bytes, lines: list[str] | None) -> _Read:
    """`parse`, keeping the walk that chose a C file's tree (the outline's, so not walked again)."""
    read = macros.blank_exports(src) if lang in C_LANGS else src  # names are read from `src`
    tree = _bounded(lang, read)
    if lang in rereads.LANGS and tree.root_node.has_error:
        return _Read(_reread(lang, src, tree), None)
    if lang not in C_LANGS or not tree.root_node.has_error:
        return _Read(tree, None)
    lines = src.decode("utf-8", "replace").split("\n") if lines is None else lines
    got, read, blanked = _unmacroed(lang, src, read, tree, lines)
    return _unguarded(lang, src, (blanked, read), got, lines)


def _unmacroed(lang: str, src: bytes, read: bytes, tree: Any, lines: list[str]) -> tuple[_Read, bytes, bytes]:
    """Of a C file's readings with an error (`tree`, of `read`), the one whose outline loses least:
    as written, its export macros blanked, its other macros too; and the texts of the last two."""
    walked: _Walk | None = None  # the walk of `tree`, where choosing it needed one
    if read != src:  # an export macro's blanking, kept only where it reads no less than the file as written
        raw = _bounded(lang, src)
        exported, written = _walk(lang, src, tree, lines), _walk(lang, src, raw, lines)
        # (a property test's `{ MAP(XX) MAP(XX) {`: 24 unread bytes, not 14)
        if _loss(written) < _loss(exported):
            tree, read, walked = raw, src, written
        else:
            walked = exported
    blanked = macros.blank_macros(read, lang)
    if blanked is read:
        return _Read(tree, walked), read, blanked
    other = _bounded(lang, blanked)
    if not other.root_node.has_error:
        return _Read(other, None), read, blanked
    # A tree that counts fewer errors can still read less: the grammar may recover a blanked
    # header as one error around intact declarations, or lose a function's body further down.
    mine, plain = _walk(lang, src, other, lines), walked or _walk(lang, src, tree, lines)
    return (_Read(other, mine) if _loss(mine) < _loss(plain) else _Read(tree, plain)), read, blanked


def _unguarded(lang: str, src: bytes, texts: tuple[bytes, ...], got: _Read, lines: list[str]) -> _Read:
    """`got`, or a reading of one of `texts` without its include guard (`macros.blank_guard`)
    where `got` has an error over half the file or more and that reading loses less. Only then: a
    whole header's error may still wrap intact declarations (fmt's `base.h` read without its guard
    lost 37 of its 442 symbols), and each other reading costs a parse."""
    errors = _errors(got.tree.root_node)[0]
    if not errors or 2 * max(e.end_byte - e.start_byte for e in errors) < len(src):
        return got
    tree, walk = got.tree, got.walked or _walk(lang, src, got.tree, lines)
    for text in dict.fromkeys(texts):
        other_text = macros.blank_guard(text)
        if other_text is text:
            continue
        other = _bounded(lang, other_text)
        mine = _walk(lang, src, other, lines)
        if _loss(mine) < _loss(walk):
            tree, walk = other, mine
    return _Read(tree, walk)


def _reread(lang: str, src: bytes, tree: Any) -> Any:
    """The tree of `src` as `rereads` rewrites it for its grammar, when that leaves fewer errors."""
    rewritten = rereads.reread(lang, src)
    if rewritten == src:
        return tree
    other = _bounded(lang, rewritten)
    return other if _errors(other.root_node)[1] < _errors(tree.root_node)[1] else tree


def _loss(walk: _Walk) -> tuple[int, int]:
    """What a reading loses: the bytes of its error rows left unread, then its errors."""
    return walk.unread, walk.errors


def _walk(lang: str, src: bytes, tree: Any, lines: list[str]) -> _Walk:
    """The outline's walk of `tree`."""
    ex = Extractor(lang, src)
    symbols = ex.build(tree.root_node, lines)
    errors, count = _errors(tree.root_node)
    return _Walk(ex, symbols, _unparsed(errors, symbols, lines), count)


# Grammars of lines, each ended by its line break: the chunker's text is a file's lines joined,
# without the last break, and each such file's last line was an error (CORA-CHK-002 on every
# go.mod and Makefile). Other grammars keep the text as it is: a C file's tree is chosen by the
# bytes its errors cover (`_read`), which one more byte can change.
_LINE_GRAMMARS = frozenset({"gomod", "make", "dockerfile", "ini"})  # those `files.langs` names that need it


def _bounded(lang: str, src: bytes) -> Any:
    if lang in _LINE_GRAMMARS:
        src += b"\n"
    parser = parser_for(lang)
    budget = _BUDGET_S + _BUDGET_S_PER_MB * len(src) / 1e6
    deadline = time.monotonic() + budget
    try:  # tree-sitter reads progress callbacks only for a source read in pieces
        return parser.parse(_reader(src),
                            progress_callback=lambda _at, _error: time.monotonic() > deadline)  # fmt: skip
    except ValueError:  # halted
        parser.reset()
        raise SlowParse(f"parse stopped past its {budget:.0f} s budget") from None


def _reader(src: bytes) -> Callable[[int, Any], bytes]:
    """A parse's reads of `src`: a read at a block's start gets that block of `_BLOCK` bytes, each
    made once; a read inside a block (the scanner going back) a piece of `_PIECE` bytes. The
    tree-sitter binding (0.26.1, and upstream still) never releases what a read returns, and
    tree-sitter-perl's scanner reads again at nearly every token: as slices of 64 KB from wherever
    it asked, curl's 114 KB `runtests.pl` (15,527 reads) held 690 MB and a first build of curl
    peaked at 1.5 GB; now 4.6 MB. Reading everything in pieces of 256 bytes held less (2.7 MB) but
    parsed a 1 MB Python file ~12% slower (a call a piece). What stays of any file is ~1.1 times
    its source. The binding reads a node's text through this too (`Node.text`, a query's
    predicates): it must hand out `bytes`."""
    blocks: dict[int, bytes] = {}

    def read(at: int, _point: Any) -> bytes:
        k, inside = divmod(at, _BLOCK)
        if inside:
            return src[at : min(at + _PIECE, (k + 1) * _BLOCK)]
        block = blocks.get(k)
        if block is None:
            block = blocks[k] = src[at : at + _BLOCK]
        return block

    return read


def _errors(root: Node) -> tuple[list[Node], int]:
    """The outermost ERROR nodes and the count of ERROR/MISSING nodes (only walked when needed)."""
    if not root.has_error:
        return [], 0
    errors: list[Node] = []
    count = 0
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_error:
            errors.append(n)
            count += 1
            continue
        if n.is_missing:
            count += 1
        if n.has_error:
            stack.extend(n.children)
    return errors, count


def _unparsed(errors: list[Node], symbols: list[Sym], lines: list[str]) -> int:
    """Bytes of the ERROR nodes' rows that no type or function found in them covers. An ERROR node
    may wrap intact definitions: C++'s include guard around a header whose macros it cannot read
    (fmt's format.h is one ERROR of 162 KB whose classes and functions the walk finds whole),
    while mistyped or broken text yields a stray definition or none."""
    if not errors:
        return 0
    rows = {r for n in errors for r in range(n.start_point[0], last_row(n) + 1)}
    stack = list(symbols)
    while stack and rows:
        s = stack.pop()
        if s.kind in ("type", "method", "property"):
            rows.difference_update(range(s.def_start, s.end + 1))
        stack.extend(s.children)
    return sum(len(lines[r]) + 1 for r in rows if r < len(lines))


def _leading_rows(root: Node, spec: LangSpec, lang: str) -> list[int]:
    rows: list[int] = []
    for c in root.named_children:
        is_doc = is_comment(spec, c.type) or (
            lang == "python" and (c.type == "string" or (c.type == "expression_statement"
                                                       and c.named_children
                                                       and c.named_children[0].type == "string"))
        )  # fmt: skip
        if not is_doc:
            break
        rows.extend(range(c.start_point[0], last_row(c) + 1))
    return rows


def outline(lang: str, src: bytes, lines: list[str]) -> Outline:
    """Raises `SlowParse` (the chunker then cuts the file by lines)."""
    tree, walked = _read(lang, src, lines)
    root = tree.root_node
    walk = _walk(lang, src, tree, lines) if walked is None else walked
    return Outline(
        symbols=walk.symbols,
        import_rows=walk.ex.imports,
        namespace_rows=walk.ex.namespace_rows,
        leading_rows=_leading_rows(root, walk.ex.spec, lang),
        top_rows=[c.start_point[0] for c in root.named_children],
        error_bytes=walk.unread,
        error_count=walk.errors,
        tree=tree,
    )
