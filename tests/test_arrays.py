"""The sort-based set operations (`cora_ci.arrays`) against numpy's own, on plain and structured keys."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from cora_ci import arrays
from cora_ci.arrays import among, first_of_each, isin, sorted_unique

_KEY = np.dtype([("hi", "<u8"), ("lo", "<u8")])  # as build.vectors' text keys
small = st.lists(st.integers(0, 40), max_size=80)  # few distinct values: many repeats
wide = st.lists(st.integers(0, 2**64 - 1), max_size=80)


def keys(values: list[int]) -> np.ndarray:
    """Structured keys whose order is not their bytes' order: `lo` varies, `hi` repeats."""
    a = np.zeros(len(values), dtype=_KEY)
    a["hi"] = [v % 3 for v in values]
    a["lo"] = values
    return a


@given(small | wide)
def test_sorted_unique_is_numpy_unique(values: list[int]) -> None:
    a = np.asarray(values, dtype=np.uint64)
    assert np.array_equal(sorted_unique(a), np.unique(a))


@given(small)
def test_first_of_each_is_numpy_unique_return_index(values: list[int]) -> None:
    for a in (np.asarray(values, dtype=np.uint64), keys(values)):
        assert np.array_equal(first_of_each(a), np.unique(a, return_index=True)[1])


@given(small, small)
def test_isin_is_numpy_isin(values: list[int], others: list[int]) -> None:
    a, b = np.asarray(values, dtype=np.uint64), np.asarray(others, dtype=np.uint64)
    assert np.array_equal(isin(a, b), np.isin(a, b))
    assert np.array_equal(isin(keys(values), keys(others)), np.isin(values, others))
    if others:
        assert np.array_equal(among(a, np.sort(b)), np.isin(a, b))


def test_isin_either_side_of_the_few_it_compares_one_by_one() -> None:
    """At most `_FEW` values are compared in a pass each, more are searched: the same answer."""
    rng = np.random.default_rng(7)
    values = rng.integers(0, 300, 2_000).astype(np.uint32)
    for n in (1, 2, arrays._FEW - 1, arrays._FEW, arrays._FEW + 1, 3 * arrays._FEW):
        others = rng.integers(0, 300, n).astype(np.uint32)
        assert np.array_equal(isin(values, others), np.isin(values, others))


def test_none_of_them_imports_numpy_ma() -> None:
    """What they exist for (np.unique and np.isin import numpy.ma, ~16 ms of a hook): checked in a
    fresh interpreter, on hash-like values (as ids and text keys are), which np.isin sorts."""
    import subprocess
    import sys

    def imports_ma(calls: str) -> bool:
        code = (
            "import sys, numpy as np\n"
            "from cora_ci.arrays import first_of_each, isin, sorted_unique\n"
            f"a = np.arange(5000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)\n{calls}\n"
            "print('numpy.ma' in sys.modules)\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return out.stdout.strip() == "True"

    assert not imports_ma("sorted_unique(a); first_of_each(a); isin(a, a[:700])")
    assert imports_ma("np.isin(a, a[:700])")  # the import they spare
