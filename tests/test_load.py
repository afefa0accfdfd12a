"""Queries under load: concurrent `cora-ci query` processes while an updater commits and runs
`cora-ci index` in a loop (bench/load.py, short): no error, and no torn read, every answer from
one version of the bundle (`bundle_id` in the JSON) with that version's texts."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "load.py"


def test_queries_during_updates_see_one_version_and_never_fail(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("cora_load", BENCH)
    assert spec is not None and spec.loader is not None
    load = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(load)
    report = load.run_load(10, 4, "none", None, tmp_path)
    assert report.errors == [] and report.torn == [], "\n".join(report.lines())
    assert report.queries >= 8 and report.updates >= 2, "\n".join(report.lines())
    assert len(report.seen) >= 2, "\n".join(report.lines())  # queries did overlap updates
