"""Where a name that the bundle does not define comes from: the module that re-exports it.

A crate, package or module often makes another's name its own (`pub use axum_core::extract::
FromRequest;`, `from starlette.requests import Request as Request`, `export { Foo } from
"./foo"`). When a name asked for is defined nowhere in the bundle (a dependency's), that
re-export is the nearest thing to its definition: it says where the name lives and under which
path the code uses it. Only statements that publish the name count: a plain import makes it
usable in one file, not part of the module's interface (except in a Python package's
`__init__.py`, where importing is how a package publishes).
"""

from __future__ import annotations

import re
from functools import lru_cache

from cora_ci.files.langs import JS_LANGS
from cora_ci.retrieval.catalog import Catalog, Meta
from cora_ci.retrieval.features import file_stem

_FILES = 24  # files whose module code is read, at most
_HOLDING = 50  # chunks holding the name taken from BM25 (a Python import is no reference)
_MODULE = ("file", "module")  # the kinds of chunk that hold a file's module-level statements
_PACKAGES = frozenset({"__init__", "index", "mod", "lib", "prelude"})  # files named for their package

# A statement that publishes names, per language family: Rust's `pub use` (any visibility), up to
# its `;`; JavaScript's and TypeScript's `export { ... }` and `export * as X`; Python's imports
# (which of them publish is decided below) and `__all__`.
_RUST = re.compile(r"\bpub(?:\s*\([^)]*\))?\s+use\s+([^;]*);")
_JS = re.compile(r"\bexport\s+(?:type\s+)?\{([^}]*)\}|\bexport\s*\*\s*as\s+([\w$]+)")
_PY_IMPORT = re.compile(r"^[ \t]*from\s+[\w.]+\s+import\s+(\([^)]*\)|[^\n]*)", re.MULTILINE)
_PY_ALL = re.compile(r"^__all__\s*(?:\+?=|:[^=\n]*=)\s*[\[(]([^\])]*)[\])]", re.MULTILINE)


def publishing(cat: Catalog, name: str) -> list[Meta]:
    """The module-level chunks that publish `name`, when no file of the bundle defines it (by
    the name filter of each file's definitions: one look-up when some file does). Read are the
    module code of the files BM25 finds holding the name there, then of the files whose code uses
    it (their name filter), package files (`mod.rs`, `__init__.py`, `index.ts`) first: at most
    `_FILES`, a name used everywhere and published nowhere costs a few milliseconds."""
    if not name or cat.definers.paths_with([name]):
        return []
    paths: dict[str, None] = {}
    for cid in cat.bundle.lexical.holding(name.lower(), _HOLDING):
        m = cat.meta(cid)
        if m is not None and m.kind in _MODULE:
            paths[m.path] = None
    for path in sorted(cat.users.paths_with([name]), key=lambda p: (file_stem(p) not in _PACKAGES, p)):
        paths[path] = None
    out: list[Meta] = []
    for path in list(paths)[:_FILES]:
        for row in cat.file_rows(path):
            m = cat.row_meta(row)
            if m.kind in _MODULE and reexports(name, m.lang, m.path, cat.table.text(row)):
                out.append(m)
    return out


def reexports(name: str, lang: str, path: str, text: str) -> bool:
    """Whether the module code `text` (of file `path`, in `lang`) publishes `name`."""
    if name not in text:
        return False
    if lang == "rust":
        return any(_listed(name, m.group(1)) for m in _RUST.finditer(text))
    if lang in JS_LANGS:
        return any(_listed(name, m.group(1)) if m.group(1) is not None else m.group(2) == name
                   for m in _JS.finditer(text))  # fmt: skip
    if lang == "python":
        if any(_patterns(name)[2].search(m.group(1)) for m in _PY_ALL.finditer(text)):
            return True
        package = path.rsplit("/", 1)[-1] == "__init__.py"  # importing is how a package publishes
        same = _patterns(name)[3]  # elsewhere only `import X as X` does (PEP 484)
        return any(_listed(name, m.group(1)) if package else bool(same.search(m.group(1)))
                   for m in _PY_IMPORT.finditer(text))  # fmt: skip
    return False


def _listed(name: str, names: str) -> bool:
    """`name` is what a list of imported or used names (`A, B as C`, a Rust use tree) binds: the
    name itself, not renamed, or another renamed `name`."""
    as_name, itself, _, _ = _patterns(name)
    return bool(as_name.search(names) or itself.search(names))


@lru_cache(maxsize=256)
def _patterns(name: str) -> tuple[re.Pattern[str], ...]:
    """For `name`: renamed to it (`as name`); itself, as a list's item or a path's last segment,
    not renamed and not a path's inner part; quoted (in `__all__`); imported as itself."""
    n = re.escape(name)
    return (
        re.compile(rf"\bas\s+{n}(?![\w$])"),
        re.compile(rf"(?:^|[\s{{,(]|::){n}(?![\w$])(?!\s*::)(?!\s+as\b)"),
        re.compile(rf"""['"]{n}['"]"""),
        re.compile(rf"(?<![\w.]){n}\s+as\s+{n}(?!\w)"),
    )
