"""Language detection from file name, extension, shebang and content.

Names are tree-sitter-language-pack grammar names where a grammar exists ("csharp", "tsx"), so
detection and parsing agree; "text" means no grammar and line-based chunking.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import PurePosixPath

MARKUP = frozenset({"markdown", "rst", "yaml", "json", "toml"})
JS_LANGS = frozenset({"javascript", "typescript", "tsx"})  # one family of grammars and of conventions

_EXT = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".cs": "csharp", ".java": "java", ".go": "go", ".rs": "rust",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".hxx": "cpp", ".cu": "cuda", ".m": "objc", ".mm": "objc",
    ".rb": "ruby", ".php": "php", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala", ".sc": "scala",
    ".swift": "swift", ".lua": "lua", ".dart": "dart", ".ex": "elixir", ".exs": "elixir",
    ".erl": "erlang", ".hrl": "erlang", ".hs": "haskell", ".ml": "ocaml", ".mli": "ocaml_interface",
    ".fs": "fsharp", ".fsx": "fsharp", ".clj": "clojure", ".cljs": "clojure", ".el": "elisp",
    ".jl": "julia", ".r": "r", ".R": "r", ".pl": "perl", ".pm": "perl", ".sh": "bash", ".bash": "bash",
    ".zsh": "bash", ".fish": "fish", ".ps1": "powershell", ".sql": "sql", ".zig": "zig", ".nim": "nim",
    ".v": "v", ".sol": "solidity", ".groovy": "groovy", ".gradle": "groovy", ".hcl": "hcl",
    ".tf": "terraform", ".nix": "nix", ".proto": "proto", ".graphql": "graphql", ".gql": "graphql",
    ".vue": "vue", ".svelte": "svelte", ".html": "html", ".htm": "html", ".css": "css", ".scss": "scss",
    ".xml": "xml", ".xsd": "xml", ".csproj": "xml", ".ini": "ini", ".cfg": "ini", ".cmake": "cmake",
    ".bzl": "starlark", ".star": "starlark", ".tex": "latex", ".rst": "rst", ".gleam": "gleam",
    ".md": "markdown", ".markdown": "markdown", ".mdx": "markdown",
    ".yaml": "yaml", ".yml": "yaml", ".json": "json", ".jsonc": "json", ".json5": "json",
    ".ipynb": "json", ".toml": "toml",
}  # fmt: skip

_NAMES = {
    "Dockerfile": "dockerfile", "Makefile": "make", "GNUmakefile": "make", "makefile": "make",
    "CMakeLists.txt": "cmake", "Gemfile": "ruby", "Rakefile": "ruby", "BUILD": "starlark",
    "BUILD.bazel": "starlark", "WORKSPACE": "starlark", "go.mod": "gomod", "Cargo.lock": "toml",
    "Pipfile": "toml", "poetry.lock": "toml",
}  # fmt: skip

_SHEBANG = (
    (re.compile(r"python"), "python"),
    (re.compile(r"\b(ts-node|tsx)\b"), "typescript"),
    (re.compile(r"\b(node|deno|bun)\b"), "javascript"),
    (re.compile(r"\b(bash|sh|zsh|ksh|dash)\b"), "bash"),
    (re.compile(r"\bruby\b"), "ruby"),
    (re.compile(r"\bperl\b"), "perl"),
    (re.compile(r"\bphp\b"), "php"),
    (re.compile(r"\blua\b"), "lua"),
    (re.compile(r"\bfish\b"), "fish"),
    (re.compile(r"\bRscript\b"), "r"),
)


@cache
def grammar_available(lang: str) -> bool:
    """Whether the pinned tree-sitter-language-pack bundles a grammar for `lang`."""
    from tree_sitter_language_pack import get_parser

    try:
        get_parser(lang)  # type: ignore[arg-type]
    except Exception:  # the pack raises LookupError/ValueError depending on version
        return False
    return True


def is_notebook(path: str) -> bool:
    """Whether `path` names a Jupyter notebook (its content says whether it is one)."""
    return path.endswith(".ipynb")


def chunked_from_view(path: str) -> bool:
    """Whether a file's chunks may come from a view of it (a notebook's script, a component's
    script block), so that only chunking it again finds them in a changed copy."""
    return path.endswith((".ipynb", ".vue", ".svelte"))


def detect(path: str, first_lines: list[str]) -> str:
    """Language of a file: special names, then extension, then shebang, then content."""
    p = PurePosixPath(path)
    if p.name in _NAMES:
        return _NAMES[p.name]
    if p.name.startswith("Dockerfile."):
        return "dockerfile"
    lang = _EXT.get(p.suffix) or _EXT.get(p.suffix.lower())
    if lang == "c" and p.suffix == ".h":
        return _header(first_lines)
    if lang:
        return lang
    head = first_lines[0] if first_lines else ""
    if head.startswith("#!"):
        for pattern, name in _SHEBANG:
            if pattern.search(head):
                return name
    return _sniff(first_lines)


# A `.h` file is C, C++ or Objective-C: C++ (fmt, LLVM, Abseil, Qt keep theirs in `.h`) by what C
# cannot say, Objective-C by its `@` declarations; the C grammar makes thousands of parse errors
# of a C++ header (fmt's format.h: 2,111). `extern "C"` is in C headers written for C++ too.
_CPP = re.compile(
    r"^[ \t]*(?:namespace(?:[ \t]+[\w:]+)?[ \t]*\{|template[ \t]*<|class[ \t]+\w+[^;]*$|"
    r"(?:public|private|protected)[ \t]*:|using[ \t]+namespace\b|#[ \t]*include[ \t]*<[\w/]+>)",
    re.MULTILINE,
)
_OBJC = re.compile(r"^[ \t]*(?:@(?:interface|protocol|implementation)\b|#[ \t]*import\b)", re.MULTILINE)
_HEADER_SCAN = 64 * 1024  # characters of a header read for its dialect


def _header(lines: list[str]) -> str:
    text = "\n".join(lines)[:_HEADER_SCAN]
    return "objc" if _OBJC.search(text) else "cpp" if _CPP.search(text) else "c"


# A reStructuredText title: a line that starts with a word, then a line of three or more of one
# punctuation character (Django's documentation is reST in `.txt` files). Two in a file's head
# make it reST. Linear: the title line is taken whole (a lazy title before optional spaces took
# 0.65 s on a line of 20,000 spaces).
_RST_TITLE = re.compile(r"^\w[^\n]*\n([=\-~^\"'`#*+])\1{2,}[ \t]*$", re.MULTILINE)
_RST_SCAN = 200


def _sniff(first_lines: list[str]) -> str:
    head = "\n".join(first_lines[:50]).lstrip()
    if head.startswith("<?php"):
        return "php"
    if head.startswith("<?xml"):
        return "xml"
    if head[:1] in "{[" and head:
        try:
            json.loads("\n".join(first_lines))
            return "json"
        except (ValueError, RecursionError):  # a file's head that nests deep is not worth parsing
            pass
    return "rst" if len(_RST_TITLE.findall("\n".join(first_lines[:_RST_SCAN]))) >= 2 else "text"
