"""What a syntax node defines and what it is called: a symbol's kind, hierarchy label and name,
by the language's node types (`specs.py`) and the cases they leave to code (a JavaScript
function held in a variable, a Python lambda or property, a Rust `impl`, C# operators, C and
C++ declarators). `extractor.py` walks a file and asks this of each node it meets."""

from __future__ import annotations

import re

from cora_ci.chunking import dialects, functional
from cora_ci.chunking.c_names import (
    C_ALIASES,
    C_DECLARATIONS,
    C_MACRO,
    C_TAGGED,
    CAPITALS,
    alias_name,
    declarator_name,
    declarator_names,
    macro_case,
    prototype,
    typedef_name,
)
from cora_ci.chunking.model import DECLARATION
from cora_ci.chunking.nodes import Node, first_below, text_of
from cora_ci.chunking.specs import LangSpec, generic_kind, spec_for
from cora_ci.files.langs import C_LANGS, JS_LANGS

FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function", "lambda"}
)
# A definition's own name among its children, where the grammar gives it no `name` field
# (Kotlin's `class_declaration` holds a `type_identifier`, its `function_declaration` a
# `simple_identifier` after any receiver type).
_NAME_NODES = frozenset({"identifier", "type_identifier", "simple_identifier", "constant"})
_TYPE_WORDS = frozenset({
    "class", "struct", "interface", "enum", "trait", "protocol", "object", "extension", "actor",
    "record", "union",
})  # fmt: skip
# Swift's and Kotlin's `var`/`val` members (Scala's, with its package objects, are `Classifier._scala`'s),
# and what makes one a property (code runs to read it)
_MEMBER_VARIABLES = frozenset({"property_declaration", "protocol_property_declaration"})
_SCALA_DEFINITIONS = frozenset(
    {"val_definition", "var_definition", "val_declaration", "var_declaration", "package_object"}
)
_PROPERTY_CODE = frozenset(
    {"computed_property", "willset_didset_block", "getter", "setter", "property_delegate"}
)
_JS_NAME = re.compile(r"[A-Za-z_$][\w$]*")
_DEFINE_PROPERTY = frozenset({"Object.defineProperty", "Reflect.defineProperty"})
_ACCESSORS = frozenset({"get", "set", "value"})  # a property descriptor's members that are code
_PY_PROPERTY = re.compile(
    r"^@(property|cached_property|functools\.cached_property|\w+\.(setter|getter|deleter))\b"
)


# A JavaScript variable that holds a module (`const fs = require("fs")`) imports it, defines nothing
_IMPORTING = frozenset({"require", "import"})


# another name: Python's and JavaScript's names, Ruby's constants (`Alias = Shop`, `X = A::B`)
_ALIASED = frozenset({"identifier", "attribute", "member_expression", "constant", "scope_resolution"})


def _alias(value: Node | None) -> bool:
    """`WebSocketReader = WebSocketReaderCython`: another name for what is defined elsewhere."""
    return value is not None and value.type in _ALIASED


def _wraps_function(value: Node) -> bool:
    """A call given a function it wraps (`forwardRef((props, ref) => ...)`, zod's
    `$constructor("ZodString", (inst, def) => {...})`): what the variable holds is code, a
    function, not data."""
    args = value.child_by_field_name("arguments") if value.type == "call_expression" else None
    return args is not None and any(a.type in FUNCTION_VALUES for a in args.named_children)


def _imported(value: Node, src: bytes) -> bool:
    """`require("x")`, `await import("x")` and the like: a value that is another module."""
    if value.type == "await_expression" and value.named_children:
        value = value.named_children[0]
    fn = value.child_by_field_name("function") if value.type == "call_expression" else None
    return fn is not None and text_of(src, fn) in _IMPORTING


def _js_variable(declarator: Node) -> str:
    """A JavaScript variable's label by its keyword: `const` declares a constant."""
    decl = declarator.parent
    keyword = decl.children[0].type if decl is not None and decl.children else ""
    return "constant" if keyword == "const" else "variable"


# Swift's members named by their keyword (Alamofire's 113 initializers were no symbols, their
# locals read as the type's fields)
_SWIFT_KEYWORD_NAMED = {"init_declaration": "init", "deinit_declaration": "deinit",
                        "subscript_declaration": "subscript"}  # fmt: skip
_RUBY_ATTRIBUTES = frozenset({"attr_accessor", "attr_reader", "attr_writer"})


def _ruby_attribute(sym: Node, src: bytes) -> bool:
    """`sym` is a name `attr_accessor :a, :b` (or `attr_reader`, `attr_writer`) defines."""
    args = sym.parent
    call = args.parent if args is not None and args.type == "argument_list" else None
    method = call.child_by_field_name("method") if call is not None and call.type == "call" else None
    return (method is not None and call is not None and call.child_by_field_name("receiver") is None
            and text_of(src, method) in _RUBY_ATTRIBUTES)  # fmt: skip


def declaration(hierarchy: list[str]) -> bool:
    """A chunk of C or C++ functions declared without their bodies (its first symbol's label says
    so: `assemble` never merges a declaration with a definition)."""
    return bool(hierarchy) and hierarchy[-1].startswith(DECLARATION + ":")


def squash(s: str) -> str:
    return " ".join(s.split())


class Classifier:
    """Kinds and names of the symbols of one file's source `src` in `lang`."""

    def __init__(self, lang: str, src: bytes) -> None:
        self.lang = lang
        self.spec: LangSpec = spec_for(lang)
        self.src = src

    def classify(self, n: Node, in_type: bool) -> tuple[str, str, str] | None:
        """(kind, label, name) when `n` defines a symbol, else None."""
        s, t = self.spec, n.type
        if self.lang in JS_LANGS and (accessed := self.accessor(n)) is not None:
            return "property", "property", accessed[0]
        if t in _MEMBER_VARIABLES and self.lang in ("swift", "kotlin"):
            return self._member_variable(n, in_type)
        if self.lang == "scala" and t in _SCALA_DEFINITIONS:
            return self._scala(n, in_type)
        if t in dialects.OBJC_MEMBERS and self.lang == "objc":  # not the generic rule's `struct` type
            return dialects.classify(self.lang, n, self.src, in_type)
        if self.lang in functional.LANGS:  # the generic rule's names of theirs are wrong or none
            return functional.classify(self.lang, n, self.src)
        if t in s.types:
            kind, label = "type", s.types[t]
        elif t in s.namespaces:
            if self.lang == "rust" and n.child_by_field_name("body") is None:
                return None  # `mod foo;` is an import
            kind, label = "namespace", s.namespaces[t]
        elif t in s.methods:
            kind, label = "method", s.methods[t]
            if in_type and label == "function":
                label = "method"
        elif t in s.properties:
            kind, label = "property", s.properties[t]
        elif in_type and t in s.fields:
            kind, label = "field", s.fields[t]
        elif t in s.variables:
            kind, label = "field", s.variables[t]
        elif t in s.events:
            kind, label = "event", s.events[t]
        elif s.generic and (g := generic_kind(t)):
            kind, label = g
            if in_type and label == "function":
                label = "method"
            if self.lang in C_LANGS and t in C_TAGGED and n.child_by_field_name("body") is None:
                return None  # a forward declaration or a use of the type names it, defines nothing
        else:
            return self._special(n, in_type)
        name = self.name_of(n)
        if not name:
            return None
        return self._refine(n, kind, label, name, in_type)

    def _special(self, n: Node, in_type: bool) -> tuple[str, str, str] | None:
        t, lang = n.type, self.lang
        if lang in C_LANGS and t in C_DECLARATIONS:
            name = prototype(self.src, n)
            return ("method", DECLARATION, name) if name else None
        if lang in C_LANGS and t == C_MACRO and (name := n.child_by_field_name("name")) is not None:
            return "method", "macro", text_of(self.src, name)
        if lang in C_LANGS and t in C_ALIASES and not in_type and (alias := alias_name(n)) is not None:
            return "type", "typedef" if t == "type_definition" else "alias", text_of(self.src, alias)
        if lang in dialects.LANGS:
            return dialects.classify(lang, n, self.src, in_type)
        if lang in JS_LANGS:
            if t == "variable_declarator":
                value = n.child_by_field_name("value")
                name = n.child_by_field_name("name")
                if name is None or name.type != "identifier":
                    return None
                if value is not None and (value.type in FUNCTION_VALUES or _wraps_function(value)):
                    return "method", "function", text_of(self.src, name)
                if value is not None and value.type == "object":
                    return "namespace", "object", text_of(self.src, name)
                if value is None or not (_imported(value, self.src) or _alias(value)):
                    return "field", _js_variable(n), text_of(self.src, name)
            elif t == "pair":
                value = n.child_by_field_name("value")
                key = n.child_by_field_name("key")
                if value is not None and key is not None and value.type in FUNCTION_VALUES:
                    return "method", "method", text_of(self.src, key).strip("'\"")
            elif t == "assignment_expression" and (bound := self.assigned(n)) is not None:
                return "method", "method" if bound[1] else "function", bound[0]
        elif lang == "python" and t == "assignment":
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            if left is None or left.type not in ("identifier", "attribute"):
                return None
            if right is not None and right.type == "lambda":
                return "method", "method" if in_type else "function", text_of(self.src, left)
            if in_type:
                return "field", "field", text_of(self.src, left)
            name = text_of(self.src, left)
            dunder = name.startswith("__") and name.endswith("__")
            if left.type == "identifier" and name != "_" and not dunder and not _alias(right):
                return "field", "constant" if CAPITALS.fullmatch(name) else "variable", name
        elif lang == "swift" and t in _SWIFT_KEYWORD_NAMED:  # named by `name_of`, by its keyword
            return "method", "initializer" if t == "init_declaration" else t.split("_")[0], self.name_of(n)
        elif lang == "swift" and t == "enum_entry" and (name := n.child_by_field_name("name")) is not None:
            return "field", "case", text_of(self.src, name)  # `case explicitlyCancelled`
        elif lang == "swift" and t == "typealias_declaration" and (name := n.child_by_field_name("name")):
            return "type", "typealias", text_of(self.src, name)
        elif lang == "kotlin" and t == "type_alias" and (aliased := first_below(n, "type_identifier")):
            return "type", "typealias", text_of(self.src, aliased)  # okio's `actual typealias X = java...`
        elif lang == "ruby" and t == "simple_symbol" and in_type and _ruby_attribute(n, self.src):
            return "field", "attribute", text_of(self.src, n).lstrip(":")  # `attr_accessor :ip_filter`
        elif lang == "ruby" and t == "assignment":  # a constant (`HTTP_STATUS_CODES = {...}`)
            left = n.child_by_field_name("left")
            if left is not None and left.type == "constant" and not _alias(n.child_by_field_name("right")):
                return "field", "constant", text_of(self.src, left)
        return None

    def assigned(self, n: Node) -> tuple[str, tuple[str, ...]] | None:
        """A JavaScript function bound by assignment, as CommonJS code defines most of its API:
        (its name, its owner's names) for `res.json = function json(obj) {...}` (`json`, `res`),
        `Layer.prototype.handle = function ...` (`handle`, `Layer`), `exports.parse = ...` and
        `module.exports = function createApp() {...}` (no owner); None for anything else, and
        for `this.x = ...` (a field of what a constructor makes)."""
        left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        if (
            left is None
            or right is None
            or left.type != "member_expression"
            or right.type not in FUNCTION_VALUES
        ):
            return None
        parts = [p.strip() for p in text_of(self.src, left).split(".")]
        if parts[0] == "this" or not all(_JS_NAME.fullmatch(p) for p in parts):
            return None
        if parts == ["module", "exports"]:  # the module is the function: named by its own name
            own = right.child_by_field_name("name")
            return (text_of(self.src, own), ()) if own is not None else None
        owner = [p for p in parts[:-1] if p != "prototype"]
        owner = (
            owner[2:]
            if owner[:2] == ["module", "exports"]
            else owner[1:]
            if owner[:1] == ["exports"]
            else owner
        )
        return parts[-1], tuple(owner)

    def accessor(self, n: Node) -> tuple[str, tuple[str, ...]] | None:
        """A getter or setter that `Object.defineProperty(Foo.prototype, "bar", {get() {...}})`
        defines: (`bar`, `Foo`), not a function of the file named `get`; None for anything else."""
        if n.type not in ("pair", "method_definition"):
            return None
        key_node = n.child_by_field_name("key" if n.type == "pair" else "name")
        value = n.child_by_field_name("value") if n.type == "pair" else n
        if key_node is None or text_of(self.src, key_node) not in _ACCESSORS or value is None:
            return None
        if n.type == "pair" and value.type not in FUNCTION_VALUES:
            return None  # `enumerable: true`, `value: 42`: the descriptor's settings
        obj = n.parent
        args = obj.parent if obj is not None and obj.type == "object" else None
        call = args.parent if args is not None and args.type == "arguments" else None
        fn = call.child_by_field_name("function") if call is not None else None
        if args is None or fn is None or text_of(self.src, fn) not in _DEFINE_PROPERTY:
            return None
        target, key = [*args.named_children, None, None][:2]
        if target is None or key is None or key.type != "string":
            return None
        owner = [p.strip() for p in text_of(self.src, target).split(".") if p.strip() != "prototype"]
        name = text_of(self.src, key)[1:-1]
        if not _JS_NAME.fullmatch(name) or not all(_JS_NAME.fullmatch(p) for p in owner) or owner == ["this"]:
            return None
        return name, tuple(owner)

    def _refine(self, n: Node, kind: str, label: str, name: str, in_type: bool) -> tuple[str, str, str]:
        t = n.type
        if self.lang == "python" and kind == "method":
            parent = n.parent
            if parent is not None and parent.type == "decorated_definition":
                for dec in parent.named_children:
                    if dec.type == "decorator" and _PY_PROPERTY.match(text_of(self.src, dec)):
                        return "property", "property", name
            if name == "__init__":
                label = "constructor"
        elif self.lang in JS_LANGS:
            if t == "method_definition":
                if any(c.type in ("get", "set") for c in n.children if not c.is_named):
                    return "property", "property", name
                if name == "constructor":
                    label = "constructor"
            elif kind == "field":
                value = n.child_by_field_name("value")
                if value is not None and value.type in FUNCTION_VALUES:
                    return "method", "method", name
        elif self.spec.generic and kind == "type":
            label = self._type_word(n) or label
        return kind, label, name

    def _type_word(self, n: Node) -> str | None:
        """What a generic grammar's type node declares, by its keyword: Swift's `class_declaration`
        is a struct, enum or extension by its `declaration_kind`, Kotlin's a class, interface or
        enum by the keywords before its name."""
        kind = n.child_by_field_name("declaration_kind")
        for c in [kind] if kind is not None else n.children:
            if c.is_named and c is not kind:
                continue
            word = text_of(self.src, c)
            if word in _TYPE_WORDS:
                return word
        return None

    def name_of(self, n: Node) -> str:
        t, lang = n.type, self.lang
        if lang == "rust" and t == "impl_item":
            ty = n.child_by_field_name("type")
            trait = n.child_by_field_name("trait")
            base = self._base_name(ty)
            return f"<{base} as {self._base_name(trait)}>" if trait is not None else base
        if lang == "csharp":
            if t in ("field_declaration", "event_field_declaration"):
                return declarator_names(self.src, n)
            if t == "operator_declaration":
                op = n.child_by_field_name("operator")
                return "operator " + (text_of(self.src, op) if op is not None else "?")
            if t == "conversion_operator_declaration":
                ty = n.child_by_field_name("type")
                return "operator " + (text_of(self.src, ty) if ty is not None else "?")
            if t == "indexer_declaration":
                return "this[]"
        if lang == "java" and t in ("field_declaration", "constant_declaration"):
            return declarator_names(self.src, n)
        if lang == "r" and t == "function_definition":  # its `name` field is the keyword
            return self._assigned_name(n)
        if lang == "swift" and t in _SWIFT_KEYWORD_NAMED:  # `init(...)`, `deinit`, `subscript(...)`
            return _SWIFT_KEYWORD_NAMED[t]
        if (case := self.macro_case(n)) is not None and case:
            return case[-1]
        name = n.child_by_field_name("name")
        if name is None and lang in C_LANGS and t in C_TAGGED:
            name = typedef_name(n)
        if name is None:
            name = declarator_name(n)
        if name is None and self.spec.generic:
            name = next((c for c in n.named_children if c.type in _NAME_NODES), None)
        return squash(text_of(self.src, name)) if name is not None else ""

    def _member_variable(self, n: Node, in_type: bool) -> tuple[str, str, str] | None:
        """A Swift or Kotlin type's `var`/`val`: a property when code computes or observes it
        (`var name: String { ... }`, `get() = ...`, `by lazy`) or a protocol requires it, else a
        field; at the top level, the file's constant (`val`, `let`) or variable, as Go's are (okio's
        `val FileSystem.Companion.SYSTEM` was no symbol). Named by its first identifier (`static var
        configuration`'s pattern holds `var` too)."""
        holder = next((c for c in n.named_children if c.type in ("pattern", "variable_declaration")), None)
        name = first_below(holder, "simple_identifier") if holder is not None else None
        if name is None:
            return None  # `val (a, b) = pair`
        required = n.type == "protocol_property_declaration"
        after = n.next_named_sibling  # Kotlin's `get()` on the line below is the declaration's sibling
        accessed = after is not None and after.type in dialects.KOTLIN_ACCESSORS
        if required or accessed or any(c.type in _PROPERTY_CODE for c in n.named_children):
            return "property", "property", text_of(self.src, name)
        if not in_type:
            constant = re.match(r"(?:[\w@()]+\s+)*(?:val|let)\b", text_of(self.src, n)) is not None
            return "field", "constant" if constant else "variable", text_of(self.src, name)
        return "field", "field", text_of(self.src, name)

    def _scala(self, n: Node, in_type: bool) -> tuple[str, str, str] | None:
        """Scala's `val`/`var` of an object, class or trait (a field; at the top level, a Scala 3
        file's constant or variable; `val (a, b) = ...` names none), and a `package object` (a
        type): none was a symbol (os-lib's `lazy val defaultPathSerializer` was found by no
        query of its name, its package object's members were top-level functions)."""
        name = n.child_by_field_name("name") or n.child_by_field_name("pattern")
        if name is None or name.type != "identifier":
            return None
        if n.type == "package_object":
            return "type", "package object", text_of(self.src, name)
        if in_type:
            return "field", "field", text_of(self.src, name)
        return "field", "constant" if n.type.startswith("val") else "variable", text_of(self.src, name)

    def _assigned_name(self, n: Node) -> str:
        """R's `greet <- function(x)` (or `=`, `<<-`): the name it is assigned to; an anonymous
        function (an argument, a list element) has none."""
        parent = n.parent
        if parent is None or parent.type != "binary_operator" or parent.child_by_field_name("rhs") != n:
            return ""
        op, lhs = parent.child_by_field_name("operator"), parent.child_by_field_name("lhs")
        assigns = op is not None and text_of(self.src, op) in ("<-", "<<-", "=")
        return text_of(self.src, lhs) if assigns and lhs is not None and lhs.type == "identifier" else ""

    def _base_name(self, node: Node | None) -> str:
        if node is None:
            return "?"
        m = re.match(r"[\w:.]+", text_of(self.src, node))
        return m.group(0).split("::")[-1] if m else squash(text_of(self.src, node))

    def macro_case(self, n: Node) -> tuple[str, ...] | None:
        """A C or C++ test case a macro defines, by its arguments (`c_names.macro_case`)."""
        return macro_case(self.src, n) if self.lang in C_LANGS else None
