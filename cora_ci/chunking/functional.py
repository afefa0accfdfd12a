"""Definitions in functional languages' grammars, which the generic rule names wrongly or not at
all: OCaml's `let` bindings, types and modules (and an interface's `val` declarations); Erlang's
functions (the grammar's clauses of one, with its `-spec`) and records; Clojure's `(defn ...)`
and other `def` forms, which are lists like any call; Julia's functions (named inside their
signature's call), short-form definitions (`f(x) = ...`), structs and modules, and the docstring
written above a definition. A file of any of them was one module chunk. `symbols.Classifier` asks
`classify` before the generic rule (whose names of theirs are wrong or none); `dialects` asks for
a module's body, a definition's last node and what is written above it."""

from __future__ import annotations

from cora_ci.chunking.model import DECLARATION
from cora_ci.chunking.nodes import Node, child, first_below, text_of

LANGS = frozenset({"ocaml", "ocaml_interface", "erlang", "clojure", "julia"})
_CLOJURE = {
    "defn": ("method", "function"), "defn-": ("method", "function"), "defmacro": ("method", "macro"),
    "defmulti": ("method", "function"), "defmethod": ("method", "method"), "def": ("field", "var"),
    "defonce": ("field", "var"), "defrecord": ("type", "record"), "deftype": ("type", "type"),
    "defprotocol": ("type", "protocol"), "definterface": ("type", "interface"),
    "defstruct": ("type", "struct"),
}  # fmt: skip
_JULIA_TYPES = {
    "struct_definition": "struct", "abstract_definition": "abstract", "primitive_definition": "primitive",
}  # fmt: skip
_OCAML_FUNCTIONS = frozenset({"function_expression", "fun_expression"})


def classify(lang: str, n: Node, src: bytes) -> tuple[str, str, str] | None:
    """(kind, label, name) when `n` defines a symbol in `lang`, else None."""
    if lang in ("ocaml", "ocaml_interface"):
        return _ocaml(n, src)
    if lang == "erlang":
        return _erlang(n, src)
    if lang == "clojure":
        return _clojure(n, src)
    if lang == "julia":
        return _julia(n, src)
    return None


def body(lang: str, n: Node) -> Node | None:
    """The node holding a module's definitions (OCaml's `struct ... end`, Julia's `module`)."""
    if lang == "ocaml" and n.type == "module_definition":
        binding = child(n, "module_binding")
        return binding.child_by_field_name("body") if binding is not None else None
    if lang == "julia" and n.type in ("module_definition", "function_definition", *_JULIA_TYPES):
        return child(n, "block")
    return None


def attaches(lang: str, n: Node) -> bool:
    """A Julia docstring, an Erlang `-spec`: written right above a definition, part of it."""
    return (lang == "julia" and n.type == "string_literal") or (lang == "erlang" and n.type == "spec")


def _ocaml(n: Node, src: bytes) -> tuple[str, str, str] | None:
    if n.type == "value_specification" and (name := child(n, "value_name")) is not None:
        return "method", DECLARATION, text_of(src, name)  # an interface's `val to_string : t -> string`
    if n.type == "value_definition":
        binding = child(n, "let_binding")
        pattern = binding.child_by_field_name("pattern") if binding is not None else None
        if binding is None or pattern is None or pattern.type != "value_name":
            return None  # `let () = ...`, a destructuring pattern: no one name
        value = binding.child_by_field_name("body")
        name = text_of(src, pattern)
        if child(binding, "parameter") is not None or (value is not None and value.type in _OCAML_FUNCTIONS):
            return "method", "function", name
        return "field", "value", name
    if n.type == "type_definition" and (binding := child(n, "type_binding")) is not None:
        name = binding.child_by_field_name("name")
        return ("type", "type", text_of(src, name)) if name is not None else None
    if n.type == "module_definition" and (binding := child(n, "module_binding")) is not None:
        name = child(binding, "module_name")
        return ("type", "module", text_of(src, name)) if name is not None else None
    return None


def last_node(lang: str, n: Node, src: bytes) -> Node:
    """The node a definition ends with: an Erlang function's last clause (the grammar makes each
    clause a declaration of its own; `area({circle, R}) -> ...; area({square, S}) -> ...` is one
    function)."""
    if lang == "erlang" and n.type == "fun_decl":
        while (after := _past_comments(n, 1)) is not None and _clause_of(after, src) == _clause_of(n, src):
            n = after
    return n


def _past_comments(n: Node, step: int) -> Node | None:
    """The next (`step` 1) or previous (-1) named sibling of `n` that is no comment (a comment
    between two clauses of one Erlang function does not end it)."""
    m = n.next_named_sibling if step > 0 else n.prev_named_sibling
    while m is not None and m.type == "comment":
        m = m.next_named_sibling if step > 0 else m.prev_named_sibling
    return m


def _clause_of(n: Node, src: bytes) -> tuple[str, int] | None:
    """An Erlang clause's function: its name and its arity (`area/1`); None for another node."""
    clause = child(n, "function_clause") if n.type == "fun_decl" else None
    name = clause.child_by_field_name("name") if clause is not None else None
    if clause is None or name is None:
        return None
    args = clause.child_by_field_name("args")
    return text_of(src, name), len(args.named_children) if args is not None else 0


def _erlang(n: Node, src: bytes) -> tuple[str, str, str] | None:
    if n.type == "fun_decl" and (clause := child(n, "function_clause")) is not None:
        name = clause.child_by_field_name("name")
        before = _past_comments(n, -1)
        if name is None or (before is not None and _clause_of(before, src) == _clause_of(n, src)):
            return None  # a later clause of the function the first one's symbol is
        return "method", "function", text_of(src, name)
    if n.type == "record_decl" and (name := n.child_by_field_name("name")) is not None:
        return "type", "record", text_of(src, name)
    return None


def _clojure(n: Node, src: bytes) -> tuple[str, str, str] | None:
    if n.type != "list_lit":
        return None
    symbols = [c for c in n.named_children if c.type == "sym_lit"][:2]
    if len(symbols) < 2 or n.named_children[0] is not symbols[0]:
        return None
    head = symbols[0].child_by_field_name("name")
    kind = _CLOJURE.get(text_of(src, head)) if head is not None else None
    name = symbols[1].child_by_field_name("name")
    return (kind[0], kind[1], text_of(src, name)) if kind is not None and name is not None else None


def _julia(n: Node, src: bytes) -> tuple[str, str, str] | None:
    t = n.type
    if t in ("function_definition", "macro_definition"):
        name = _called(child(n, "signature"))
        label = "macro" if t == "macro_definition" else "function"
        return ("method", label, text_of(src, name)) if name is not None else None
    if t == "assignment":  # `perimeter(s::Circle) = 2pi * s.r`
        left = n.named_children[0] if n.named_children else None
        called = left is not None and left.type in ("call_expression", "where_expression")
        name = _called(left) if called else None
        return ("method", "function", text_of(src, name)) if name is not None else None
    if t in _JULIA_TYPES:
        head = child(n, "type_head")
        name = first_below(head, "identifier") if head is not None else None  # `Point{T} <: Shape`
        return ("type", _JULIA_TYPES[t], text_of(src, name)) if name is not None else None
    if t == "module_definition" and (name := n.child_by_field_name("name")) is not None:
        return "type", "module", text_of(src, name)
    return None


def _called(n: Node | None) -> Node | None:
    """The name a Julia signature calls: `area` of `area(s::Circle)`, `show` of `Base.show(io, x)`,
    through `where` and return type annotations."""
    for _ in range(4):
        if n is None or n.type == "call_expression":
            break
        n = n.named_children[0] if n.named_children else None
    if n is None or n.type != "call_expression" or not n.named_children:
        return None
    callee: Node | None = n.named_children[0]
    if callee is not None and callee.type == "field_expression":
        callee = callee.named_children[-1] if callee.named_children else None
    return callee if callee is not None and callee.type in ("identifier", "operator") else None
