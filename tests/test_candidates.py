"""A sentence that names no code has its features worked out for its best fused candidates only
(`Params.keep` times k, and as many as for ten at any k up to ten, so a shorter answer is a longer
one's start; the filters' rejects not counted): what lies below them cannot reach its top k, and
each costs its file's metadata. An identifier, or a sentence naming one, keeps all."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conftest import init_repo

from cora_ci.build import build
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.retrieval import search
from cora_ci.retrieval.catalog import catalog
from cora_ci.retrieval.params import PARAMS
from cora_ci.retrieval.types import Filters

FILES = {
    f"{d}/parse_{n}.py": f"def parse_header_{d}_{n}(line):\n    return line.split(':', 1)\n"
    for d in ("src", "lib")
    for n in range(12)
}


def _bundle(tmp_path: Path) -> Bundle:
    repo = init_repo(tmp_path / "r", FILES)
    build(repo, model="none")
    return open_bundle(repo / ".cora" / "index")


def _scored(b: Bundle) -> dict[int, object]:
    ranked = catalog(b).last_ranked
    assert ranked is not None
    return ranked[1]


FEW = replace(PARAMS, keep=1)  # ten candidates for any k up to ten, of the 24 that match


def test_a_sentence_scores_its_best_candidates_only(tmp_path: Path) -> None:
    b = _bundle(tmp_path)
    hits = search(b, "split a header line at its colon", k=2, expand=False, params=FEW)
    assert len(hits) == 2 and len(_scored(b)) == 10  # as for k = 10, of 24 that match
    search(b, "split a header line at its colon", k=12, expand=False, params=FEW)
    assert len(_scored(b)) == 12  # k times keep beyond ten
    every = search(b, "split a header line at its colon", k=2, expand=False, params=replace(PARAMS, keep=100))
    assert len(_scored(b)) == 24 and [h.chunk_id for h in every] == [h.chunk_id for h in hits]


def test_the_filters_rejects_do_not_count(tmp_path: Path) -> None:
    b = _bundle(tmp_path)
    hits = search(
        b,
        "split a header line at its colon",
        k=1,
        expand=False,
        filters=Filters(paths=("lib/**",)),
        params=FEW,
    )
    kept = _scored(b)
    assert len(kept) == 10 and all(b.chunks.chunk(b.chunks.row_of[cid]).path.startswith("lib/")
                                   for cid in kept)  # fmt: skip
    assert hits and b.chunks.chunk(b.chunks.row_of[hits[0].chunk_id]).path.startswith("lib/")


def test_an_identifier_or_a_sentence_naming_one_keeps_every_candidate(tmp_path: Path) -> None:
    b = _bundle(tmp_path)
    search(b, "parse_header_src_3", k=1, expand=False)
    assert len(_scored(b)) == 24
    search(b, "where does `parse_header_lib_7` split the line", k=1, expand=False)
    assert len(_scored(b)) == 24
