"""An overload's parameters as its anchor shows them: what tells apart the members of a family
whose name its scope repeats (`Field(default: int, *, alias: str | None)`), and nothing that
changes without changing which overload it is (defaults, comments; Java's and C#'s parameter
names: their types alone)."""

from __future__ import annotations

from typing import Any

from cora_ci.chunking.nodes import text_of
from cora_ci.chunking.specs import LangSpec, is_comment
from cora_ci.chunking.symbols import squash

Node = Any  # tree_sitter.Node

_NOT_TYPES = frozenset({"modifiers", "variable_declarator", "line_comment", "block_comment"})
# The parameter lists an overload's anchor is made of parameter by parameter (`_param`), and the
# fields that hold a parameter's default there (JavaScript's `a = 1` is an assignment pattern's
# `right`); a list of another shape (a lambda's) is taken as written.
_PARAMETER_LISTS = frozenset({"parameters", "formal_parameters", "parameter_list", "method_parameters"})
_DEFAULT_FIELDS = ("default_value", "value", "right")


def overload_params(src: bytes, spec: LangSpec, lang: str, n: Node) -> str:
    """The parameters of declaration `n` as its anchor shows them when its name repeats
    (`(a: int, b)`), "" when it has none to show."""
    p = n.child_by_field_name("parameters")
    if p is None and n.type in (
        "variable_declarator",
        "pair",
        "public_field_definition",
        "assignment_expression",
    ):
        v = n.child_by_field_name("right" if n.type == "assignment_expression" else "value")
        p = v.child_by_field_name("parameters") if v is not None else None
    if p is None and lang in ("kotlin", "swift"):
        # Kotlin's parameters are a `function_value_parameters`, Swift's the declaration's own children
        listed = next((c for c in n.children if c.type == "function_value_parameters"), n)
        kept = [c for c in listed.named_children if c.type == "parameter"]
        listed_at_all = listed is not n or any(c.type == "(" for c in n.children)
        return "(" + ", ".join(_param(src, spec, c) for c in kept) + ")" if kept or listed_at_all else ""
    if p is None:
        return ""
    if spec.typed_params:
        return "(" + ", ".join(_param_type(src, c) for c in p.named_children) + ")"
    if p.type not in _PARAMETER_LISTS:  # a lambda's lone parameter, a list of another shape
        return squash(text_of(src, p))
    kept = [c for c in p.named_children if not is_comment(spec, c.type)]
    return "(" + ", ".join(_param(src, spec, c) for c in kept) + ")"


def _param(src: bytes, spec: LangSpec, param: Node) -> str:
    """A parameter as an overload's anchor shows it: as written, up to its default value (`cwd:
    Path = null` is `cwd: Path`), its comments left out. A default or a comment is no part of
    which overload it is: pydantic's `Field` overloads were anchored by forty parameters with
    their defaults and their `# noqa` comments, and a changed default moved the anchor (os-lib's
    `call(...)` was 300 characters)."""
    default = next((d for f in _DEFAULT_FIELDS if (d := param.child_by_field_name(f)) is not None), None)
    end = default.start_byte if default is not None else param.end_byte
    parts, pos = [], param.start_byte
    for c in param.children:
        if is_comment(spec, c.type) and c.start_byte < end:
            parts.append(src[pos : c.start_byte])
            pos = c.end_byte
    parts.append(src[pos:end])
    return squash(b" ".join(parts).decode("utf-8", "replace")).rstrip(" =")


def _param_type(src: bytes, param: Node) -> str:
    """A parameter's type as an overload's anchor shows it: Java's varargs parameter has no `type`
    field, and its whole text (`final T... elements`) made the anchor change with a parameter's
    name: its type then `...` (`join(T...)`)."""
    ty = param.child_by_field_name("type")
    if ty is None and param.type == "spread_parameter":
        ty = next((c for c in param.named_children if c.type not in _NOT_TYPES), None)
        if ty is not None:
            return squash(text_of(src, ty)) + "..."
    return squash(text_of(src, ty if ty is not None else param))
