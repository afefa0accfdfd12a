"""A build refuses a chunk id twice (CORA-INT-001, both places named): within a file, between
chunked files, and between a chunked file and one kept from the previous bundle."""

from __future__ import annotations

import pytest

from cora_ci.build.chunks import check_unique_ids
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.tables import Rows
from cora_ci.errors import CoraError


def _rows(files: dict[str, list[tuple[int, int]]]) -> Rows:
    """Rows of files whose chunks are (id, start line)."""
    rows = Rows()
    for path, chunks in files.items():
        lines = [line for _, line in chunks]
        light = {"kind": ["method"] * len(chunks), "symbols": [[]] * len(chunks), "anchors": [[]] * len(chunks),
                 "parent": [None] * len(chunks), "start_line": lines, "end_line": lines,
                 "diagnostics": [[]] * len(chunks)}  # fmt: skip
        data = mf.pack_blob({"chunks": light, "links": [{}, [], []]})
        rows.put(
            {"path": path, "ids": b"".join(cid.to_bytes(8, "little") for cid, _ in chunks), "data": data}
        )
    return rows


@pytest.mark.parametrize(
    ("fresh", "kept", "places"),
    [
        ({"a.py": [(1, 1), (2, 5)], "b.py": [(3, 1)]}, {"c.py": [(4, 1)]}, None),
        ({"empty.py": []}, {"c.py": [(4, 1)]}, None),  # a changed file that has no chunk left
        ({"a.py": [(1, 1), (7, 5), (7, 9)]}, {}, "a.py:5 and a.py:9"),
        ({"a.py": [(1, 1), (7, 5)], "b.py": [(7, 2)]}, {}, "a.py:5 and b.py:2"),
        ({"a.py": [(1, 1), (7, 5)]}, {"k.py": [(7, 3)]}, "a.py:5 and k.py"),
    ],
)
def test_a_chunk_id_twice_is_refused_naming_both_places(
    fresh: dict[str, list[tuple[int, int]]], kept: dict[str, list[tuple[int, int]]], places: str | None
) -> None:
    rows = _rows(fresh)
    if places is None:
        check_unique_ids(_rows(kept), rows, list(fresh))
        return
    with pytest.raises(CoraError, match=r"chunk id collision \(7\)") as e:
        check_unique_ids(_rows(kept), rows, list(fresh))
    assert e.value.code == "CORA-INT-001" and places in str(e.value)
