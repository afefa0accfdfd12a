"""Definitions that are no definition node, for grammars the generic rule misses: Elixir's
`defmodule` and `def` are calls, Zig's functions and types are `Decl` wrappers (a type is a
`const` bound to a `struct {...}`), Dart writes a function as a signature followed by its body
as a sibling, Haskell's types are `data_type`, `newtype`, `class` and `instance` nodes (an
instance extends a type as a Rust impl does, and is named like one: `<Cart as Priced>`; a class
declares its methods by signature; a function may be a bare `bind`), and
Lua binds many functions by assignment (`M.setup = function(opts) ... end`), and Objective-C's
`@interface`, `@implementation` and `@property` are no declaration the generic rule knows (a
class's members are its own children, a category is `Box (Extras)`).
`symbols.Classifier` asks `classify` when nothing else matched a node; `extractor.Extractor` asks
for a definition's body, its last node and the attributes above it."""

from __future__ import annotations

from cora_ci.chunking import functional
from cora_ci.chunking.model import DECLARATION
from cora_ci.chunking.nodes import Node, child, text_of

LANGS = frozenset({"elixir", "zig", "dart", "haskell", "lua", "objc"}) | functional.LANGS
_ELIXIR_TYPES = {"defmodule": "module", "defprotocol": "protocol", "defimpl": "impl"}
_ELIXIR_FUNCTIONS = {
    "def": "function", "defp": "function", "defdelegate": "function", "defmacro": "macro",
    "defmacrop": "macro", "defguard": "macro", "defguardp": "macro",
}  # fmt: skip
_ELIXIR_ATTRIBUTES = frozenset({"doc", "spec", "impl", "deprecated", "since"})  # above a def, its own
_ZIG_CONTAINERS = frozenset({"struct", "enum", "union", "opaque"})
_DART_SIGNATURES = frozenset({"function_signature", "method_signature"})
_DART_TYPES = {"mixin_declaration": "mixin", "extension_declaration": "extension"}
_OBJC_TYPES = {"class_interface": "interface", "class_implementation": "implementation"}
# a class's properties and instance variables (a C struct's member is a `struct_declaration` too)
OBJC_MEMBERS = frozenset({"property_declaration", "instance_variable", "struct_declaration"})
_HASKELL_TYPES = {"data_type": "data", "newtype": "newtype", "type_synomym": "type", "class": "class"}


def classify(lang: str, n: Node, src: bytes, in_type: bool) -> tuple[str, str, str] | None:
    """(kind, label, name) when `n` defines a symbol in `lang`'s own way, else None."""
    if lang == "elixir":
        return _elixir(n, src)  # a module's functions are functions: Elixir has no methods
    if lang == "zig":
        return _zig(n, src, in_type)
    if lang == "dart":
        return _dart(n, src, in_type)
    if lang == "haskell":
        return _haskell(n, src, in_type)
    if lang == "lua" and (fn := _lua_function(n)) is not None:
        names = n.child_by_field_name("name") if n.type == "field" else child(n, "variable_list")
        return ("method", "function", text_of(src, names)) if names is not None and fn else None
    if lang == "objc":
        return _objc(n, src, in_type)
    return None


def body(lang: str, n: Node) -> Node | None:
    """The node holding a definition's members or statements, where no `body` field says so."""
    if lang in functional.LANGS:
        return functional.body(lang, n)
    if lang == "elixir" and n.type == "call":
        return child(n, "do_block")
    if lang == "zig" and n.type == "Decl":
        return child(n, "Block") or _zig_container(n)
    if lang == "dart" and n.type in _DART_SIGNATURES:
        nxt = n.next_named_sibling
        return nxt if nxt is not None and nxt.type == "function_body" else None
    if lang == "haskell" and n.type in ("class", "instance"):
        return n.child_by_field_name("declarations")
    if lang == "lua" and (fn := _lua_function(n)) is not None:
        return fn.child_by_field_name("body")
    if lang == "objc" and n.type in (*_OBJC_TYPES, "protocol_declaration"):
        return n  # its members are its own children
    if lang == "objc" and n.type == "method_definition":
        return child(n, "compound_statement")
    return None


def last_node(lang: str, n: Node, src: bytes) -> Node:
    """The node a definition ends with: a Dart signature's body, which follows it; a Kotlin
    property's `get()`/`set()` on the lines below it, which the grammar makes its siblings (okio's
    `actual val isAbsolute: Boolean` was shown without its `get() = commonIsAbsolute()`)."""
    if lang == "dart" and n.type in _DART_SIGNATURES:
        return body(lang, n) or n
    if lang == "kotlin" and n.type == "property_declaration":
        while (after := n.next_named_sibling) is not None and after.type in KOTLIN_ACCESSORS:
            n = after
    if lang in functional.LANGS:
        return functional.last_node(lang, n, src)
    return n


KOTLIN_ACCESSORS = frozenset({"getter", "setter"})


def folded_comments(lang: str, n: Node) -> list[Node]:
    """The comments a grammar folds into the end of the statement before them: Kotlin's
    `package_header` and `import_header` end with the KDoc of the declaration that follows (okhttp's
    `CertificatePinner` was a class without its 120 lines of doc, the doc the file's header)."""
    if lang != "kotlin" or n.type not in _KOTLIN_HEADERS:
        return []
    while n.type == "import_list" and n.named_children:
        n = n.named_children[-1]
    out: list[Node] = []
    for c in reversed(n.named_children):
        if c.type not in _KOTLIN_COMMENTS:
            break
        out.append(c)
    return out[::-1]


_KOTLIN_HEADERS = frozenset({"package_header", "import_list", "import_header"})
_KOTLIN_COMMENTS = frozenset({"multiline_comment", "line_comment"})


def attaches(lang: str, n: Node, src: bytes) -> bool:
    """An Elixir `@doc`, `@spec` or `@impl` above a `def`, a Haskell type signature above its
    function: part of it, like a decorator."""
    if lang in functional.LANGS:
        return functional.attaches(lang, n)
    if lang == "haskell":  # a class's own signatures are its methods, not a default's attribute
        return n.type == "signature" and (n.parent is None or n.parent.type != "class_declarations")
    if lang != "elixir" or n.type != "unary_operator" or text_of(src, n)[:1] != "@":
        return False
    call = n.named_children[0] if n.named_children else None
    target = call.child_by_field_name("target") if call is not None and call.type == "call" else None
    return target is not None and text_of(src, target) in _ELIXIR_ATTRIBUTES


def _elixir(n: Node, src: bytes) -> tuple[str, str, str] | None:
    if n.type == "unary_operator":
        return _elixir_callback(n, src)
    if n.type != "call":
        return None
    target = n.child_by_field_name("target")
    args = child(n, "arguments")
    if target is None or target.type != "identifier" or args is None or not args.named_children:
        return None
    word, first = text_of(src, target), args.named_children[0]
    if word in _ELIXIR_TYPES and child(n, "do_block") is not None:
        return ("type", _ELIXIR_TYPES[word], text_of(src, first)) if first.type == "alias" else None
    if word not in _ELIXIR_FUNCTIONS:
        return None
    if first.type == "binary_operator":  # `def f(x) when is_integer(x)`
        first = first.child_by_field_name("left") or first
    if first.type == "call":
        first = first.child_by_field_name("target") or first
    return ("method", _ELIXIR_FUNCTIONS[word], text_of(src, first)) if first.type == "identifier" else None


_ELIXIR_CALLBACKS = frozenset({"callback", "macrocallback"})


def _elixir_callback(n: Node, src: bytes) -> tuple[str, str, str] | None:
    """A behaviour's `@callback static_path(path :: String.t()) :: String.t()`: the function its
    modules implement, declared (phoenix's `Phoenix.Endpoint.static_path` was found in no
    declaration of the behaviour), a declaration as a C prototype is (`DECLARATION`)."""
    call = n.child_by_field_name("operand")
    target = call.child_by_field_name("target") if call is not None and call.type == "call" else None
    if target is None or text_of(src, n)[:1] != "@" or text_of(src, target) not in _ELIXIR_CALLBACKS:
        return None
    args = child(call, "arguments")
    spec = args.named_children[0] if args is not None and args.named_children else None
    head = spec.child_by_field_name("left") if spec is not None and spec.type == "binary_operator" else spec
    name = head.child_by_field_name("target") if head is not None and head.type == "call" else head
    if name is None or name.type != "identifier":
        return None
    return "method", DECLARATION, text_of(src, name)  # as a C prototype: merged with no definition


def _zig(n: Node, src: bytes, in_type: bool) -> tuple[str, str, str] | None:
    if n.type != "Decl":
        return None
    proto = child(n, "FnProto")
    if proto is not None:
        name = child(proto, "IDENTIFIER")
        label = "method" if in_type else "function"
        return ("method", label, text_of(src, name)) if name is not None else None
    container = _zig_container(n)
    var = child(n, "VarDecl")
    name = child(var, "IDENTIFIER") if var is not None else None
    if container is None or name is None or not container.children:
        return None
    word = text_of(src, container.children[0])
    return ("type", word, text_of(src, name)) if word in _ZIG_CONTAINERS else None


def _zig_container(n: Node) -> Node | None:
    """`const Point = struct {...}`: the `ContainerDecl` a declaration binds, under its value."""
    var = child(n, "VarDecl")
    node = var
    for step in ("ErrorUnionExpr", "SuffixExpr", "ContainerDecl"):
        node = child(node, step) if node is not None else None
    return node


def _dart(n: Node, src: bytes, in_type: bool) -> tuple[str, str, str] | None:
    if n.type in _DART_TYPES:
        name = n.child_by_field_name("name") or child(n, "identifier")
        return ("type", _DART_TYPES[n.type], text_of(src, name)) if name is not None else None
    if n.type == "declaration" and in_type:  # a member without a body: a field, or one that ends at `;`
        return _dart_member(n, src)
    if n.type not in _DART_SIGNATURES:
        return None
    sig = n if n.type == "function_signature" else (n.named_children[0] if n.named_children else None)
    if sig is not None and sig.type in _DART_CONSTRUCTORS | _DART_ACCESSORS:
        return _dart_member(n, src)
    name = None if sig is None else sig.child_by_field_name("name") or child(sig, "identifier")
    if name is None:
        return None
    return "method", "function" if n.type == "function_signature" else "method", text_of(src, name)


_DART_CONSTRUCTORS = frozenset({
    "constructor_signature", "constant_constructor_signature", "factory_constructor_signature",
    "redirecting_factory_constructor_signature",
})  # fmt: skip
_DART_ACCESSORS = frozenset({"getter_signature", "setter_signature"})
_DART_FIELDS = frozenset({"initialized_identifier_list", "static_final_declaration_list"})


def _dart_member(n: Node, src: bytes) -> tuple[str, str, str] | None:
    """A class member a `declaration` or `method_signature` holds: a constructor (named by its own
    name: `factory MultipartFile.fromBytes(...)` is `fromBytes`; one with an initializer list or
    a redirection and no body is a `declaration`), a getter or setter (`bool get canPush;`), or a
    field (`final bool allowServerPushes;`): none was a symbol but bodied methods."""
    sig = n.named_children[0] if n.named_children else None
    if sig is None:
        return None
    if sig.type in _DART_CONSTRUCTORS:
        names = [c for c in sig.children if c.type == "identifier"]  # `Class` or `Class.named`
        return ("method", "constructor", text_of(src, names[-1])) if names else None
    if sig.type in _DART_ACCESSORS:
        name = sig.child_by_field_name("name") or child(sig, "identifier")
        return ("property", "property", text_of(src, name)) if name is not None else None
    listed = next((c for c in n.named_children if c.type in _DART_FIELDS), None)
    if n.type == "declaration" and listed is not None:
        first = listed.named_children[0] if listed.named_children else None
        name = first if first is None or first.type == "identifier" else child(first, "identifier")
        return ("field", "field", text_of(src, name)) if name is not None else None
    return None


def _haskell(n: Node, src: bytes, in_type: bool) -> tuple[str, str, str] | None:
    name = n.child_by_field_name("name")
    if name is None:
        return None
    if n.type == "signature" and in_type:  # `parseJSON :: Value -> Parser a` in a class declares it
        return "method", "method", text_of(src, name)
    if n.type == "bind":  # `encode = toLazyText . build`: a function defined without its arguments
        return "method", "method" if in_type else "function", text_of(src, name)
    if n.type in _HASKELL_TYPES:
        return "type", _HASKELL_TYPES[n.type], text_of(src, name)
    if n.type != "instance":
        return None
    types = n.child_by_field_name("patterns")
    of = " ".join(text_of(src, types).split()) if types is not None else ""
    return "type", "impl", f"<{of} as {text_of(src, name)}>" if of else text_of(src, name)


def _lua_function(n: Node) -> Node | None:
    """`name = function(...) ... end` (one name, one value), in a statement or a table (lazy.nvim's
    `M.commands = { clear = function() ... end, ... }`, its commands): the function bound."""
    if n.type == "field" and n.child_by_field_name("name") is not None:
        fn = n.child_by_field_name("value")
        return fn if fn is not None and fn.type == "function_definition" else None
    if n.type != "assignment_statement":
        return None
    names, values = child(n, "variable_list"), child(n, "expression_list")
    if names is None or values is None or len(names.named_children) != 1 or len(values.named_children) != 1:
        return None
    fn = values.named_children[0]
    return fn if fn.type == "function_definition" else None


def _objc(n: Node, src: bytes, in_type: bool) -> tuple[str, str, str] | None:
    """`@interface Box : NSObject` and `@implementation Box` are Box (a category, `@interface Box
    (Extras)`, an extension of it); `@property (copy) NSString *name;` is the property `name`,
    `NSInteger _size;` among a class's instance variables the field `_size`."""
    if n.type in _OBJC_TYPES:
        name = child(n, "identifier")
        if name is None:
            return None
        category = any(c.type == "(" for c in n.children)
        return "type", "extension" if category else _OBJC_TYPES[n.type], text_of(src, name)
    if n.type in OBJC_MEMBERS and in_type:
        declarator = child(n, "struct_declaration") if n.type == "property_declaration" else n
        stack = [declarator] if declarator is not None else []
        while stack:  # the declared name: the last identifier, past the type and any `*`
            d = stack.pop()
            if d.type in ("identifier", "field_identifier"):
                kind = "property" if n.type == "property_declaration" else "field"
                return kind, kind, text_of(src, d)
            stack.extend(c for c in d.named_children if c.type != "type_identifier")
    return None
