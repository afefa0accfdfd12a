"""Per-language tree-sitter queries: which identifiers are uses, which are bindings, which to skip.

A chunk's references are the identifiers it *uses*; names it *binds* (its definitions, parameters,
local variables, import aliases) are dropped from its list, because a local `result` or `path`
that happens to share a name with some function elsewhere is not a reference to it. `@skip` marks
single occurrences that are neither (module paths in imports, keyword-argument names, object keys).
Queries run in C and need no recursion, so deep nesting is safe; patterns a grammar rejects are
dropped one by one, so a grammar update degrades gracefully instead of failing.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from cora_ci.chunking.specs import SPECS

# Leaf node kinds that hold names, in any grammar of the pack (missing kinds are skipped).
REF_KINDS = (
    "identifier",
    "type_identifier",
    "field_identifier",
    "property_identifier",
    "shorthand_property_identifier",
    "private_property_identifier",
    "shorthand_field_identifier",
    "simple_identifier",
    "constant",
)

_PY = (
    "(function_definition name: (identifier) @bind)",
    "(class_definition name: (identifier) @bind)",
    "(parameters (identifier) @bind)",
    "(lambda_parameters (identifier) @bind)",
    "(typed_parameter . (identifier) @bind)",
    "(default_parameter name: (identifier) @bind)",
    "(typed_default_parameter name: (identifier) @bind)",
    "(list_splat_pattern (identifier) @bind)",
    "(dictionary_splat_pattern (identifier) @bind)",
    "(assignment left: (identifier) @bind)",
    "(augmented_assignment left: (identifier) @bind)",
    "(pattern_list (identifier) @bind)",
    "(tuple_pattern (identifier) @bind)",
    "(for_statement left: (identifier) @bind)",
    "(for_in_clause left: (identifier) @bind)",
    "(as_pattern_target (identifier) @bind)",
    "(named_expression name: (identifier) @bind)",
    "(global_statement (identifier) @bind)",
    "(nonlocal_statement (identifier) @bind)",
    "(aliased_import alias: (identifier) @bind)",
    "(keyword_argument name: (identifier) @skip)",
    "(import_statement) @skipall",
    "(import_from_statement module_name: (_) @skipall)",
)
_JS = (
    "(function_declaration name: (identifier) @bind)",
    "(generator_function_declaration name: (identifier) @bind)",
    "(class_declaration name: (_) @bind)",
    "(class name: (_) @bind)",
    "(method_definition name: (property_identifier) @bind)",
    "(field_definition property: (property_identifier) @bind)",
    "(public_field_definition name: (property_identifier) @bind)",
    "(variable_declarator name: (identifier) @bind)",
    "(formal_parameters (identifier) @bind)",
    "(required_parameter pattern: (identifier) @bind)",
    "(optional_parameter pattern: (identifier) @bind)",
    "(rest_pattern (identifier) @bind)",
    "(arrow_function parameter: (identifier) @bind)",
    "(shorthand_property_identifier_pattern) @bind",
    "(array_pattern (identifier) @bind)",
    "(pair_pattern value: (identifier) @bind)",
    "(assignment_pattern left: (identifier) @bind)",
    "(catch_clause parameter: (identifier) @bind)",
    "(for_in_statement left: (identifier) @bind)",
    "(import_specifier alias: (identifier) @bind)",
    "(namespace_import (identifier) @bind)",
    "(interface_declaration name: (type_identifier) @bind)",
    "(type_alias_declaration name: (type_identifier) @bind)",
    "(enum_declaration name: (identifier) @bind)",
    "(type_parameter name: (type_identifier) @bind)",
    "(property_signature name: (property_identifier) @bind)",
    "(method_signature name: (property_identifier) @bind)",
    "(pair key: (property_identifier) @skip)",
)
_GO = (
    "(function_declaration name: (identifier) @bind)",
    "(method_declaration name: (field_identifier) @bind)",
    "(type_spec name: (type_identifier) @bind)",
    "(type_alias name: (type_identifier) @bind)",
    "(type_parameter_declaration name: (identifier) @bind)",
    "(parameter_declaration name: (identifier) @bind)",
    "(variadic_parameter_declaration name: (identifier) @bind)",
    "(short_var_declaration left: (expression_list (identifier) @bind))",
    "(var_spec name: (identifier) @bind)",
    "(const_spec name: (identifier) @bind)",
    "(range_clause left: (expression_list (identifier) @bind))",
    "(field_declaration name: (field_identifier) @bind)",
    "(import_declaration) @skipall",
    "(package_clause) @skipall",
)
_RUST = (
    "(function_item name: (identifier) @bind)",
    "(function_signature_item name: (identifier) @bind)",
    "(struct_item name: (type_identifier) @bind)",
    "(enum_item name: (type_identifier) @bind)",
    "(union_item name: (type_identifier) @bind)",
    "(trait_item name: (type_identifier) @bind)",
    "(type_item name: (type_identifier) @bind)",
    "(const_item name: (identifier) @bind)",
    "(static_item name: (identifier) @bind)",
    "(mod_item name: (identifier) @bind)",
    "(macro_definition name: (identifier) @bind)",
    "(enum_variant name: (identifier) @bind)",
    "(field_declaration name: (field_identifier) @bind)",
    "(type_parameters (type_identifier) @bind)",
    "(type_parameter name: (type_identifier) @bind)",
    "(constrained_type_parameter left: (type_identifier) @bind)",
    "(parameter pattern: (identifier) @bind)",
    "(let_declaration pattern: (identifier) @bind)",
    "(tuple_pattern (identifier) @bind)",
    "(closure_parameters (identifier) @bind)",
    "(for_expression pattern: (identifier) @bind)",
    "(use_as_clause alias: (identifier) @bind)",
    "(scoped_identifier path: (_) @skipall)",
    "(scoped_use_list path: (_) @skipall)",
)
_CSHARP = (
    "(class_declaration name: (identifier) @bind)",
    "(struct_declaration name: (identifier) @bind)",
    "(record_declaration name: (identifier) @bind)",
    "(interface_declaration name: (identifier) @bind)",
    "(enum_declaration name: (identifier) @bind)",
    "(enum_member_declaration name: (identifier) @bind)",
    "(delegate_declaration name: (identifier) @bind)",
    "(method_declaration name: (identifier) @bind)",
    "(local_function_statement name: (identifier) @bind)",
    "(constructor_declaration name: (identifier) @bind)",
    "(property_declaration name: (identifier) @bind)",
    "(event_declaration name: (identifier) @bind)",
    "(variable_declarator name: (identifier) @bind)",
    "(variable_declarator . (identifier) @bind)",
    "(parameter name: (identifier) @bind)",
    "(type_parameter name: (identifier) @bind)",
    "(foreach_statement left: (identifier) @bind)",
    "(catch_declaration name: (identifier) @bind)",
    "(declaration_expression name: (identifier) @bind)",
    "(implicit_parameter) @bind",
    "(using_directive) @skipall",
    "(namespace_declaration name: (_) @skipall)",
    "(file_scoped_namespace_declaration name: (_) @skipall)",
)
_JAVA = (
    "(class_declaration name: (identifier) @bind)",
    "(interface_declaration name: (identifier) @bind)",
    "(enum_declaration name: (identifier) @bind)",
    "(record_declaration name: (identifier) @bind)",
    "(annotation_type_declaration name: (identifier) @bind)",
    "(enum_constant name: (identifier) @bind)",
    "(method_declaration name: (identifier) @bind)",
    "(constructor_declaration name: (identifier) @bind)",
    "(variable_declarator name: (identifier) @bind)",
    "(formal_parameter name: (identifier) @bind)",
    "(spread_parameter (variable_declarator name: (identifier) @bind))",
    "(catch_formal_parameter name: (identifier) @bind)",
    "(enhanced_for_statement name: (identifier) @bind)",
    "(lambda_expression parameters: (identifier) @bind)",
    "(inferred_parameters (identifier) @bind)",
    "(type_parameter (type_identifier) @bind)",
    "(package_declaration) @skipall",
    "(import_declaration (scoped_identifier scope: (_) @skipall))",
)
# C and C++: what a declaration names (its function, parameters, variables, types, fields, enumerators,
# macros). Not the generic `name:` rule, which took a template's call (`do_write_float<Char>(...)`,
# a `template_function`'s name) and a qualified call's (`Status::OK()`) for bindings, so fmt's
# `write_float` had no callee `do_write_float`, and its parameters (`out`) for references.
_C = (
    "(function_declarator declarator: (identifier) @bind)",
    "(function_declarator declarator: (field_identifier) @bind)",
    "(function_declarator declarator: (qualified_identifier name: (identifier) @bind))",
    "(parameter_declaration declarator: (identifier) @bind)",
    "(parameter_declaration declarator: (pointer_declarator declarator: (identifier) @bind))",
    "(parameter_declaration declarator: (reference_declarator (identifier) @bind))",
    "(optional_parameter_declaration declarator: (identifier) @bind)",
    "(optional_parameter_declaration declarator: (reference_declarator (identifier) @bind))",
    "(variadic_parameter_declaration declarator: (variadic_declarator (identifier) @bind))",
    "(init_declarator declarator: (identifier) @bind)",
    "(init_declarator declarator: (pointer_declarator declarator: (identifier) @bind))",
    "(init_declarator declarator: (reference_declarator (identifier) @bind))",
    "(declaration declarator: (identifier) @bind)",
    "(declaration declarator: (pointer_declarator declarator: (identifier) @bind))",
    "(for_range_loop declarator: (identifier) @bind)",
    "(for_range_loop declarator: (reference_declarator (identifier) @bind))",
    "(lambda_capture_specifier (identifier) @bind)",
    "(field_declaration declarator: (field_identifier) @bind)",
    "(field_declaration declarator: (pointer_declarator declarator: (field_identifier) @bind))",
    "(struct_specifier name: (type_identifier) @bind body: (_))",
    "(class_specifier name: (type_identifier) @bind body: (_))",
    "(union_specifier name: (type_identifier) @bind body: (_))",
    "(enum_specifier name: (type_identifier) @bind body: (_))",
    "(enumerator name: (identifier) @bind)",
    "(type_definition declarator: (type_identifier) @bind)",
    "(alias_declaration name: (type_identifier) @bind)",
    "(type_parameter_declaration (type_identifier) @bind)",
    "(optional_type_parameter_declaration name: (type_identifier) @bind)",
    "(namespace_definition name: (_) @skipall)",
    "(preproc_def name: (identifier) @bind)",
    "(preproc_function_def name: (identifier) @bind)",
    "(preproc_params (identifier) @bind)",
    "(preproc_include) @skipall",
)
_GENERIC = ("(_ name: (_) @bind)",)
_SHELL = ("(function_definition name: (word) @bind)",)
_HASKELL = (
    "(function name: (variable) @bind)",
    "(bind name: (variable) @bind)",
    "(signature name: (variable) @bind)",
    "(patterns (variable) @bind)",
    "(lambda patterns: (patterns (variable) @bind))",
    "(data_type name: (name) @bind)",
    "(newtype name: (name) @bind)",
    "(type_synomym name: (name) @bind)",
    "(import) @skipall",
    "(header) @skipall",
)

# Grammars whose uses are no identifier kind: a shell script calls a function as a command's name
# (nvm.sh's 118 functions calling each other gave 30 edges, from its other files' identifiers), and
# Haskell's functions are `variable`s (its types `name`s).
_USES: dict[str, list[str]] = {
    "bash": ["(command_name (word) @ref)"],
    "haskell": ["[(variable) (name) (constructor)] @ref"],
}

BINDINGS: dict[str, tuple[str, ...]] = {
    "python": _PY,
    "javascript": _JS,
    "typescript": _JS,
    "tsx": _JS,
    "go": _GO,
    "rust": _RUST,
    "csharp": _CSHARP,
    "java": _JAVA,
    **dict.fromkeys(("c", "cpp", "cuda"), _C),
    "objc": _C + _GENERIC,  # its interfaces', methods' and properties' names as well
    "bash": _SHELL,
    "haskell": _HASKELL,
}


@cache
def language(lang: str) -> Any:
    from tree_sitter_language_pack import get_language

    return get_language(lang)  # type: ignore[arg-type]


def _compiles(lang_obj: Any, pattern: str) -> bool:
    from tree_sitter import Query

    try:
        Query(lang_obj, pattern)
    except Exception:  # tree_sitter.QueryError, or NameError-like errors for unknown kinds
        return False
    return True


_IMPORTS: dict[str, tuple[str, ...]] = {
    "python": (
        "(import_statement) @imp",
        "(import_from_statement) @imp",
    ),
    "javascript": (
        "(import_statement source: (string) @str)",
        "(export_statement source: (string) @str)",
        "(call_expression function: (identifier) @_fn arguments: (arguments . (string) @str)"
        ' (#eq? @_fn "require"))',
        "(call_expression function: (import) arguments: (arguments . (string) @str))",
    ),
    "go": ("(import_spec path: (_) @str)",),
    # `mod x;` is not an import: it brings no unqualified names into scope, only `x::...` paths
    "rust": ("(use_declaration argument: (_) @imp)",),
    "csharp": ("(using_directive) @imp",),
    "java": ("(import_declaration) @imp",),
}
_IMPORTS["typescript"] = _IMPORTS["tsx"] = _IMPORTS["javascript"]


@cache
def refs_query(lang: str) -> Any:
    """One query, one pass over the tree: `@ref` uses, `@bind` bindings, `@skip` (one node),
    `@skipall` (a whole subtree), and the import statements (`@imp`, quoted `@str`)."""
    lang_obj = language(lang)
    kinds = [k for k in REF_KINDS if lang_obj.id_for_node_kind(k, True)]
    if lang not in SPECS and lang_obj.id_for_node_kind("name", True):
        kinds.append("name")
    head = _USES.get(lang) or (["[" + " ".join(f"({k})" for k in kinds) + "] @ref"] if kinds else [])
    query, _ = compiled(lang_obj, head, [*BINDINGS.get(lang, _GENERIC), *_IMPORTS.get(lang, ())])
    return query


def compiled(lang_obj: Any, head: list[str], candidates: list[str]) -> tuple[Any, list[str]]:
    """One query of `head` and of those `candidates` this grammar compiles, and which those are.

    Not a compile a candidate (~1-2 ms each: 22 ms for Python's, 70 for TypeScript's, in every
    process that links a file): all are compiled at once, and a failure names its row (one
    pattern a line), which is dropped before the next try. A row that compiles alone (not its
    own fault) sends every candidate through `_compiles` as before."""
    from tree_sitter import Query

    kept = list(candidates)
    while head or kept:
        try:
            return Query(lang_obj, "\n".join(head + kept)), kept
        except Exception as e:  # tree_sitter.QueryError: "Invalid node type at row 5, column 1: ..."
            found = _ROW.search(str(e))
            row = int(found.group(1)) - len(head) if found else -1
            if (
                any("\n" in p for p in head + kept)
                or not 0 <= row < len(kept)
                or _compiles(lang_obj, kept[row])
            ):
                kept = [p for p in kept if _compiles(lang_obj, p)]
                return (Query(lang_obj, "\n".join(head + kept)) if head or kept else None), kept
            del kept[row]
    return None, kept


_ROW = re.compile(r"\bat row (\d+),")
