"""A bucket whose text overflows the BM25 writer's memory still becomes one segment; a segment
written in tmpfs is the one written on the disk."""

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
    assert (
        _write_scratch_segment(tmp_path / "a", docs, 15_000_000, False) is None
    )  # tantivy's least: two segments
    monkeypatch.setattr(lexical, "_HEAPS", (15_000_000, 256_000_000))
    (tmp_path / "b").mkdir()
    seg = _write_segment(tmp_path / "b", docs)
    assert seg.docs == len(docs) and sorted({p.stem for p in (tmp_path / "b").iterdir()}) == [seg.id]
    assert not json.dumps(seg).count("-")  # a content-derived id, 32 hex digits


def test_a_segment_is_the_same_from_tmpfs_from_the_disk_and_when_tmpfs_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = _docs(40)
    got = {}
    for name, shadow in (("tmpfs", lexical.SHADOW_DIR), ("disk", None), ("broken", str(tmp_path / "gone"))):
        monkeypatch.setattr(lexical, "SHADOW_DIR", shadow)
        (tmp_path / name).mkdir()
        seg = _write_segment(tmp_path / name, docs)
        got[name] = (seg, {p.name: p.read_bytes() for p in (tmp_path / name).iterdir()})
    assert got["tmpfs"] == got["disk"] == got["broken"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".bm25-")]  # no scratch left behind
