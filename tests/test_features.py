"""`definition_level` ranks definitions: its shortcut (a chunk none of whose names ends with the
identifier's last part is out at once) gives the level the full comparison gives, for any
identifier and any chunk."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from cora_ci.retrieval.catalog import Meta
from cora_ci.retrieval.features import EXACT, FOLDED, NAME_ONLY, _names, definition_level

_PART = st.sampled_from(["Auth", "auth", "login", "Login", "LOGIN", "http", "get", "Headers", "x"])
_IDENT = st.lists(_PART, max_size=3).map(tuple)


def reference(ident: tuple[str, ...], m: Meta, text: str) -> int:
    """The level by comparing every name, as `definition_level` did before its shortcut."""
    if not m.names or m.kind in ("section", "key", "lines"):
        return 0
    if _names(ident, m, False):
        return EXACT
    if _names(ident, m, True):
        return FOLDED
    if len(ident) > 1:
        if (m.kind == "type" and not m.children and _names(ident[:-1], m, False)
                and re.search(rf"(?<![\w$]){re.escape(ident[-1])}(?![\w$])", text)):  # fmt: skip
            return FOLDED
        last = ident[-1].lower()
        if any(name and name[-1].lower() == last for name in m.names):
            return NAME_ONLY
    return 0


@st.composite
def metas(draw: Any) -> Meta:
    dirs = draw(st.lists(st.sampled_from(["src", "auth", "http", "Auth"]), max_size=2))
    path = "/".join([*dirs, draw(st.sampled_from(["auth.py", "http.py", "__init__.py", "login.ts"]))])
    anchors = tuple(
        f"{path}::{'.'.join(parts)}{draw(st.sampled_from(['', '(self, key)', '(x)']))}"
        for parts in draw(st.lists(st.lists(_PART, max_size=3), max_size=3))
    )
    kind = draw(st.sampled_from(["type", "method", "section", "file"]))
    children = draw(st.sampled_from([(), (5,)]))
    return Meta(1, 0, path, "python", kind, (), anchors, 1, 9, None, children, ())


@settings(max_examples=1500, deadline=None)
@given(_IDENT, metas(), st.sampled_from(["", "def login(self): ...", "LOGIN = 1", "get()"]))
@example(("Auth", "login"), Meta(1, 0, "src/auth.py", "python", "type", (), ("src/auth.py::Auth",), 1, 9,
                                 None, (), ()), "def login(self): ...").via("a small type's member")  # fmt: skip
def test_the_shortcut_gives_the_full_comparisons_level(ident: tuple[str, ...], m: Meta, text: str) -> None:
    assert definition_level(ident, m, lambda: text) == reference(ident, m, text)
