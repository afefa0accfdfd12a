"""Query-aware ranking features: definitions, name matches, path classes, filters.

Each feature is a pure function of the query and one chunk's `Meta`; the weights they get are
`Params` in `search`, measured on bench/quality.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from cora_ci.bundle.stems import WEIGHT, stem
from cora_ci.bundle.terms import terms
from cora_ci.errors import CoraError
from cora_ci.rebind.view import commented
from cora_ci.retrieval.catalog import Meta
from cora_ci.retrieval.query import Query, name_words
from cora_ci.retrieval.types import Filters

if TYPE_CHECKING:
    import pathspec

EXACT, FOLDED, NAME_ONLY = 3, 2, 1  # definition match levels


# a package's own file, named by its directory
_PACKAGE_FILES = frozenset({"__init__", "index", "mod", "lib"})


@lru_cache(maxsize=1 << 14)
def stem_parts(path: str) -> tuple[str, ...]:
    """`src/werkzeug/http.py` -> ("src", "werkzeug", "http"); a package's `__init__`/`index` dropped."""
    parts = path.split("/")
    parts[-1] = parts[-1].split(".", 1)[0]
    if parts[-1] in _PACKAGE_FILES and len(parts) > 1:
        parts.pop()
    return tuple(parts)


def module_parts(path: str, lang: str, root: str = "") -> tuple[str, ...]:
    """What a qualifier names of the file's code: its module path (`stem_parts`); of Go's, its
    directory, the package (`render.JSON` is render/json.go's `JSON`), at the root the package
    `root` (`Catalog.go_root`: `gin.Context`); of C++'s, its directory, where a library's
    namespace opened by a macro is read from (fmt's `FMT_BEGIN_NAMESPACE` in include/fmt/:
    `fmt::format`)."""
    if lang not in _PACKAGE_DIRS:
        return stem_parts(path)
    dirs = tuple(path.split("/")[:-1])
    return (root,) if not dirs and root and lang == "go" else dirs


_PACKAGE_DIRS = frozenset({"go", "cpp"})


def last_stem(path: str) -> str:
    """`stem_parts(path)[-1]` without the tuple or the cache: an index of every path of a bundle
    calls it once a path (~2.5x faster at 100,000 paths)."""
    head, _, name = path.rpartition("/")
    stem = name.split(".", 1)[0]
    return head.rpartition("/")[2] if stem in _PACKAGE_FILES and "/" in path else stem


def _ends_with(seq: tuple[str, ...], tail: tuple[str, ...], fold: bool) -> bool:
    if len(tail) > len(seq):
        return False
    got = seq[len(seq) - len(tail) :]
    return tuple(map(_folded, got)) == tuple(map(_folded, tail)) if fold else got == tail


def _folded(part: str) -> str:
    """A name part compared loosely: case and a trailing `?`, `!` or `=` aside (Ruby's `empty?` and
    `save!`, a Rust macro `vec!` invoked by a name its definition does not write)."""
    return part.lower().rstrip("?!=")


def _names(ident: tuple[str, ...], m: Meta, fold: bool, root: str = "") -> bool:
    """An anchor of `m` ends with `ident`, or is a tail of it whose head is the file's module path
    (`werkzeug.http.parse_cookie`): all of the anchor, not its end. `Session.request` in
    Alamofire's Session.swift was `Session.Upload.request` too, a nested type's property, before
    the class's own overloads of `request`; viper's `viper.Get` was the method `Viper.Get` as much
    as the package's function."""
    if by_its_own_name(ident, m, fold):
        return True
    return any(
        len(name) == len(ident) - cut
        and _ends_with(name, ident[cut:], fold)
        and _ends_with(module_parts(m.path, m.lang, root), ident[:cut], fold)
        for name in m.names
        for cut in range(1, len(ident))
    )


def by_its_own_name(ident: tuple[str, ...], m: Meta, fold: bool = False) -> bool:
    """An anchor's qualified name itself ends with all of `ident`'s parts (`Path.segments` in
    class `Path`), not with a tail of them under the file's module path (`segments` of another
    class in `Path.scala`)."""
    return any(_ends_with(name, ident, fold) for name in m.names)


def definition_level(ident: tuple[str, ...], m: Meta, text: Callable[[], str] | None = None,
                     root: str = "") -> int:  # fmt: skip
    """How well the chunk defines the identifier `ident` (parts of `a.B.c`): EXACT, FOLDED, NAME_ONLY, 0.

    EXACT: an anchor's qualified name ends with the parts, or is a tail of them and the rest is
    the file's module path (`werkzeug.http.parse_cookie`, `module_parts`); FOLDED: the same ignoring case,
    or a type small enough to be one chunk that defines the member (`Session.login` in the
    chunk of `Session`, checked in its `text`); NAME_ONLY: a qualified query whose last part is
    defined here under another qualifier.
    """
    if not m.names or m.kind in ("section", "key", "lines"):
        return 0
    # Every name that `_names` matches ends with `ident`'s last part: most chunks are out at once.
    last = _last_parts(m.names)
    named = not ident or ident[-1].lower() in last
    if named and _names(ident, m, False, root):
        return EXACT
    if (named or _folded(ident[-1]) in last) and _names(ident, m, True, root):
        return FOLDED
    if len(ident) > 1:
        if (text is not None and m.kind == "type" and not m.children and _names(ident[:-1], m, False)
                and re.search(rf"(?<![\w$]){re.escape(ident[-1])}(?![\w$])", text())):  # fmt: skip
            return FOLDED
        if named:
            return NAME_ONLY
    return 0


@lru_cache(maxsize=1 << 16)
def _last_parts(names: tuple[tuple[str, ...], ...]) -> frozenset[str]:
    """The last part of each name, lower-cased, and loosely (`_folded`)."""
    return frozenset(p for name in names if name for p in {name[-1].lower(), _folded(name[-1])})


def file_stem(path: str) -> str:
    """`src/werkzeug/http.py` -> `http`."""
    return path.rsplit("/", 1)[-1].split(".", 1)[0]


@lru_cache(maxsize=1 << 16)
def _name_terms(symbols: tuple[str, ...], path: str) -> frozenset[str]:
    return frozenset(terms(" ".join((*symbols, file_stem(path)))))


def name_match(q: Query, m: Meta) -> float:
    """Share of the query's words found in the chunk's symbol names or its file name. A name is
    short and often abbreviates or inflects what it names, so a sentence's word that a name holds
    only in another form counts as BM25 counts a word's other forms (`stems.WEIGHT`): `tasks.ts`
    for "task", `parser.py` for "parsed", `config.ts` for "configuration", `impls.rs` for
    "implementations"; `style` for "Styles a text ...", `str_to_bool` for "boolean", as a doc
    comment's verb inflects its function's name. Identifier queries match as written. A report's
    share is its title's: of a hundred words, any name holds next to none."""
    words = name_words(q)
    if not words:
        return 0.0
    names = _name_terms(m.symbols, m.path)
    exact = words & names
    if len(exact) == len(words) or q.identifier is not None:
        return len(exact) / len(words)
    return (len(exact) + WEIGHT * _other_forms(words - exact, names)) / len(words)


_SHORTEST = 4  # a stem or an abbreviation shorter than this stands for too much (`doc`, `str`)


@lru_cache(maxsize=1 << 14)
def _other_forms(words: frozenset[str], names: frozenset[str]) -> int:
    """How many of `words` a name term holds only in another form: it begins with the word's
    Snowball stem (`parsed` -> `pars`: `parser`), or it (or its stem: `impls` -> `impl`) is a
    beginning of `_SHORTEST` letters or more of the word (`config`, `init`, `bool` for
    "boolean"). Either way they share their first `_SHORTEST` letters, which rules out most
    pairs at once."""
    heads = {t[:_SHORTEST] for t in names if len(t) >= _SHORTEST}
    return sum(1 for w in words if w[:_SHORTEST] in heads and _other_form(w, names))


def _other_form(word: str, names: frozenset[str]) -> bool:
    root, plain = _stem_of(word), word.isalpha()
    for t in names:
        if root and t.startswith(root):
            return True
        if plain and any(_SHORTEST <= len(x) < len(word) and word.startswith(x) for x in (t, _stem_of(t))):
            return True
    return False


@lru_cache(maxsize=1 << 12)
def _stem_of(word: str) -> str:
    """A plain word's Snowball stem (`parsed` -> `pars`); "" for a short one or not a word."""
    root = stem(word) if word.isascii() and word.isalpha() else ""
    return root if len(root) >= _SHORTEST else ""


def _spec(globs: tuple[str, ...], what: str) -> pathspec.GitIgnoreSpec | None:  # type: ignore[type-arg,unused-ignore]
    if not globs:
        return None
    import pathspec  # ~15 ms of imports, only for a query that filters by path

    for g in globs:
        if not g.strip():
            raise CoraError("CORA-CFG-002", f"{what}: empty glob")
    try:
        return pathspec.GitIgnoreSpec.from_lines(list(globs))
    except Exception as e:  # pathspec raises several types for malformed patterns
        raise CoraError("CORA-CFG-002", f"{what}: bad glob in {list(globs)}: {e}") from None


def compile_filters(f: Filters) -> Callable[[Meta], bool]:
    """A predicate for `--lang`, `--kind`, `--path` and `--exclude` (gitignore-style globs)."""
    langs = {x.lower() for x in f.langs}
    kinds = {x.lower() for x in f.kinds}
    include = _spec(f.paths, "--path")
    exclude = _spec(f.excludes, "--exclude")

    def accept(m: Meta) -> bool:
        if langs and m.lang.lower() not in langs:
            return False
        if kinds and m.kind not in kinds:
            return False
        if include is not None and not include.match_file(m.path):
            return False
        return not (exclude is not None and exclude.match_file(m.path))

    return accept


def active(f: Filters) -> bool:
    return bool(f.langs or f.kinds or f.paths or f.excludes)


def private(m: Meta) -> bool:
    """Every symbol of the chunk is private by convention (`_helper`, not `__init__`), or reached
    only through a private name (`_Builder.build`, `_Check.__call__`): a question in words asks
    first for what the code offers, its helpers a little lower."""
    if m.names:
        return all(any(_underscored(part) for part in name) for name in m.names)
    return bool(m.symbols) and all(_underscored(s) for s in m.symbols)


def data(m: Meta, parent: Callable[[], str]) -> bool:
    """A chunk of variables, constants or fields: a file's own (`DEFAULT_TIMEOUT = 30`, Go's `var
    (...)`) or a class's state (requests' `max_redirects: int` beside `trust_env: bool`). A
    question in words asks what code does, and such a name matches its words as well as the
    function that uses the value (a bare `FORMAT_VERSION` came before `check_format` for "where is
    the format version checked", the three-line `max_redirects` block before `resolve_redirects`
    for "how are redirects followed"), so it comes a little lower unless the sentence names it.
    An interface's, trait's or protocol's members are not: they are its API (vitest's
    `Reporter.onTestCaseResult`). `parent` gives the enclosing chunk's text, read only for a
    member field in a language that has such declarations (a cold sentence decoded ~0.4 ms of
    texts a query at 50k chunks to ask it of Python's fields too)."""
    if m.kind != "field" or not m.names:
        return False
    if all(len(name) == 1 for name in m.names) or m.lang not in _API_LANGS:
        return True
    head = parent()[:_HEAD].split("{", 1)[0].splitlines()
    return not any(_API.search(line) for line in head if not commented(line, m.lang))


_HEAD = 600  # characters of the enclosing declaration that hold its keyword, past a doc comment
_API = re.compile(r"\b(?:interface|trait|protocol)\b")
# languages with interfaces, traits or protocols whose members a chunker may make fields
_API_LANGS = frozenset({"typescript", "tsx", "java", "kotlin", "swift", "csharp", "php", "rust", "scala",
                        "dart", "groovy", "solidity", "objc"})  # fmt: skip


def _underscored(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")
