"""Stage 2: files to chunks. `chunk_file` is the one entry point; it never raises on content.

Strategy per file: `structural` (tree-sitter outline of symbols) for languages with a grammar,
`markup` for Markdown/YAML/JSON/TOML, `lines` for everything else and as the fallback when a
parse mostly fails or a file is minified. Oversized and binary files are skipped with a code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cora_ci.chunking.chunker import FileResult, chunk_file

__all__ = ["FileResult", "chunk_file"]

# What the chunker makes of the same file and config changes with its code: a bundle records this
# in its chunker hash (`Config.chunker_hash`), so one built by an older chunker is rebuilt once
# rather than mixing old chunks of unchanged files with new ones. Raise it with any such change.
# 2: Kotlin's and Swift's declarations by their children and keywords; 3: R's names; 4: `.h` as C++
# or Objective-C by its content, definitions intact inside an ERROR node count as parsed; 5: Elixir,
# Zig, Dart, Haskell and Lua definitions (`dialects.py`); 6: a Haskell class's signatures, `bind`s;
# 7: a doc comment's XML tags end at the next `<` (`sentences._TAG`, read in linear time); 8: Dart's
# `GENERATED CODE` heads a generated file; 9: JavaScript's functions bound by assignment
# (`res.json = function json(obj) {...}`, `symbols.Classifier.assigned`); 10: a class's first
# member's doc block may stand a blank line above it too (only a file's first one may not); 11: an
# accessor `Object.defineProperty` defines is a property of its owner (`symbols.Classifier.accessor`);
# 12: a piece repeats at most an eighth of its budget from the one before, keys that share a line
# are no chunks, source maps are skipped; 13: a Jupyter notebook as its cells' script (`notebook.py`);
# 14: a Vue or Svelte component's symbols from its script blocks (`components.py`); 15:
# reStructuredText by sections, also in a text file that is reST (`markup.rst`); 16: a PDF, and a
# file whose text head hides NULs among control bytes further on (`.ai`, FITS), are binary; 17: an
# SVG of mostly geometry is skipped (`chunker._drawing`); 18: a documentation site's search index,
# as its generated pages (`chunker._SEARCH_INDEX`); 19: C and C++ read past stand-alone macro lines
# that open or close a scope (`macros.py`); 20: C++'s `template <...>` line (and the doc above it)
# is its definition's (`specs._GENERIC_WRAPPERS`); 21: a C `struct foo;` or `struct foo *p;` defines
# nothing, `typedef struct {...} Point;` defines `Point` (`symbols._C_TAGGED`); 22: a Swift or
# Kotlin type's `var`/`val` is a property or a field (`symbols.Classifier._member_variable`); 23: a
# C test case a macro defines is named by its suite and name (`symbols.Classifier.macro_case`); 24:
# Objective-C's classes, categories, protocols, properties and instance variables (`dialects._objc`);
# 25: a C++ namespace is in its definitions' anchors and hierarchy (`specs._GENERIC_NAMESPACES`);
# 26: a parse past its time budget stops, and the file is cut into lines (`outline._bounded`); 27:
# the graph links a very common name to an imported file's member only where its owner is named too
# (`graph.build.OWNED`); 28: and to a member of its own file only from inside its owner or from a
# chunk naming it (`graph.build._owned_here`)
REVISION = 28


def __getattr__(name: str) -> Any:
    """`chunk_file` loads the chunker (tree-sitter, the token counter) on first use: a reader that
    only needs the `Chunk` record (`cora_ci.chunking.model`) does not pay ~35 ms of imports."""
    if name in __all__:
        from cora_ci.chunking import chunker

        return getattr(chunker, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
