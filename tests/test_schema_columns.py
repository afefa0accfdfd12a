"""The whole-column shape checks of a bundle's tables (`schema._check`) accept exactly what the
per-value checks accept, for any value msgpack can hand back, so making them fast let nothing
hostile through; and a refused column still names its first bad value."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cora_ci.bundle import schema
from cora_ci.chunking.model import KINDS

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1),
    st.integers(min_value=-3, max_value=70),
    st.floats(allow_nan=False),
    st.sampled_from(KINDS),
    st.text(max_size=6),
    st.binary(max_size=17),
)
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4), max_leaves=12)
# Columns mostly of one shape, as a bundle's are, with a stray value now and then.
_SHAPES = st.sampled_from([
    st.sampled_from(KINDS), st.integers(min_value=-2, max_value=5), st.none(),
    st.sampled_from([0, 1, (1 << 31) - 1, 1 << 31, 1 << 32]), st.text(max_size=4),
    st.lists(st.text(max_size=4), max_size=3), st.binary(max_size=24),
    st.lists(st.tuples(st.integers(-2, 9), st.integers(-2, 9)).map(list), max_size=2),
    st.lists(st.tuples(st.text(max_size=3), st.text(max_size=3), st.none() | st.integers(0, 9)).map(list),
             max_size=2),
])  # fmt: skip


@st.composite
def columns(draw: Any) -> list[Any]:
    usual = draw(_SHAPES)
    col = draw(st.lists(st.one_of(usual, usual, usual, _VALUES), max_size=8))
    # through msgpack, as a bundle's tables arrive (tuples become lists, no other types)
    out: list[Any] = msgpack.unpackb(msgpack.packb(col, use_bin_type=True), raw=False, strict_map_key=False)
    return out


def _each_ok(col: list[Any], ok: Any) -> bool:
    try:
        schema._each(col, ok, "c")
    except ValueError:
        return False
    return True


@settings(max_examples=600, deadline=None)
@given(columns())
@example([1 << 31]).via("the edges of a line number")
@example([0, (1 << 31) - 1]).via("the edges of a line number")
@example([-1]).via("a negative count")
def test_chunk_column_checks_agree_with_the_value_checks(col: list[Any]) -> None:
    for name, ok in schema._CHUNK_CHECKS.items():
        assert schema._COLUMN_CHECKS[name](col) == _each_ok(col, ok), name


@settings(max_examples=300, deadline=None)
@given(columns(), st.sampled_from([1, 4, 8]))
def test_file_column_checks_agree_with_the_value_checks(col: list[Any], unit: int) -> None:
    assert schema._strings(col) == _each_ok(col, schema._string_list)
    assert schema._counts(col) == _each_ok(col, lambda s: schema.is_int(s) and s >= 0)
    assert schema._sized(col, unit) == _each_ok(col, lambda b: isinstance(b, bytes) and len(b) % unit == 0)


def test_a_refused_column_names_its_first_bad_value() -> None:
    cols = {"kind": ["file", "method", "klass", 3], "start_line": [1, 2], "end_line": [4, 5]}
    with pytest.raises(ValueError, match=r"chunks\.kind\[2\]: unexpected value"):
        schema.check_chunk_columns(cols, ("kind",), [7, 8, 9, 10])
    with pytest.raises(ValueError, match=r"chunks\.end_line\[1\]"):
        schema.check_chunk_columns(
            {"start_line": [1, 2], "end_line": [4, True]}, ("start_line", "end_line"), [1, 2]
        )
    with pytest.raises(ValueError, match=r"start_line after end_line at \[1\]"):
        schema.check_chunk_columns(
            {"start_line": [1, 9], "end_line": [4, 5]}, ("start_line", "end_line"), [1, 2]
        )
    with pytest.raises(ValueError, match=r"chunks\.parent\[1\]"):
        schema.check_chunk_columns({"parent": [None, 99]}, ("parent",), [1, 2])
