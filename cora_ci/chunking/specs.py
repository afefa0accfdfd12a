"""Per-language tables: which tree-sitter nodes are symbols, imports, comments and attributes.

Languages without a table get a generic spec that treats definition-like nodes with a name as
symbols. Behaviour that a table cannot express (arrow functions bound to names, Python
properties, Rust impls, C declarators) lives in `symbols.py` (Go receivers in `extractor.py`), keyed
by language name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class LangSpec:
    name: str
    types: dict[str, str] = field(default_factory=dict)  # node type -> hierarchy label
    methods: dict[str, str] = field(default_factory=dict)
    properties: dict[str, str] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)  # only inside types
    # variables and constants declared outside functions (a file's, a namespace's, a type's)
    variables: dict[str, str] = field(default_factory=dict)
    events: dict[str, str] = field(default_factory=dict)
    namespaces: dict[str, str] = field(default_factory=dict)
    file_namespaces: frozenset[str] = frozenset()  # `namespace X;` applies to what follows
    imports: frozenset[str] = frozenset()
    comments: frozenset[str] = frozenset({"comment"})
    attributes: frozenset[str] = frozenset()  # siblings that attach to the next symbol
    wrappers: frozenset[str] = frozenset()  # nodes whose range belongs to the one symbol inside
    sig_skip: frozenset[str] = frozenset()  # leading children left out of signatures
    typed_params: bool = False  # overloads are told apart by parameter types, not full text
    generic: bool = False


_JS = LangSpec(
    "javascript",
    types={"class_declaration": "class", "class": "class"},
    methods={
        "function_declaration": "function",
        "generator_function_declaration": "function",
        "method_definition": "method",
    },
    fields={"field_definition": "field"},
    imports=frozenset({"import_statement"}),
    attributes=frozenset({"decorator"}),
    wrappers=frozenset(
        {"export_statement", "lexical_declaration", "variable_declaration", "expression_statement"}
    ),
    sig_skip=frozenset({"decorator", "comment"}),
)
_TS = replace(
    _JS,
    name="typescript",
    types={
        **_JS.types,
        "abstract_class_declaration": "class",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "type_alias_declaration": "type",
    },
    methods={
        **_JS.methods,
        "method_signature": "method",
        "abstract_method_signature": "method",
        "function_signature": "function",
    },
    fields={"public_field_definition": "field", "property_signature": "field", "field_definition": "field"},
    namespaces={"internal_module": "namespace", "module": "module"},
    wrappers=_JS.wrappers | {"ambient_declaration"},
)

SPECS: dict[str, LangSpec] = {
    "python": LangSpec(
        "python",
        types={"class_definition": "class"},
        methods={"function_definition": "function"},
        imports=frozenset({"import_statement", "import_from_statement", "future_import_statement"}),
        wrappers=frozenset({"decorated_definition", "expression_statement"}),
        sig_skip=frozenset({"decorator", "comment"}),
    ),
    "javascript": _JS,
    "typescript": _TS,
    "tsx": replace(_TS, name="tsx"),
    "csharp": LangSpec(
        "csharp",
        types={
            "class_declaration": "class",
            "struct_declaration": "struct",
            "record_declaration": "record",
            "record_struct_declaration": "record",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "delegate_declaration": "delegate",
        },
        methods={
            "method_declaration": "method",
            "constructor_declaration": "constructor",
            "destructor_declaration": "destructor",
            "operator_declaration": "operator",
            "conversion_operator_declaration": "operator",
            "local_function_statement": "function",
        },
        properties={"property_declaration": "property", "indexer_declaration": "indexer"},
        fields={"field_declaration": "field"},
        events={"event_field_declaration": "event", "event_declaration": "event"},
        namespaces={"namespace_declaration": "namespace"},
        file_namespaces=frozenset({"file_scoped_namespace_declaration"}),
        imports=frozenset({"using_directive", "extern_alias_directive"}),
        sig_skip=frozenset({"attribute_list", "modifier", "comment"}),
        wrappers=frozenset({"global_statement"}),
        typed_params=True,
    ),
    "java": LangSpec(
        "java",
        types={
            "class_declaration": "class",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "record_declaration": "record",
            "annotation_type_declaration": "annotation",
        },
        methods={
            "method_declaration": "method",
            "constructor_declaration": "constructor",
            "compact_constructor_declaration": "constructor",
            "annotation_type_element_declaration": "method",
        },
        fields={"field_declaration": "field", "constant_declaration": "field", "enum_constant": "constant"},
        imports=frozenset({"package_declaration", "import_declaration"}),
        comments=frozenset({"line_comment", "block_comment"}),
        sig_skip=frozenset({"modifiers", "line_comment", "block_comment"}),
        typed_params=True,
    ),
    "go": LangSpec(
        "go",
        types={"type_spec": "type", "type_alias": "type"},
        methods={"function_declaration": "function", "method_declaration": "method"},
        fields={"field_declaration": "field"},
        variables={"var_spec": "variable", "const_spec": "constant"},
        imports=frozenset({"package_clause", "import_declaration"}),
        wrappers=frozenset({"type_declaration", "var_declaration", "const_declaration", "var_spec_list"}),
    ),
    "rust": LangSpec(
        "rust",
        types={
            "struct_item": "struct",
            "enum_item": "enum",
            "union_item": "union",
            "trait_item": "trait",
            "impl_item": "impl",
            "type_item": "type",
        },
        methods={
            "function_item": "function",
            "function_signature_item": "function",
            "macro_definition": "macro",
        },
        variables={"const_item": "constant", "static_item": "static"},
        namespaces={"mod_item": "mod"},
        imports=frozenset({"use_declaration", "extern_crate_declaration"}),
        comments=frozenset({"line_comment", "block_comment"}),
        attributes=frozenset({"attribute_item"}),
        sig_skip=frozenset({"attribute_item", "visibility_modifier", "line_comment", "block_comment"}),
    ),
}

_GENERIC_TYPE = re.compile(
    r"(^|_)(class|struct|interface|enum|trait|impl|record|protocol|object|module|union)(_|$)"
)
_GENERIC_METHOD = re.compile(
    r"(^|_)(function|method|constructor|procedure|subroutine|func|fn|def|macro)(_|$)"
)
_GENERIC_DEF = re.compile(
    r"(definition|declaration|item|specifier|statement|^class|^module|^(?:singleton_)?method|^function)$"
)
_GENERIC_IMPORT = re.compile(r"(import|include|using_directive|package_(clause|declaration)|use_declaration)")


# C++'s (and CUDA's) own cases of the generic rule: a `template <...>` line (and the doc comment
# above it) is its function's or class's, and a namespace is one, as C#'s is.
_CPP_LIKE = ("cpp", "cuda")
_GENERIC_WRAPPERS = dict.fromkeys(_CPP_LIKE, frozenset({"template_declaration"}))
# R binds a function by assignment (`add <- function(x, y)`): the assignment is the definition, and
# the roxygen comments (`#'`) above it are its doc
_GENERIC_WRAPPERS["r"] = frozenset({"binary_operator"})
_GENERIC_NAMESPACES = {lang: {"namespace_definition": "namespace"} for lang in _CPP_LIKE}


def spec_for(lang: str) -> LangSpec:
    return SPECS.get(lang) or LangSpec(
        lang,
        generic=True,
        wrappers=_GENERIC_WRAPPERS.get(lang, frozenset()),
        namespaces=_GENERIC_NAMESPACES.get(lang, {}),
    )


def generic_kind(node_type: str) -> tuple[str, str] | None:
    """(kind, label) for a definition-like node type of a language without its own table."""
    if not _GENERIC_DEF.search(node_type):
        return None
    # the word nearest the end decides: Swift's `protocol_function_declaration` is a function
    t = max(_GENERIC_TYPE.finditer(node_type), key=lambda m: m.start(2), default=None)
    f = max(_GENERIC_METHOD.finditer(node_type), key=lambda m: m.start(2), default=None)
    if t is not None and (f is None or t.start(2) > f.start(2)):
        return "type", t.group(2)
    if f is not None:
        return "method", "function"
    return None


def is_generic_import(node_type: str) -> bool:
    return bool(_GENERIC_IMPORT.search(node_type))


def is_comment(spec: LangSpec, node_type: str) -> bool:
    return node_type in spec.comments or (spec.generic and ("comment" in node_type or node_type == "haddock"))
