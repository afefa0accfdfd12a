"""Fuzzing the manifest, shard, chunk-blob, index and archive readers with mutated real bundles
(tests/bundle_fuzz.py): every input is read as `info`, `verify`, `query` and an update read it,
and ends in success or a clean CoraError. A few hundred inputs here; CORA_FUZZ_EXAMPLES=10000
(or bench/fuzz.py, which counts outcomes) for the full run."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from bundle_fuzz import Fixture, make_fixture, run_one
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("CORA_FUZZ_EXAMPLES", "300"))


@pytest.fixture(scope="module")
def fixture(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    root = tmp_path_factory.mktemp("fuzz")
    os.environ["XDG_CACHE_HOME"] = str(root / "cache")  # module scope: monkeypatch is per test
    return make_fixture(root)


def test_mutated_bundles_and_archives_give_success_or_a_clean_error(fixture: Fixture) -> None:
    seen: Counter[tuple[str, str]] = Counter()

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
    @given(st.data())
    def one(data: st.DataObject) -> None:
        seen[run_one(fixture, data)] += 1

    one()
    kinds = {k for k, _ in seen}
    outcomes = {o for _, o in seen}
    assert kinds == {"bytes", "structure", "archive-bytes", "archive-structure"}, seen
    # the checks are reached and something still reads: neither everything refused nor everything ok
    assert {"ok", "CORA-BND-003", "CORA-BND-004"} <= outcomes, seen


def test_the_unmutated_fixture_reads_cleanly(fixture: Fixture) -> None:
    from bundle_fuzz import read_all

    assert read_all(fixture.bundle) == "ok" and read_all(fixture.archive) == "ok"
    assert Path(fixture.archive).is_file()
