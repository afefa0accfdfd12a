"""Queries under load: concurrent `cora-ci query` processes while an updater commits and runs
`cora-ci index` in a loop (bench/load.py, short): no error, and no torn read, every answer from
one version of the bundle (`bundle_id` in the JSON) with that version's texts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent.parent / "bench" / "load.py"


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("cora_load", BENCH)
    assert spec is not None and spec.loader is not None
    load = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = load  # its dataclasses look their module up
    spec.loader.exec_module(load)
    return load


def test_queries_during_updates_see_one_version_and_never_fail(tmp_path: Path) -> None:
    load = _bench()
    report = load.run_load(10, 4, "none", None, tmp_path)
    assert report.errors == [] and report.torn == [], "\n".join(report.lines())
    assert report.queries >= 8 and report.updates >= 2, "\n".join(report.lines())
    assert len(report.seen) >= 2, "\n".join(report.lines())  # queries did overlap updates


def test_the_torn_read_check_catches_a_text_from_another_version(tmp_path: Path) -> None:
    load = _bench()
    repo = load.make_repo(tmp_path, None)
    first = load._git(repo, "rev-parse", "HEAD").strip()
    (repo / load.PROBE).write_text("def load_probe_1():\n    return 1\n")
    load._git(repo, "commit", "-qam", "probe")
    run = load.Load(repo, tmp_path / "bundle", "none", {}, tmp_path)
    run.versions = {"a" * 64: first}
    run.answers = [
        ("a" * 64, [{"path": load.PROBE, "text": "def load_probe_1():\n    . . ."}]),
        ("b" * 64, []),
    ]
    run.check()
    assert len(run.report.torn) == 2 and "load_probe_1" in run.report.torn[0]
