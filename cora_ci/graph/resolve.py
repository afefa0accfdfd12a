"""Import specifiers to repository files, per language; a pure function of the set of paths.

Only code inside the repository matters: a specifier that names no repository file (the standard
library, a third-party package) resolves to nothing. Where a language lets a file see others
without an import (Go and Java: the same directory is the same package; C#: the same namespace
and its parents), those files count as imported too.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from functools import cached_property

from cora_ci.chunking.model import Chunk
from cora_ci.files.langs import JS_LANGS

_JS_EXT = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")


class Repo:
    """What resolution needs to know about all files: their paths, languages and namespaces."""

    def __init__(self, langs: Mapping[str, str], namespaces: Mapping[str, list[str]]) -> None:
        self.langs = dict(langs)
        self.paths = frozenset(langs)
        self._namespaces = namespaces  # C# files -> the namespaces they declare

    def py_modules(self, spec: str) -> list[str]:
        """The Python files whose module name ends with `spec` at a dot: `src/a/b.py` is b, a.b
        and src.a.b. Looked up among the files of its last name (an update resolves a few imports,
        so no map of every suffix of every module: ~0.05 s at 30,000 files)."""
        parts = spec.split(".")
        return [p for p, name in self._py_names.get(parts[-1], []) if name[-len(parts) :] == parts]

    @cached_property
    def _py_names(self) -> dict[str, list[tuple[str, list[str]]]]:
        """A module's last name -> (file, its module name's parts), files in path order."""
        out: dict[str, list[tuple[str, list[str]]]] = {}
        for p in sorted(self.langs):  # in the table's order, all but sorted: ~0.5 ms, not ~7 at 30k files
            if self.langs[p] != "python" or not p.endswith((".py", ".pyi")):
                continue
            parts = p.rsplit(".", 1)[0].split("/")
            if parts[-1] == "__init__":
                parts.pop()
            if parts:
                out.setdefault(parts[-1], []).append((p, parts))
        return out

    @cached_property
    def dirs(self) -> dict[tuple[str, str], list[str]]:
        """(language, directory) -> its files."""
        out: dict[tuple[str, str], list[str]] = {}
        for p in sorted(self.langs):
            out.setdefault((self.langs[p], posixpath.dirname(p)), []).append(p)
        return out

    @cached_property
    def java_suffixes(self) -> dict[str, list[str]]:
        """Path suffixes of Java files (`a/B.java`) and of their directories (`a/*`) -> files."""
        out: dict[str, list[str]] = {}
        for p in sorted(self.langs):
            if self.langs[p] == "java":
                parts = p.split("/")
                for k in range(len(parts)):
                    out.setdefault("/".join(parts[k:]), []).append(p)
                    if k < len(parts) - 1:
                        out.setdefault("/".join(parts[k:-1]) + "/*", []).append(p)
        return out

    @cached_property
    def cs_namespaces(self) -> dict[str, list[str]]:
        """C# namespace -> files declaring it (from the chunks' `namespace:` hierarchy entries)."""
        out: dict[str, set[str]] = {}
        for p, names in self._namespaces.items():
            if self.langs.get(p) == "csharp":
                for ns in names:
                    out.setdefault(ns, set()).add(p)
        return {k: sorted(v) for k, v in out.items()}

    def namespaces_of(self, path: str) -> list[str]:
        return list(self._namespaces.get(path, []))

    def imported_files(self, path: str, specifiers: list[str]) -> list[str]:
        """Repository files that `path` imports or sees implicitly, sorted, without itself."""
        lang = self.langs.get(path, "")
        found: set[str] = set()
        for spec in specifiers:
            found.update(self.resolve(path, lang, spec))
        found.update(self._implicit(path, lang))
        found.discard(path)
        return sorted(found)

    def resolve(self, path: str, lang: str, spec: str) -> list[str]:
        if lang == "python":
            return self._python(path, spec)
        if lang in JS_LANGS:
            return self._js(path, spec)
        if lang == "go":
            return self._go(spec)
        if lang == "rust":
            return self._rust(path, spec)
        if lang == "java":
            return self._java(spec)
        if lang == "csharp":
            return self._csharp(spec)
        return []

    def _implicit(self, path: str, lang: str) -> list[str]:
        if lang in ("go", "java"):
            return self.dirs.get((lang, posixpath.dirname(path)), [])
        if lang == "csharp":
            out: list[str] = []
            for ns in self.namespaces_of(path):
                parts = ns.split(".")
                for k in range(1, len(parts) + 1):
                    out.extend(self.cs_namespaces.get(".".join(parts[:k]), []))
            return out
        return []

    def _python(self, path: str, spec: str) -> list[str]:
        if spec.startswith("."):
            dots = len(spec) - len(spec.lstrip("."))
            base = posixpath.dirname(path)
            for _ in range(dots - 1):
                base = posixpath.dirname(base)
            rest = spec[dots:].replace(".", "/")
            stem = posixpath.join(base, rest) if rest else base
            cands = [f"{stem}.py", f"{stem}.pyi", f"{stem}/__init__.py"] if rest else [f"{stem}/__init__.py"]
            return [c.lstrip("/") for c in cands if c.lstrip("/") in self.paths][:1]
        matches = self.py_modules(spec)
        if len(matches) <= 1:
            return matches
        # several files end in this module path: the ones nearest to the importing file
        near = max(_common_dirs(path, m) for m in matches)
        return [m for m in matches if _common_dirs(path, m) == near]

    def _js(self, path: str, spec: str) -> list[str]:
        if not spec.startswith((".", "/")):
            return []  # a package or a path alias: outside the repository or unknowable here
        stem = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec)).lstrip("/")
        cands = [stem, *(stem + e for e in _JS_EXT), *(f"{stem}/index{e}" for e in _JS_EXT)]
        root, ext = posixpath.splitext(stem)
        if ext in (".js", ".jsx", ".mjs", ".cjs"):  # TypeScript's ESM style: './x.js' means x.ts
            cands += [root + e for e in (".ts", ".tsx", ".mts", ".cts")]
        for c in cands:
            if c in self.paths:
                return [c]
        return []

    def _go(self, spec: str) -> list[str]:
        """An import path matches the package directory that is its longest suffix."""
        parts = spec.strip("/").split("/")
        for k in range(len(parts)):
            files = self.dirs.get(("go", "/".join(parts[k:])))
            if files:
                return files
        return []

    def _rust(self, path: str, spec: str) -> list[str]:
        segs = spec.split("::")
        mod_dir = _rust_module_dir(path)
        if segs[0] == "crate":
            bases, segs = [self._crate_root(path)], segs[1:]
        elif segs[0] in ("self", "super"):
            base = mod_dir
            while segs and segs[0] in ("self", "super"):
                base = posixpath.dirname(base) if segs[0] == "super" else base
                segs = segs[1:]
            bases = [base]
        else:  # a child module of this one or of the crate root (or an external crate: no match)
            bases = [mod_dir, self._crate_root(path)]
        for base in bases:
            for k in range(len(segs), 0, -1):
                stem = posixpath.join(base, *segs[:k])
                for c in (f"{stem}.rs", f"{stem}/mod.rs"):
                    if c in self.paths:
                        return [c]
        return []

    def _crate_root(self, path: str) -> str:
        d = posixpath.dirname(path)
        while True:
            if any(posixpath.join(d, f) in self.paths for f in ("lib.rs", "main.rs")):
                return d
            if not d:
                return posixpath.dirname(path)
            d = posixpath.dirname(d)

    def _java(self, spec: str) -> list[str]:
        if spec.endswith(".*"):
            return self.java_suffixes.get(spec[:-2].replace(".", "/") + "/*", [])
        parts = spec.split(".")
        for k in (len(parts), len(parts) - 1):  # a class, or a static member of one
            found = self.java_suffixes.get("/".join(parts[:k]) + ".java")
            if found:
                return found
        return []

    def _csharp(self, spec: str) -> list[str]:
        parts = spec.split(".")
        for k in (len(parts), len(parts) - 1):  # a namespace, or a type in one (`using static`)
            files = self.cs_namespaces.get(".".join(parts[:k]))
            if files:
                return files
        return []


def _common_dirs(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/")[:-1], b.split("/")[:-1], strict=False):
        if x != y:
            break
        n += 1
    return n


def _rust_module_dir(path: str) -> str:
    """Where a Rust file's child modules live: its directory for lib/main/mod.rs, else dir/stem."""
    d, name = posixpath.split(path)
    if name in ("lib.rs", "main.rs", "mod.rs"):
        return d
    return posixpath.join(d, name.rsplit(".", 1)[0])


def namespaces(chunks: list[Chunk]) -> list[str]:
    """C# namespaces a file declares, from its chunks' `namespace:` hierarchy entries."""
    out: set[str] = set()
    for c in chunks:
        parts = [h.split(":", 1)[1] for h in c.hierarchy if h.startswith("namespace:")]
        if parts:
            out.add(".".join(parts))
    return sorted(out)
