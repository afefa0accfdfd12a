"""What C and C++ declare and what it is called: a prototype's function, a declarator's name through
pointers and references, an anonymous type's typedef, a test case a macro defines. C's
declarations name things in their declarators, not in a `name` field, so `symbols.Classifier`
asks here for C-family nodes."""

from __future__ import annotations

import re

from cora_ci.chunking.nodes import Node, text_of

C_DECLARATIONS = frozenset({"declaration", "field_declaration"})
C_ALIASES = frozenset(
    {"type_definition", "alias_declaration"}
)  # `typedef ... name;`, C++'s `using name = ...;`
_FUNCTION_NAMES = frozenset(
    {"identifier", "field_identifier", "qualified_identifier", "operator_name", "destructor_name"}
)
_DECLARED_NAMES = _FUNCTION_NAMES | {"type_identifier"}  # what a declarator's walk stops at
# A name in capitals: a C macro's (what defines a test case, `TEST_F`, not a function), a constant's
# by convention (Python's `DEFAULT_TIMEOUT`)
CAPITALS = re.compile(r"[A-Z][A-Z0-9_]*")
# A function-like macro is as much of a C library's API as a function (Lua's `lua_pop`, `FMT_ASSERT`);
# object-like ones (`#define LUA_VERSION_NUM 504`, include guards) are left in their file's code: as
# many again, for little (docs/ranking.md)
C_MACRO = "preproc_function_def"
# C's tagged types: a definition with its body, a reference without (`struct foo;`, `struct foo *p;`)
C_TAGGED = frozenset({"struct_specifier", "class_specifier", "union_specifier", "enum_specifier"})


def _inside(d: Node) -> Node | None:
    """The declarator `d` wraps: its `declarator` field, or a C++ reference's only child, which has
    no field name (`const T& get() const` was named after its return type, `T`)."""
    inner: Node | None = d.child_by_field_name("declarator")
    if inner is None and d.type == "reference_declarator":
        inner = next(iter(d.named_children), None)
    return inner


def typedef_name(n: Node) -> Node | None:
    """`typedef struct { ... } Point;`: an anonymous type is called by its typedef's name."""
    parent = n.parent
    if parent is None or parent.type != "type_definition" or parent.child_by_field_name("type") != n:
        return None
    return parent.child_by_field_name("declarator")


def alias_name(n: Node) -> Node | None:
    """The name a typedef gives a type it does not declare there: a type declared elsewhere
    (libuv's `typedef struct uv_loop_s uv_loop_t;`, the names its whole API uses), a function
    pointer (`typedef void (*uv_close_cb)(uv_handle_t*);`), a builtin (`typedef int uv_file;`); and
    C++'s `using Callback = std::function<void()>;`. None where the typedef declares its type's
    body (`typedef struct {...} Point;`: that type is the symbol, by `typedef_name`). A class's own
    aliases (`using char_type = ...;`) stay in its code: as symbols, spdlog's `custom_flags` came
    first for "pattern formatter flags like %v and %l", above the formatter."""
    if n.type == "alias_declaration":
        return n.child_by_field_name("name")
    ty = n.child_by_field_name("type")
    if n.type != "type_definition" or (
        ty is not None and ty.type in C_TAGGED and ty.child_by_field_name("body")
    ):
        return None
    return _declared(n.child_by_field_name("declarator"), parens=True)  # a function pointer's `(*cb)`


def declarator_names(src: bytes, n: Node) -> str:
    """The first declared name: `int a, b;` is anchored as `a` (the header shows both)."""
    stack = [n]
    while stack:
        cur = stack.pop()
        if cur.type == "variable_declarator":
            nm = cur.child_by_field_name("name")
            if nm is not None:
                return text_of(src, nm)
            continue
        stack.extend(reversed(cur.named_children))
    return ""


def macro_case(src: bytes, n: Node) -> tuple[str, ...] | None:
    """A C or C++ test case a macro defines (GoogleTest's `TEST(Suite, Name) {`, `TEST_F`,
    `TEST_P`, Boost's `BOOST_AUTO_TEST_CASE(name) {`): its arguments, suite first. Parsed as a
    function named by the macro, a file's cases were `TEST`, `TEST#2`, ... `TEST#74`: anchors
    no one asks for, and renumbered by every case added above."""
    if n.type != "function_definition" or n.child_by_field_name("type"):
        return None
    d = n.child_by_field_name("declarator")
    macro = d.child_by_field_name("declarator") if d is not None and d.type == "function_declarator" else None
    params = d.child_by_field_name("parameters") if macro is not None and d is not None else None
    if macro is None or params is None or not CAPITALS.fullmatch(text_of(src, macro)):
        return None
    args = [p.child_by_field_name("type") for p in params.named_children]
    if not args or len(args) > 2 or any(p.type != "parameter_declaration" or len(p.named_children) != 1
                                         for p in params.named_children):  # fmt: skip
        return None
    return tuple(text_of(src, a) for a in args if a is not None and a.type == "type_identifier")


def prototype(src: bytes, n: Node) -> str:
    """The function a C or C++ declaration declares without defining it (a header's `int
    uv_run(uv_loop_t*, uv_run_mode);`, Lua's `LUA_API int (lua_gettop) (lua_State *L);`, a
    class's `void Append(const T& t);`): its name; "" for anything else (a variable, a function
    pointer `void (*cb)(int)`, a prototype inside a body, a macro's call read as one:
    googletest's `MOCK_METHOD(...);`, leveldb's `int n_ GUARDED_BY(mu_);`)."""
    parent = n.parent
    if parent is not None and parent.type == "compound_statement":
        return ""
    d = n.child_by_field_name("declarator")
    while d is not None and d.type in ("pointer_declarator", "reference_declarator"):
        d = _inside(d)
    if d is None or d.type != "function_declarator":
        return ""
    inner = d.child_by_field_name("declarator")
    if inner is not None and inner.type == "parenthesized_declarator" and inner.named_child_count == 1:
        inner = inner.named_children[0]  # `(lua_gettop)`: a name kept from macro expansion
    if inner is None or inner.type not in _FUNCTION_NAMES:
        return ""
    name = text_of(src, inner)
    return "" if CAPITALS.fullmatch(name) else name


def declarator_name(n: Node) -> Node | None:
    """The name a C or C++ declarator declares, through pointers, references (`_inside`),
    arrays and parentheses."""
    return _declared(n.child_by_field_name("declarator"))


def _declared(d: Node | None, parens: bool = False) -> Node | None:
    """The name at the end of the declarator `d`, at most 16 levels down; with `parens`, also
    through a parenthesized declarator's one child (`typedef void (*cb)(int);`)."""
    for _ in range(16):
        if d is None or d.type in _DECLARED_NAMES:
            return d
        inner = _inside(d) or d.child_by_field_name("name")
        if inner is None and parens and d.type == "parenthesized_declarator" and d.named_children:
            inner = d.named_children[0]
        d = inner
    return None
