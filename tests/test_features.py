"""`definition_level` ranks definitions: its shortcut (a chunk none of whose names ends with the
identifier's last part is out at once) gives the level the full comparison gives, for any
identifier and any chunk. `name_match` finds a sentence's words in file and symbol names in other forms."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cora_ci.bundle.stems import WEIGHT
from cora_ci.bundle.terms import terms
from cora_ci.retrieval.catalog import Meta
from cora_ci.retrieval.features import (
    EXACT,
    FOLDED,
    NAME_ONLY,
    _names,
    definition_level,
    last_stem,
    name_match,
    stem_parts,
)
from cora_ci.retrieval.query import analyse

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


def _file(path: str, *symbols: str) -> Meta:
    return Meta(1, 0, path, "python", "method", symbols, (), 1, 9, None, (), ())


@pytest.mark.parametrize(
    ("question", "path", "share"),
    [
        ("task state tracking", "src/utils/tasks.ts", WEIGHT / 3),  # a plural
        ("how input is parsed", "lib/parser.py", WEIGHT / 2),  # the same stem
        ("error formatting", "lib/error_formatter.ts", 1 / 2 + WEIGHT / 2),  # one word as written
        ("configuration options", "node/config.ts", WEIGHT / 2),  # abbreviated
        ("standard trait implementations", "ser/impls.rs", WEIGHT / 3),  # abbreviated, plural
        ("utility helpers", "gin/utils.go", WEIGHT / 2),
        ("tasks", "src/tasks.ts", 1.0),  # as written: a whole word
        ("documentation pages", "site/docs.py", 0.0),  # `doc` is too short to stand for it
        ("running jobs", "lib/run.py", 0.0),  # a stem of three letters stands for too much
    ],
)
def test_a_file_name_matches_a_sentences_words_in_other_forms(question: str, path: str, share: float) -> None:
    assert name_match(analyse(question), _file(path)) == pytest.approx(share)


def test_a_reports_names_are_matched_against_its_title() -> None:
    """A hundred-word report shares next to none of its words with any name: its title's share."""
    body = "It prints the statements of every migration, but my database cannot roll back DDL. " * 6
    q = analyse(f"sqlmigrate wraps its output in BEGIN/COMMIT\n\n{body}")
    assert q.title is not None and len(q.words) > 10
    title = frozenset(analyse("sqlmigrate wraps its output in BEGIN/COMMIT").words)
    assert name_match(q, _file("commands/sqlmigrate.py")) == pytest.approx(1 / len(title))
    assert name_match(q._replace(title=None), _file("commands/sqlmigrate.py")) == pytest.approx(
        1 / len(q.words)
    )


def test_identifiers_match_as_written_and_symbols_hold_a_sentences_words_in_other_forms() -> None:
    assert name_match(analyse("Task"), _file("src/tasks.ts")) == 0.0
    assert name_match(analyse("parser"), _file("lib/read.py", "parse")) == 0.0
    assert name_match(analyse("parsed values"), _file("lib/read.py", "parser")) == pytest.approx(WEIGHT / 2)
    assert name_match(analyse("Styles a text"), _file("lib/termui.py", "style")) == pytest.approx(WEIGHT / 2)
    # `bool` abbreviates "boolean"; `str` is too short to stand for "string"
    assert name_match(analyse("convert a string to a boolean"), _file("lib/t.py", "str_to_bool")) == (
        pytest.approx(WEIGHT / 3)
    )


_WORD = st.sampled_from(["task", "tasks", "parsed", "parser", "config", "configuration", "impl", "utils",
                         "state", "doc", "x", "formatting", "run"])  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(_WORD, min_size=1, max_size=4), st.lists(_WORD, min_size=1, max_size=2),
       st.lists(_WORD, max_size=2))  # fmt: skip
def test_other_forms_count_less_than_the_words_as_written(words: list[str], file: list[str],
                                                          symbols: list[str]) -> None:  # fmt: skip
    q = analyse(" ".join(["find", *words]))
    m = _file(f"src/{'_'.join(file)}.py", *symbols)
    exact = len(q.words & frozenset(terms(" ".join([*symbols, "_".join(file)])))) / len(q.words)
    assert exact <= name_match(q, m) <= exact + WEIGHT * (1 - exact) + 1e-9


@given(
    st.from_regex(r"/?([a-z_]{0,3}/){0,3}(__init__|index|mod|lib|x|y\.z|)(\.[a-z]{1,2}){0,2}", fullmatch=True)
)
@example("index.ts")
@example("a/index.ts")
@example("/index.ts")
def test_a_paths_last_stem_is_its_stem_parts_last(path: str) -> None:
    assert last_stem(path) == stem_parts(path)[-1]
