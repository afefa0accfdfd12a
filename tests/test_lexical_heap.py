"""A bucket whose text overflows the BM25 writer's memory still becomes one segment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cora_ci.bundle import lexical
from cora_ci.bundle.lexical import LexicalDoc, _write_scratch_segment, _write_segment


def _docs(n: int) -> list[LexicalDoc]:
    """Documents of distinct terms: the writer's term table is what fills its memory."""
    return [LexicalDoc(i, f"n{i}", f"p{i}.txt", " ".join(f"t{i}u{j}" for j in range(300))) for i in range(n)]


def test_a_writer_that_fills_its_memory_is_run_again_with_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = _docs(2_500)
    (tmp_path / "a").mkdir()
    assert _write_scratch_segment(tmp_path / "a", docs, 15_000_000) is None  # tantivy's least: two segments
    monkeypatch.setattr(lexical, "_HEAPS", (15_000_000, 256_000_000))
    (tmp_path / "b").mkdir()
    seg = _write_segment(tmp_path / "b", docs)
    assert seg.docs == len(docs) and sorted({p.stem for p in (tmp_path / "b").iterdir()}) == [seg.id]
    assert not json.dumps(seg).count("-")  # a content-derived id, 32 hex digits
