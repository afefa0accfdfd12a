"""What a type alias stands for: the type it names, defined elsewhere in the bundle.

C names its API's types twice: `typedef struct uv_loop_s uv_loop_t;` in the public header, and
`struct uv_loop_s { ... }` further down or in another file; every signature uses `uv_loop_t`.
Asked for `uv_loop_t`, the alias is its definition, and a line that says only which struct it is:
the struct's fields are what the question wants next. So where the bundle defines the name asked
for as an alias (a C or C++ `typedef`, C++'s `using X = Y;`) of a type it also defines, that
type's definition is a candidate right behind the alias (`TARGET` of a definition's bonus).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from cora_ci.files.langs import C_LANGS
from cora_ci.retrieval.catalog import Catalog, Meta
from cora_ci.retrieval.query import Query
from cora_ci.retrieval.scoring import Cand, as_definitions

# the aliased type's share of a definition's bonus: after the alias (1.0), before a family's others (0.5)
TARGET = 0.75
_MOST = 4  # files defining the alias, or the type, read at most (a name defined in many says nothing)
_QUALIFIERS = r"(?:(?:const|volatile|struct|union|enum|class|typename)\s+)*"


def _patterns(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    n = re.escape(name)
    typedef = re.compile(rf"\btypedef\s+{_QUALIFIERS}(?P<t>[A-Za-z_][\w:]*)(?:\s*<[^;]*>)?[\s*&]+{n}\s*;")
    using = re.compile(rf"\busing\s+{n}\s*=\s*{_QUALIFIERS}(?P<t>[A-Za-z_][\w:]*)")
    return typedef, using


def aliased(cat: Catalog, name: str) -> list[Meta]:
    """The definitions of the type that the bundle's alias `name` names (none where `name` is no
    alias, or names itself: `typedef struct cJSON cJSON;`, whose struct is defined by that name)."""
    if not name:
        return []
    patterns = _patterns(name)
    targets: dict[str, None] = {}
    for path in cat.definers.paths_with([name])[:_MOST]:
        for row in cat.file_rows(path):
            m = cat.row_meta(row)
            if m.kind == "type" and m.lang in C_LANGS and name in m.symbols:
                text = cat.table.text(row)
                for p in patterns:
                    if (found := p.search(text)) is not None:
                        targets[found["t"].rsplit("::", 1)[-1]] = None
    targets.pop(name, None)
    out: list[Meta] = []
    for target in targets:
        for path in cat.definers.paths_with([target])[:_MOST]:
            out.extend(m for row in cat.file_rows(path)
                       if (m := cat.row_meta(row)).kind == "type" and target in m.symbols)  # fmt: skip
    return out


def add_aliased(cat: Catalog, q: Query, cands: dict[int, Cand], accept: Any, bonus: float,
                key: Callable[[int], int] = int, origin: int = 0) -> None:  # fmt: skip
    """The type an identifier asked for aliases, as a candidate with `TARGET` of `bonus` (the
    bonus of a definition), beside the alias itself."""
    if q.identifier is not None and len(q.identifier) == 1:
        as_definitions(q, cands, aliased(cat, q.identifier[-1]), accept, TARGET * bonus, key, origin)
