"""Index throughput, peak RSS and bundle size: `cora-ci index` end to end, by stage.

Repositories: this one (its own git history) and one-commit git repositories of pinned public
corpora (bench/corpora.py: PyPI sdists, npm TypeScript sources). Each build runs in a fresh
process, so its wall time includes start-up and model load and its peak RSS is its own.
Targets: bundle <= 1.0x the indexed source and the packed archive smaller still (issue 19; 1.5x in
issue 3), >= 100 chunks/s embedded, peak RSS <= 800 MB (issue 3). Sizes are listed per part as
`cora-ci info` lists them.

    python bench/index_speed.py [--quick] [--model default|none] [--corpus NAME ...] [--json FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

import corpora
from benchlib import Figures, cpu_model, json_option, load_average, measured_run

REPO = Path(__file__).resolve().parents[1]
SIZE_TARGET = 1.0  # bundle bytes / indexed source bytes (issue 19)
EMBED_TARGET = 100.0  # chunks/s on 2 cores
RSS_TARGET = 800.0  # MB
FULL, QUICK = ["self", "werkzeug", "rxjs", "zod"], ["click"]


def corpus_repo(name: str, dest: Path) -> Path:
    """A one-commit git repository of a pinned corpus's sources."""
    repo = dest / name
    shutil.copytree(corpora.source_dir(corpora.BY_NAME[name]), repo)
    corpora.git_commit(repo, "import", init=True)
    return repo


def worker(repo: str, out: str, model: str) -> None:
    """One build in this fresh process; the summary goes to stdout as JSON."""
    from cora_ci.build import build

    s = build(Path(repo), Path(out), model=model)
    print(json.dumps({k: v for k, v in dataclasses.asdict(s).items() if k != "out"}))


def bench_repo(fig: Figures, name: str, repo: Path, model: str, out: Path) -> None:
    run = measured_run([sys.executable, __file__, "--worker", repo, out, model])
    s = json.loads(run.stdout.strip().splitlines()[-1])
    wall, mb = run.wall, s["source_bytes"] / 1e6
    print(f"\n== {name}: {repo} (model {model}) ==")
    print(f"  files {s['files']:,} indexed, {s['skipped']} skipped; {mb:.2f} MB of source; {s['chunks']:,} "
          f"chunks ({s['embedded']:,} distinct texts embedded)")  # fmt: skip
    print(f"  process wall {wall:.2f} s ({s['files'] / wall:.0f} files/s, {mb / wall:.2f} MB/s, "
          f"{s['chunks'] / wall:.0f} chunks/s); peak RSS {run.rss_mb:.0f} MB")  # fmt: skip
    for stage, sec in s["stages"].items():
        print(f"    {stage:<6} {sec:7.2f} s  {100 * sec / wall:4.0f}%")
    label = f"{name} ({s['files']:,} files, {mb:.1f} MB, {s['chunks']:,} chunks)"
    fig.add(f"index.{name}.wall", f"full index, {label}", wall, "s")
    fig.add(
        f"index.{name}.rss", f"full index peak RSS, {name}", run.rss_mb, "MB", ("<=", RSS_TARGET), "issue 3"
    )
    if s["embedded"]:
        rate = s["embedded"] / s["stages"]["embed"]
        print(f"  embedding {rate:.1f} chunks/s (target >= {EMBED_TARGET:.0f})")
        fig.add(f"index.{name}.embed_rate", f"embedding inside the build, {name}", rate, "chunks/s",
                (">=", EMBED_TARGET), "issue 3")  # fmt: skip
    ratio = s["bundle_bytes"] / s["source_bytes"] if s["source_bytes"] else 0.0
    from cora_ci.bundle import open_bundle
    from cora_ci.bundle.archive import write_archive
    from cora_ci.bundle.report import describe

    parts = describe(open_bundle(out))["parts"]
    detail = ", ".join(f"{k.strip()} {v / 1e6:.2f} MB" for k, v in parts.items())
    print(f"  bundle {s['bundle_bytes'] / 1e6:.2f} MB = {ratio:.2f}x source (target <= {SIZE_TARGET}x)")
    print(f"    {detail}")
    fig.add(f"index.{name}.size", f"bundle size / source, {name}", ratio, "x", ("<=", SIZE_TARGET),
            "issue 19")  # fmt: skip
    packed = write_archive(out, out.with_suffix(".tar.gz"))
    packed_ratio = packed.path.stat().st_size / s["source_bytes"] if s["source_bytes"] else 0.0
    print(f"  packed archive {packed.path.stat().st_size / 1e6:.2f} MB = {packed_ratio:.2f}x source")
    fig.add(f"index.{name}.packed", f"packed archive / source, {name}", packed_ratio, "x",
            ("<=", SIZE_TARGET), "issue 19")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    ap.add_argument("--model", default="default")
    ap.add_argument("--corpus", nargs="+", help=f"repositories: 'self' or corpus names (default {FULL})")
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)  # REPO OUT MODEL
    json_option(ap)
    args = ap.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    names = args.corpus or (QUICK if args.quick else FULL)
    unknown = set(names) - {"self", *corpora.BY_NAME}
    if unknown:
        sys.exit(f"unknown corpus: {', '.join(sorted(unknown))}")
    now = datetime.datetime.now(datetime.UTC)
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{now:%Y-%m-%dT%H:%M}Z, load average {load_average()}")  # fmt: skip
    fig = Figures("index_speed")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = tmp
        for name in names:
            repo = REPO if name == "self" else corpus_repo(name, Path(tmp))
            bench_repo(fig, name, repo, args.model, Path(tmp) / f"bundle-{name}")
    for name in sorted(set(FULL) - set(names)):
        fig.skip(f"index.{name}", f"full index of {name}", "not in this run (--quick or --corpus)")
    print(f"\nload average at the end {load_average()}")
    fig.write(args.json)


if __name__ == "__main__":
    main()
