"""Syntax tree to symbols: the walk of one file's tree (`Extractor`), each symbol's extent,
signature and docs.

The walk is iterative (an explicit stack), visits only named nodes and stops at each symbol, so
deeply nested code cannot reach Python's recursion limit and large function bodies cost nothing.
Rows are 0-based here; chunks turn them into 1-based lines. Which tree a file is read as, and the
outline made of it, is `outline.py`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from cora_ci.chunking import dialects, macros
from cora_ci.chunking.model import DECLARATION
from cora_ci.chunking.nodes import text_of
from cora_ci.chunking.params import overload_params
from cora_ci.chunking.specs import LangSpec, is_comment, is_generic_import
from cora_ci.chunking.symbols import FUNCTION_VALUES, Classifier, squash
from cora_ci.files.langs import C_LANGS, JS_LANGS

Node = Any  # tree_sitter.Node

_MAX_SIGNATURE = 240
# Functions whose body is read for nested functions and classes (statements that declare one).
NESTING = frozenset({"function", "method", "constructor"})
_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration", "variable_declarator"})
_SIG_TAIL = ("=>", "->", "{", ":", ";", "=", ",")  # what opens a body, cut from a signature's end


@dataclass
class Sym:
    kind: str  # type | method | property | field | event | namespace
    label: str  # hierarchy label: class, struct, function, namespace, ...
    name: str
    start: int  # first row, expanded over docs, attributes and wrappers
    end: int  # last row, inclusive
    def_start: int  # first row of the definition itself
    head_start: int  # first row of its attributes/decorators (docs excluded)
    sig_end: int  # last row of the signature (the rest is body)
    signature: str = ""
    params: str = ""  # parameter list, to tell overloads apart
    doc: str = ""
    qual_prefix: tuple[str, ...] = ()  # e.g. a Go method's receiver type
    children: list[Sym] = field(default_factory=list)
    cuts: list[int] = field(default_factory=list)  # rows where a split is preferred


# The body node before which a grammar puts the body's leading comments: the doc of the body's first
# definition (Python's block; Ruby's `body_statement`, where a module's one class lost its doc).
_BODY = {"python": "block", "ruby": "body_statement"}
# Scala's blocks that end past the next line's indentation (an outdent token after it).
_OUTDENTED = frozenset({"indented_block", "indented_cases", "case_clause"})


def last_row(node: Node) -> int:
    """The row of a node's last token. A node ends with its last token but in an indentation-
    sensitive grammar: Scala's `indented_block` reads the next line's indentation (a zero-width
    outdent after it), so os-lib's `reduceUps` took in the first line of the next `def`."""
    n, end = node, node.end_point
    while n.child_count:
        j = n.child_count - 1
        last = n.child(j)
        while j > 0 and last.start_byte == last.end_byte:  # zero-width tokens: an outdent, a missing `}`
            j -= 1
            last = n.child(j)
        if last.end_byte < n.end_byte:
            if n.type not in _OUTDENTED:  # a string's or a comment's own text, a YAML block's lines
                break
            end = last.end_point
        n = last
    row: int = end[0]
    if end[1] == 0 and row > node.start_point[0]:
        row -= 1
    return row


_RUBY_REQUIRES = frozenset({"require", "require_relative"})


class Extractor:
    """The symbols of one file's source: the walk (`scan`, `build`) and each symbol's extent,
    signature and docs; what a node defines and is called is `symbols.Classifier`'s."""

    def _required(self, n: Node) -> bool:
        """Ruby's `require "x"` and `require_relative "x"`: imports, not a module chunk of code (a
        rack trial's `generator.rb:3-3` came back as a result)."""
        if self.lang != "ruby" or n.type != "call" or n.child_by_field_name("receiver") is not None:
            return False
        method = n.child_by_field_name("method")
        return method is not None and text_of(self.src, method) in _RUBY_REQUIRES

    def __init__(self, lang: str, src: bytes) -> None:
        self.kinds = Classifier(lang, src)
        self.lang, self.src = lang, src
        self.spec: LangSpec = self.kinds.spec  # one spec a file (a generic one is made a call)
        self.imports: set[int] = set()
        self.namespace_rows: set[int] = set()
        self.src_lines = src.split(b"\n")
        # the last scan's symbols that share a wrapper with others (Go's `const ( ... )`): node id
        # -> (the wrapper, first of them, last of them)
        self._shared: dict[int, tuple[Node, bool, bool]] = {}

    # ---- details of one symbol -------------------------------------------------------------
    def body_of(self, n: Node) -> Node | None:
        if self.lang in dialects.LANGS and (own := dialects.body(self.lang, n)) is not None:
            return own
        if self.lang in JS_LANGS and n.type in ("variable_declarator", "pair"):
            value = n.child_by_field_name("value")
            if value is not None and value.type in FUNCTION_VALUES:
                return value.child_by_field_name("body")
            return value
        if self.lang == "python" and n.type == "assignment":
            return None
        if self.lang == "go" and n.type == "type_spec":  # a struct's fields
            ty = n.child_by_field_name("type")
            fields = ty.named_children if ty is not None and ty.type == "struct_type" else []
            return next((c for c in fields if c.type == "field_declaration_list"), None)
        if n.type == "assignment_expression":  # JavaScript's `res.json = function json(obj) {...}`
            right = n.child_by_field_name("right")
            return right.child_by_field_name("body") if right is not None else None
        body = n.child_by_field_name("body")
        if body is None and n.type in ("public_field_definition", "field_definition"):
            value = n.child_by_field_name("value")
            body = value.child_by_field_name("body") if value is not None else None
        if body is None and self.spec.generic:  # a grammar without fields (Kotlin's `class_body`)
            body = next((c for c in n.named_children if c.type.endswith("body")), None)
        return body

    def signature(self, n: Node, body: Node | None) -> str:
        """Declaration text up to the body, without leading attributes, modifiers and comments."""
        start = n.start_byte
        for c in n.children:
            if c.type not in self.spec.sig_skip:
                break
            start = c.end_byte
        end = body.start_byte if body is not None and body.start_byte > start else n.end_byte
        if body is not None and body == n:  # members are its own children (Objective-C's `@interface`)
            line_end = self.src.find(b"\n", start, n.end_byte)
            end = line_end if line_end >= 0 else n.end_byte
        parts, pos = [], start
        for c in n.children:
            if is_comment(self.spec, c.type) and start <= c.start_byte < end:
                parts.append(self.src[pos : c.start_byte])
                pos = c.end_byte
        parts.append(self.src[pos:end])
        return _without_tail(squash(b" ".join(parts).decode("utf-8", errors="replace")))[:_MAX_SIGNATURE]

    def params(self, n: Node) -> str:
        return overload_params(self.src, self.spec, self.lang, n)

    def docstring(self, body: Node | None) -> str:
        if self.lang != "python" or body is None or not body.named_children:
            return ""
        first = body.named_children[0]
        if first.type == "expression_statement" and first.named_children:
            first = first.named_children[0]
        return text_of(self.src, first) if first.type == "string" else ""

    def expand_up(self, outer: Node) -> tuple[int, int, str]:
        """Rows taking in adjacent doc comments and attributes above `outer`: (start, head start, docs)."""
        sib = outer.prev_named_sibling
        start = head = self._read_past(outer.start_point[0], last_row(sib) if sib is not None else -1)
        docs: list[str] = []
        if sib is None and outer.parent is not None and outer.parent.type == _BODY.get(self.lang):
            sib = outer.parent.prev_named_sibling  # the grammar puts a block's leading comments before it
        while sib is not None:
            is_doc = is_comment(self.spec, sib.type)
            attached = sib.type in self.spec.attributes or dialects.attaches(self.lang, sib, self.src)
            if not (is_doc or attached):
                start, docs = self._folded_docs(sib, start, docs)
                break
            if last_row(sib) < start - 1 - self._doc_gap(sib, start, docs):
                break
            before = sib.prev_named_sibling
            if is_doc and before is not None and last_row(before) == sib.start_point[0]:
                break  # a trailing comment of the statement before
            if is_doc:
                docs.append(text_of(self.src, sib))
            elif not docs:
                head = sib.start_point[0]
            start = sib.start_point[0]
            sib = before
        return start, head, "\n".join(reversed(docs))

    def _read_past(self, start: int, floor: int) -> int:
        """The row `start`, or in C and C++ that of the stand-alone macros right above it that the
        tree read past (blanked: `macros.py`), below `floor`: attributes of the definition
        (googletest's `GTEST_ATTRIBUTE_NO_SANITIZE_ADDRESS_` over `static bool StackGrowsDown()`),
        which keep it with the comment above them."""
        if self.lang not in C_LANGS:
            return start
        while start - 1 > floor and macros.attribute(self.src_lines[start - 1].rstrip(b"\r")):
            start -= 1
        return start

    def _folded_docs(self, sib: Node, start: int, docs: list[str]) -> tuple[int, list[str]]:
        """`expand_up` past the doc comments the grammar folded into the end of `sib` (Kotlin's
        imports: `dialects.folded_comments`), those adjacent to the definition."""
        for c in reversed(dialects.folded_comments(self.lang, sib)):
            if last_row(c) < start - 1 - self._doc_gap(c, start, docs):
                break
            docs.append(text_of(self.src, c))
            start = c.start_point[0]
        return start, docs

    def extent(self, outer: Node, n: Node) -> tuple[int, int, str, int]:
        """A symbol's rows: (start, head start, docs, end) over the docs and attributes above it and
        its wrapper. Of several symbols one wrapper declares (Go's `const (` ... `)`), the first
        takes in the wrapper's opening rows and the docs above it, the last its closing rows, so
        that no row of the block is left to the file's code."""
        start, head, doc = self.expand_up(outer)
        end = last_row(dialects.last_node(self.lang, outer, self.src))
        shared = self._shared.get(n.id)
        if shared is not None:
            wrapper, first, last = shared
            if first:
                w_start, w_head, w_doc = self.expand_up(wrapper)
                start, head, doc = min(start, w_start), min(head, w_head), doc or w_doc
            if last:
                end = max(end, last_row(wrapper))
        return start, head, doc, end

    def _doc_gap(self, sib: Node, start: int, docs: list[str]) -> int:
        """Blank rows a doc block may leave above what it documents: one for the first `/** ... */`
        above a definition (Express and much CommonJS code write a blank line after each), unless
        it opens the file (a licence); none for anything else."""
        opens_file = sib.prev_named_sibling is None and (sib.parent is None or sib.parent.parent is None)
        if docs or opens_file or start != sib.end_point[0] + 2:
            return 0
        return 1 if self.src[sib.start_byte : sib.start_byte + 3] == b"/**" else 0

    def sig_end(self, n: Node, body: Node | None) -> int:
        """Last row of the signature: the body's first row when the signature ends on it."""
        if body is None:
            return last_row(n)
        row: int = body.start_point[0]
        col: int = body.start_point[1]
        if row == n.start_point[0] or self.src_lines[row][:col].strip():
            return row
        return row - 1

    # ---- the walk -----------------------------------------------------------------------------
    def scan(
        self, container: Node, in_type: bool, shallow: bool = False
    ) -> list[tuple[Node, Node, tuple[str, str, str]]]:
        """Symbols below `container`, not descending into them: (outer node, node, classification).
        `shallow` (a function's body): only its statements and the wrappers around them are read, not
        the code inside them, so a long body costs its statement count, not its node count."""
        found: list[tuple[Node, Node, tuple[str, str, str]]] = []
        wrap_count: dict[int, int] = {}
        # `deep`: reached through a node that is no wrapper (a call's callback, an `if` block)
        stack: list[tuple[Node, Node | None, bool]] = [
            (c, None, False) for c in reversed(container.named_children)
        ]
        while stack:
            n, wrap, deep = stack.pop()
            info = self.kinds.classify(n, in_type)
            if info is not None:
                if info[0] == "field" and (shallow or (deep and not in_type)):
                    continue  # a function's variables, a test callback's, are its code: not the file's
                found.append((wrap if wrap is not None else n, n, info))
                if wrap is not None:
                    wrap_count[wrap.id] = wrap_count.get(wrap.id, 0) + 1
                continue
            t = n.type
            if t in self.spec.imports or (self.spec.generic and is_generic_import(t)) or self._required(n):
                if not in_type:  # less the comments folded into it: the next definition's doc
                    folded = dialects.folded_comments(self.lang, n)
                    end = folded[0].start_point[0] - 1 if folded else last_row(n)
                    self.imports.update(range(n.start_point[0], end + 1))
                continue
            if is_comment(self.spec, t):
                continue
            if t in self.spec.file_namespaces:
                found.append((n, n, ("namespace", "namespace", self.kinds.name_of(n))))
                continue
            new_wrap = (wrap if wrap is not None else n) if t in self.spec.wrappers else None
            if shallow and new_wrap is None and t not in _DECLARATIONS:
                continue
            inner = deep or new_wrap is None
            stack.extend((c, new_wrap, inner) for c in reversed(n.named_children))
        # a wrapper holding several symbols (`export const a = () => 1, b = () => 2`) is nobody's:
        # its first and last symbols take in its opening and closing rows (`extent`)
        members: dict[int, list[Node]] = {}
        out = []
        for o, n, i in found:
            if o is not n and wrap_count.get(o.id, 0) > 1:
                members.setdefault(o.id, [o]).append(n)
                o = n
            out.append((o, n, i))
        self._shared = {
            n.id: (group[0], k == 1, k == len(group) - 1)
            for group in members.values()
            for k, n in enumerate(group[1:], start=1)
        }
        return out

    def build(self, root: Node, lines: list[str]) -> list[Sym]:
        top: list[Sym] = []
        work: list[tuple[Node, bool, list[Sym], bool]] = [(root, False, top, False)]
        while work:
            container, in_type, out, shallow = work.pop()
            file_ns: Sym | None = None
            for outer, n, (kind, label, name) in self.scan(container, in_type, shallow):
                if shallow and kind == "namespace":
                    continue  # an object literal in a function is its code, not a scope of symbols
                body = self.body_of(n)
                start, head, doc, end = self.extent(outer, n)
                doc = self.docstring(body) or doc
                sym = Sym(
                    kind=kind, label=label, name=name, start=start, end=end,
                    def_start=n.start_point[0], head_start=head, sig_end=self.sig_end(n, body),
                    signature=self.signature(n, body), params=self.params(n), doc=doc,
                    qual_prefix=self.receiver(n),
                )  # fmt: skip
                if body is not None and kind in ("method", "property"):
                    sym.cuts = [c.start_point[0] for c in body.named_children]
                if n.type in self.spec.file_namespaces:
                    sym.end = len(lines) - 1
                    self.namespace_rows.update(range(n.start_point[0], last_row(n) + 1))
                    file_ns = sym
                    out.append(sym)
                    continue
                (file_ns.children if file_ns is not None else out).append(sym)
                if kind == "namespace" and label != "object":
                    self._namespace_rows(n, body)
                if kind in ("type", "namespace") and body is not None:
                    work.append((body, kind == "type", sym.children, False))
                elif kind == "method" and body is not None and label in NESTING:
                    work.append((body, False, sym.children, True))  # nested functions and classes
        if self.lang in C_LANGS:
            _drop_defined(top)
        self._sort(top)
        return top

    def _namespace_rows(self, n: Node, body: Node | None) -> None:
        first = n.start_point[0]
        head_end = body.start_point[0] if body is not None else last_row(n)
        self.namespace_rows.update(range(first, head_end + 1))
        if body is not None and last_row(body) > head_end:
            self.namespace_rows.add(last_row(n))

    def receiver(self, n: Node) -> tuple[str, ...]:
        if self.lang == "go" and n.type == "method_declaration":
            recv = n.child_by_field_name("receiver")
            if recv is not None:
                m = re.search(r"(\w+)(\[[^\]]*\])?\s*\)\s*$", text_of(self.src, recv))
                if m:
                    return (m.group(1),)
        if (case := self.kinds.macro_case(n)) is not None:
            return case[:-1]  # GoogleTest's suite, as a Go method's receiver type
        if n.type == "assignment_expression" and (bound := self.kinds.assigned(n)) is not None:
            return bound[1]
        if self.lang in JS_LANGS and (accessed := self.kinds.accessor(n)) is not None:
            return accessed[1]
        return ()

    def _sort(self, syms: list[Sym]) -> None:
        stack = [syms]
        while stack:
            level = stack.pop()
            level.sort(key=lambda s: (s.start, s.end))
            stack.extend(s.children for s in level if s.children)


def _drop_defined(top: list[Sym]) -> None:
    """A C prototype of a function the same file defines is a forward declaration (`static void
    uv__close(uv_handle_t*);` above its definition): the definition is the symbol, and keeps its
    plain anchor (not `#2`). Outside types only: a class's `void f();` is its member's, whatever
    else is called `f`."""
    free = [top]  # levels outside types: the file's, a namespace's, a function's
    defined: set[str] = set()
    for level in free:
        defined.update(s.name for s in level if s.kind == "method" and s.label != DECLARATION)
        free.extend(s.children for s in level if s.children and s.kind != "type")
    for level in free:
        level[:] = [s for s in level if s.label != DECLARATION or s.name not in defined]


def _without_tail(sig: str) -> str:
    """`sig` without the markers that open a body (`def f(x) -> int:`, `fn f() {`, `(x) =>`), in
    one pass from the end (a regular expression took 10 s on a signature of 8,000 commas)."""
    cut = sig.rstrip()
    while (tail := next((t for t in _SIG_TAIL if cut.endswith(t)), None)) is not None:
        cut = cut[: -len(tail)].rstrip()
    return cut if len(cut) < len(sig.rstrip()) else sig
