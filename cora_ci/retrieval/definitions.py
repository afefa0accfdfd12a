"""Which candidate a name's definition bonus goes to: one principal per definition family (a
split definition's parts, overloads, a type and the blocks extending it, a class and its
constructor), and a file's header kept behind the file's definition. Ranking's features
(`scoring.score_features`) apply the bonus; this decides its share."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Protocol, TypeVar

from cora_ci.chunking.model import OVERLOAD
from cora_ci.files.langs import C_LANGS
from cora_ci.rebind.view import commented, declaring
from cora_ci.retrieval.catalog import Catalog, Meta
from cora_ci.retrieval.nesting import lend
from cora_ci.retrieval.query import split_qualified, untemplated
from cora_ci.retrieval.select import C

EXTENSIONS = ("impl:", "extension:")  # hierarchy entries (`label:name`) of blocks that extend a type
HEADER = 0.1  # a file's header where the file's definition of the name asked for is found
DECLARED = 0.5  # of the bonus, a C or C++ function declared without its body (`prototype`)
MEMBER = 0.9  # of the bonus, a member named as a top-level definition is (`top_level`)
K = TypeVar("K")


class Candidate(Protocol):
    """What these read and write of a ranking candidate (`scoring.Cand`)."""

    meta: Meta
    score: float
    explain: dict[str, Any]


def family(m: Meta, constructors: bool = False, name: str | None = None) -> str:
    """What a definition's parts and overloads share: its anchor without an overload suffix; of a
    chunk of several members merged, the anchor of the one `name` names (the first's without a
    name, or if none is so named: argparse's `Argument::required`, merged after an overload of
    `default_value`, ranked as a member of that family and behind its principal). With
    `constructors` (a bare name asked for), a constructor named as its type (Java's, C#'s, C++'s
    `MethodSpec.MethodSpec`) is of the type's family: short, it outscored the class on BM25 and
    took the definition of `MethodSpec`."""
    a = _named(m, name) if name is not None and len(m.anchors) > 1 else (m.anchor or "")
    if "::" not in a:
        return a
    a = OVERLOAD.sub("", a)
    owner, _, name = a.rpartition(".")
    if constructors and m.kind == "method" and owner and owner.rpartition("::")[2].rpartition(".")[2] == name:
        return owner
    return a


def _named(m: Meta, name: str) -> str:
    """The anchor among `m`'s whose own name is `name` (exact case first), else its first. By the
    catalog's parts of each anchor (`Meta.names`: every anchor of merged members has them)."""
    lasts = [parts[-1] if parts else "" for parts in m.names]
    i = next((i for i, last in enumerate(lasts) if last == name), None)
    if i is None:
        i = next((i for i, last in enumerate(lasts) if last.lower() == name.lower()), 0)
    return m.anchors[i]


def principal(cat: Catalog, cands: Mapping[K, Candidate], constructors: bool = False) -> dict[str, K]:
    """Per definition family, the candidate that gets the full definition bonus: a split one's
    first part; of a type and its extensions (Rust's `impl S` blocks, Swift's `extension S`), the type;
    of overloads (`f(int)`, `f(str)` and the `f(x)` that implements them), the longest (the
    implementation, not a bare signature), the first in the file of equals. Keys are chunk ids,
    or bundle and chunk id (`many.py`)."""
    best: dict[str, K] = {}
    for key, c in cands.items():
        if c.meta.anchor is None:
            continue
        names = c.meta.symbols if len(c.meta.anchors) > 1 else (None,)  # merged: each member's family
        for fam in dict.fromkeys(family(c.meta, constructors, n) for n in names):
            have = best.get(fam)
            if have is None or _better(cat, c.meta, cands[have].meta):
                best[fam] = key
    return best


def top_level(cands: Mapping[K, Candidate], name: str, code: Callable[[Meta], bool]) -> bool:
    """Whether `code` (not a test, not a legacy copy) defines the bare `name` at the top level, a
    whole qualified name: a member of that name is then behind it (`MEMBER`). serde_json's
    `from_str` answered `Deserializer::from_str` before the crate's `from_str`, the two equal on
    BM25; a bare name is all of the top-level one's name, a part of the member's."""
    return any((name,) in c.meta.names and code(c.meta) for c in cands.values())


def leading(cat: Catalog, metas: Sequence[Meta]) -> Meta:
    """Of chunks defining one name, the principal of the first one's family (`principal`'s
    choice: of overloads the implementation, of a split definition its first part)."""
    first = min(metas, key=lambda m: m.start_line)
    best = first
    for m in metas:
        if family(m) == family(first) and _better(cat, m, best):
            best = m
    return best


def _better(cat: Catalog, m: Meta, h: Meta) -> bool:
    """`m` is its family's principal rather than `h`."""
    if m.anchor == h.anchor:  # parts of one split definition: the first
        return m.start_line < h.start_line
    if m.kind == h.kind == "type" and extends(cat, m) != (h_extends := extends(cat, h)):
        return h_extends  # the declaration over the block extending it
    # overloads: one not deprecated, then the most code (not doc: commons-lang's deprecated
    # `notNull(T)`, a long javadoc over one line that calls the implementation, was the principal)
    return (*_weight(cat, m), -m.start_line) > (*_weight(cat, h), -h.start_line)


_DEPRECATED = re.compile(r"@Deprecated\b|#\[deprecated\b|\[Obsolete\b|@deprecated\b")


def _weight(cat: Catalog, m: Meta) -> tuple[bool, bool, int, bool]:
    """Not deprecated (Java's and Kotlin's `@Deprecated`, Rust's `#[deprecated]`, C#'s `[Obsolete]`,
    a javadoc's `@deprecated`), not a stub, then the lines that hold code: not blank, not a
    comment's; of as many, the documented one (fmt's `format(format_string, args...)`, whose
    comment says what it does, over the `format(locale_ref, ...)` above it)."""
    text = cat.table.text(m.row)
    lines = [line for line in text.split("\n") if line.strip()]
    code = sum(1 for line in lines if not commented(line, m.lang))
    return _DEPRECATED.search(text) is None, not _stub(m.lang, text), code, code < len(lines)


# A Python `@overload` (`typing.overload`, `t.overload`) only types a call: its implementation is the
# family's one undecorated member, however short (a forwarding `return _field(...)` under forty
# parameters as long as each stub's).
_OVERLOAD_STUB = re.compile(r"^[ \t]*@(?:\w+\.)*overload\b", re.MULTILINE)
_PY_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]", re.MULTILINE)


def _stub(lang: str, text: str) -> bool:
    """A member that only declares a signature: Python's `@overload` (every `def` of the chunk one:
    stubs merged with their implementation are not), a TypeScript signature without a body (its
    text does not end with one's `}`)."""
    if lang == "python":
        return len(_OVERLOAD_STUB.findall(text)) >= len(_PY_DEF.findall(text)) > 0
    return lang in ("typescript", "tsx") and not text.rstrip().endswith("}")


def lift_implementations(cat: Catalog, cands: dict[int, C], below: float, add: Callable[[Meta], C | None],
                         key: Callable[[int], int] = int) -> None:  # fmt: skip
    """For a sentence, a stub is how the code it declares is called: an overload's bare signature
    (its family's implementation in its file) or a C or C++ prototype (the function's definition,
    among the candidates or in a file of the header's name: `cJSON.h` -> `cJSON.c`). That code
    takes the stub's score when that is higher (`add` makes a candidate of it, None when filters
    leave it out), and the stub follows (`below`). Short and made of types, a stub matched a
    question's words better than the code that answers it (rxjs' `Observable.pipe`: an overload
    of nine `OperatorFunction` parameters first, the implementation not in the ten; cJSON's
    "minify json text in place" answered by the header's `cJSON_Minify;` and its comment).
    Named by the query (a definition bonus), a member is left to its family's order (`principal`)."""
    named: dict[str, list[C]] | None = None  # C and C++ functions among the candidates, by name
    implemented: dict[tuple[str, str], Meta | None] = {}  # (path, family) -> its implementation
    for i, c in enumerate(sorted(cands.values(), key=lambda c: -c.score)):
        m = c.meta
        if c.explain.get("definition"):
            continue
        if m.lang in C_LANGS:
            if len(m.anchors) != 1 or not m.path.endswith(_HEADERS) or not _declared_only(cat, m):
                continue
            if named is None:
                named = {}
                for o in cands.values():
                    if o.meta.lang in C_LANGS and o.meta.kind == "method" and len(o.meta.anchors) == 1:
                        named.setdefault(_c_name(o.meta), []).append(o)
            code = _definition(cat, named.get(_c_name(m), []), m)
        elif _overload(m) and _stub(m.lang, cat.table.text(m.row)):
            code = _implementation(cat, m, implemented)
        elif i < _FORWARD_SEEN and _forwards(cat, m):
            code = _forwarded(cat, m)
        else:
            continue
        if code is not None:
            lend(cands, c, code, below, add, key, "stub")


_FORWARD_LINES = 3  # code lines of a forwarder at most: its signature, the call, a closing brace
# Candidates looked at for forwarders, best first: below them a lent score reaches no answer, and
# each look reads a text (its file's whole blob, the first time): all of a sentence's short
# functions took the in-process p50 at 50k chunks 5.5 -> 6.5 ms.
_FORWARD_SEEN = 10
_FORWARD_FILES = 50  # files that may define a forwarded name, read for it


def _forwards(cat: Catalog, m: Meta) -> bool:
    """A top-level function whose code is one call of its own name on something else: viper's
    package-level `func WatchConfig() { v.WatchConfig() }` over its default instance, Python's
    `def info(msg): root.info(msg)`. Only a short chunk's text is read."""
    if m.kind != "method" or len(m.names) != 1 or len(m.names[0]) != 1 or m.end_line - m.start_line > 8:
        return False
    name = m.names[0][0]
    code = [ln for ln in cat.table.text(m.row).split("\n") if ln.strip() and not commented(ln, m.lang)]
    return len(code) <= _FORWARD_LINES and re.search(rf"\.{re.escape(name)}\(", "\n".join(code)) is not None


def _forwarded(cat: Catalog, m: Meta) -> Meta | None:
    """The method of the same name a forwarder calls: a type's, in its file or its directory (a
    Go package's: logrus' `Info` in exported.go calls `(*Logger).Info` in logger.go), the first
    part of a split one. The call's receiver has no type the graph knows (`v`, `std`)."""
    name = m.names[0][0]
    here = m.path.rpartition("/")[0]
    near = cat.defining([name], _FORWARD_FILES, lambda path: path.rpartition("/")[0] == here)
    found = [
        o for defs in near.values() for cid in defs[name]
        if (o := cat.meta(cid)) is not None and o.id != m.id and o.kind == "method"
        and any(len(n) > 1 and n[-1] == name for n in o.names)
    ]  # fmt: skip
    return min(found, key=lambda o: (o.path != m.path, o.path, o.start_line)) if found else None


def _declared_only(cat: Catalog, m: Meta) -> bool:
    """A C or C++ function declared, not defined, by the chunk (`prototype`)."""
    name = split_qualified(untemplated(m.symbols[0]))[-1] if m.symbols else ""
    return m.kind == "method" and bool(name) and prototype(m, name, partial(cat.table.text, m.row))


def _c_name(m: Meta) -> str:
    """A C or C++ function's qualified name as its anchors write it in a header and out of line
    (`leveldb.SkipList.Insert`, `leveldb.SkipList<Key>::Insert`: `leveldb.SkipList.Insert`)."""
    return ".".join(split_qualified(untemplated(OVERLOAD.sub("", m.anchors[0].split("::", 1)[-1]))))


_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".h++")  # where a prototype's definition is elsewhere


def _definition(cat: Catalog, named: list[C], m: Meta) -> Meta | None:
    """The definition of the function prototype `m` declares: the best of the candidates of its
    name (`named`) that is no prototype, else the first in a file named as its header (`cJSON.c`
    for `cJSON.h`)."""
    name = _c_name(m)
    found = [c for c in named if _defines(cat, c.meta, m, name)]
    if found:
        return max(found, key=lambda c: c.score).meta
    for path in cat.same_stem(m.path):
        for row in cat.file_rows(path):
            o = cat.row_meta(row)
            if _defines(cat, o, m, name):
                return o
    return None


def _defines(cat: Catalog, o: Meta, m: Meta, name: str) -> bool:
    return (
        o.id != m.id and o.lang in C_LANGS and o.kind == "method" and len(o.anchors) == 1
        and _c_name(o) == name and not _declared_only(cat, o)
    )  # fmt: skip


def _overload(m: Meta) -> bool:
    """Members of one overload family: each anchor carries its parameters (a name its scope
    repeats), and a chunk of several merged holds that family's alone (click's two bare
    `get_current_context` signatures, small siblings in one chunk, above the implementation)."""
    if not m.anchors or not all("::" in a and "(" in a.split("::", 1)[1] for a in m.anchors):
        return False
    return len(m.anchors) == 1 or len({OVERLOAD.sub("", a) for a in m.anchors}) == 1


def _implementation(cat: Catalog, m: Meta, found: dict[tuple[str, str], Meta | None]) -> Meta | None:
    """The member of `m`'s family that is no stub (of several, the principal's rule), if any. The
    family's members are `m`'s neighbours in its file (TypeScript's and Python's overloads come
    together, module code and a split class's pieces aside), read outwards from it (a file of
    zod's holds thousands of chunks); `found` keeps each family's for the query's other stubs."""
    fam = family(m)
    if (m.path, fam) not in found:
        rows, best = cat.file_rows(m.path), None
        for step in (1, -1):
            row = m.row + step
            while row in rows:
                o = cat.row_meta(row)
                if o.kind == m.kind:  # module code (a comment) or a class's piece between them: skipped
                    if not _overload(o) or family(o) != fam:
                        break
                    if not _stub(o.lang, cat.table.text(o.row)) and (best is None or _better(cat, o, best)):
                        best = o
                row += step
        found[m.path, fam] = best
    return found[m.path, fam]


def extends(cat: Catalog, m: Meta) -> bool:
    """The chunk adds to a type declared elsewhere (a Rust `impl`, a Swift `extension`) rather than
    declaring it: its own hierarchy entry says so (read only for a type that matches a name asked
    for, or rivals another member of its family: a few chunks a query)."""
    hierarchy = cat.table.chunk(m.row).hierarchy
    return bool(hierarchy) and hierarchy[-1].startswith(EXTENSIONS)


def prototype(m: Meta, name: str, text: Callable[[], str]) -> bool:
    """The chunk declares C or C++ function `name` without defining it (a header's `int
    uv_run(uv_loop_t*, uv_run_mode);`, a class's `void Append(const T& t);`): what a name asks
    for is its definition, elsewhere. Read from the line declaring it (of a few merged siblings,
    the one matched), to the `;` that ends it before any `{`; only a C-family chunk's text is read."""
    if m.lang not in C_LANGS or m.kind != "method":
        return False
    lines = text().split("\n")
    at = declaring(lines, name, m.lang)
    if at is None:
        return False
    for line in lines[at : at + 12]:
        code = _code_of(line)
        if "{" in code:
            return False
        if code.endswith(";"):
            return True
    return False


def _code_of(line: str) -> str:
    """A C-family `line` without its trailing comment: from its first `//`, or from its first `/*`
    when a `*/` ends the line, whichever comes first. In one pass: the regular expression this
    replaces (the same cut) read on from every space, 0.56 s a line of 20,000 spaces, for every
    candidate a query asked about (as `rebind.view._code_end` had found before)."""
    cut = line.find("//")
    s = line.rstrip()
    opens = s.find("/*")
    if opens >= 0 and s.endswith("*/") and len(s) >= opens + 4 and (cut < 0 or opens < cut):
        cut = opens
    return (line[:cut] if cut >= 0 else line).rstrip()


def _heading(m: Meta) -> bool:
    """A file's header, or its top-level code that defines nothing (PHP's `<?php namespace X;`
    above its `use` lines, which came third for guzzle's `RetryMiddleware`, by its file's name)."""
    return m.kind == "file" or (m.kind == "module" and not m.anchors)


def headers_behind_definitions(cands: Mapping[K, Candidate]) -> set[K]:
    """A file's header chunk (package, namespace, imports) named after its file matches a name
    asked for as the file's definition of it does (`IMediator.cs`'s `namespace MediatR;` came
    second to `interface IMediator`): where that definition is found, the header adds nothing
    and ranks behind the file's other chunks. Where no other chunk of its file defines it, the
    header's is the file's definition (a module re-exporting a dependency's name). The keys of the
    headers lowered, which take no share of their file's score (`scoring._file_share`); a class
    that lowered one already (a test's header) keeps its name in `explain`."""
    defined = {c.meta.path for c in cands.values() if c.explain["definition"] and c.meta.kind != "file"}
    lowered = set()
    for key, c in cands.items():
        if _heading(c.meta) and c.meta.path in defined:
            c.score *= HEADER
            c.explain["demoted"] = c.explain["demoted"] or "header"
            lowered.add(key)
    return lowered
