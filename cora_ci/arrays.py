"""Set operations on numpy arrays by sort and binary search, for the hook's path.

`np.unique`, and `np.isin` where it sorts (hash-like values, past a few dozen), reach `numpy.ma`,
whose import costs ~16 ms of a hook process that updates a bundle. These do the same with
`np.sort`, `np.argsort` and `np.searchsorted`, which import nothing; they also take numpy's
structured keys (`build.vectors._KEY`), compared field by field.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt


def sorted_unique(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """`np.unique(a)`: the distinct values of `a`, sorted."""
    s = np.sort(a)
    keep = np.ones(len(s), dtype=bool)
    keep[1:] = s[1:] != s[:-1]
    out: npt.NDArray[Any] = s[keep]
    return out


def first_of_each(a: npt.NDArray[Any]) -> npt.NDArray[np.intp]:
    """`np.unique(a, return_index=True)[1]`: where each distinct value of `a` first occurs, in the
    order of the values."""
    order = np.argsort(a, kind="stable")
    s = a[order]
    keep = np.ones(len(s), dtype=bool)
    keep[1:] = s[1:] != s[:-1]
    out: npt.NDArray[np.intp] = order[keep]
    return out


def positions(known: npt.NDArray[Any], wanted: npt.NDArray[Any]) -> npt.NDArray[np.intp]:
    """The row of each of `wanted` in `known` (any order; the first of repeated values), -1 where
    it is absent: one sort and a binary search, not a Python object a value."""
    if not len(known):
        return np.full(len(wanted), -1, dtype=np.intp)
    order = np.argsort(known, kind="stable")
    at = np.minimum(np.searchsorted(known[order], wanted), len(known) - 1)
    out: npt.NDArray[np.intp] = np.where(known[order][at] == wanted, order[at], -1).astype(np.intp)
    return out


def among(values: npt.NDArray[Any], sorted_set: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    """Which `values` are in `sorted_set` (sorted, not empty): np.isin also costs more on the many
    small arrays an update compares."""
    idx = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    out: npt.NDArray[np.bool_] = sorted_set[idx] == values
    return out


_FEW = 64  # `isin` compares each of this many values or fewer in a pass over the array


def isin(values: npt.NDArray[Any], others: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    """`np.isin(values, others)` for arrays of one dtype."""
    if not len(others) or not len(values):
        return np.zeros(len(values), dtype=bool)
    if len(others) <= _FEW and values.dtype.names is None:  # a pass each: ~20x less than a search
        out: npt.NDArray[np.bool_] = values == others[0]
        for o in others[1:]:
            out |= values == o
        return out
    return among(values, np.sort(others))
