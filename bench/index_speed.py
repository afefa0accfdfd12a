"""Index throughput and bundle size on real repositories: `cora-ci index` end to end, by stage.

Repositories: this one (its own git history), and a git repository made from the source of an
installed package (real code with a real layout; `--package NAME`, default `hypothesis`), since the
machine has no larger checkout. Run: python bench/index_speed.py [--quick] [--model default|none]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.util import find_spec
from pathlib import Path

from cora_ci.build import build

REPO = Path(__file__).resolve().parents[1]
SIZE_TARGET = 1.5  # bundle bytes / indexed source bytes
EMBED_TARGET = 100.0  # chunks/s on 2 cores


def package_repo(name: str, dest: Path) -> Path:
    """A one-commit git repository holding the installed source of package `name`."""
    spec = find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"package {name} is not installed")
    src = Path(next(iter(spec.submodule_search_locations)))
    repo = dest / name
    shutil.copytree(src, repo / name, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    ident = ["-c", "user.name=bench", "-c", "user.email=b@example.com"]
    for args in (["init", "-q"], ["add", "-A"], [*ident, "commit", "-qm", "import"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)
    return repo


def run(label: str, repo: Path, model: str, out: Path) -> None:
    t0 = time.perf_counter()
    s = build(repo, out, model=model)
    wall = time.perf_counter() - t0
    mb = s.source_bytes / 1e6
    print(f"\n== {label}: {repo} (model {model}) ==")
    print(f"  files {s.files:,} indexed, {s.skipped} skipped; {mb:.2f} MB of source; {s.chunks:,} chunks "
          f"({s.embedded:,} distinct texts embedded)")  # fmt: skip
    rates = f"{s.files / wall:.0f} files/s, {mb / wall:.2f} MB/s, {s.chunks / wall:.0f} chunks/s"
    print(f"  wall {wall:.2f} s: {rates}")
    for stage, sec in s.stages.items():
        print(f"    {stage:<6} {sec:7.2f} s  {100 * sec / wall:4.0f}%")
    if s.embedded:
        rate = s.embedded / s.stages["embed"]
        verdict = "PASS" if rate >= EMBED_TARGET else "FAIL"
        print(f"  embedding {rate:.1f} chunks/s (target >= {EMBED_TARGET:.0f})  {verdict}")
    ratio = s.bundle_bytes / s.source_bytes if s.source_bytes else 0.0
    parts = {p.name: p.stat().st_size for p in out.iterdir() if p.is_file()}
    for d in sorted(p for p in out.iterdir() if p.is_dir()):  # bm25/, shards/
        parts[d.name + "/"] = sum(p.stat().st_size for p in d.iterdir())
    detail = ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in sorted(parts.items()))
    verdict = "PASS" if ratio <= SIZE_TARGET else "FAIL"
    print(
        f"  bundle {s.bundle_bytes / 1e6:.2f} MB = {ratio:.2f}x source (target <= {SIZE_TARGET}x)  {verdict}"
    )
    print(f"    {detail}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="only this repository")
    ap.add_argument("--model", default="default")
    ap.add_argument("--package", default="hypothesis")
    args = ap.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%dT%H:%M}Z, "
          f"load average {load}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = tmp
        run("this repository", REPO, args.model, Path(tmp) / "self")
        if not args.quick:
            run(
                f"package {args.package}",
                package_repo(args.package, Path(tmp)),
                args.model,
                Path(tmp) / "pkg",
            )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS {rss:.0f} MB; load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
