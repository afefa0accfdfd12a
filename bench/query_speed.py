"""Query speed: in-process `search` p50/p95 on a large bundle, and the `cora-ci query` process.

    python bench/query_speed.py [--bundle DIR] [--chunks 50000] [--queries 300] [--runs 15] [--quick]
                                [--json FILE]

Targets (issue 5): in-process p50 <= 10 ms on a 50k-chunk bundle, excluding the query embedding;
end-to-end `cora-ci query` process median <= 0.5 s, start-up and model load included.

Without `--bundle`, a repository of about `--chunks` chunks is assembled once from the synthetic
files of bench/corpora.py (the pinned public corpora, then renamed copies; counted with the real
chunker) under $CORA_BENCH_DIR (default /tmp/cora-bench-query) and indexed with the default
model: about 8 minutes for 50k chunks on 2 cores, then reused. The in-process target is judged
on 50k chunks or more only; the process target on any bundle (a smaller one is only faster).
Queries: identifiers sampled from the bundle's anchors (bare and `Outer.name`) and a fixed list
of natural-language questions. In-process timing calls `search` with the query vector computed
beforehand (embedding is timed apart), after a warm-up, on one open bundle; `--quick` uses fewer
queries and process runs. p50/p90/p95 are nearest-rank percentiles.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import corpora
from benchlib import Figures, json_option, pct

from cora_ci.build import build
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.chunking import chunk_file
from cora_ci.config import Config
from cora_ci.embedding import load_embedder
from cora_ci.retrieval import search

WORK = Path(os.environ.get("CORA_BENCH_DIR", "/tmp/cora-bench-query"))
TARGET_CHUNKS, TARGET_P50_MS, TARGET_PROCESS_S = 50_000, 10.0, 0.5
TEXT_QUERIES = [
    "parse a configuration file and report unknown keys",
    "retry a failed network request with exponential backoff",
    "read the package metadata from a wheel",
    "compare two version strings",
    "format an error message with the line number",
    "walk a directory tree and skip hidden files",
    "cache the result of an expensive function call",
    "convert a unicode string to bytes",
    "check whether a path matches a glob pattern",
    "resolve the dependencies of a package",
    "compute the hash of a file in chunks",
    "print a progress bar on the terminal",
    "infer the type of a variable from its assignments",
    "generate random test data for a strategy",
    "split a command line into arguments",
    "load a plugin by its entry point name",
    "how are warnings turned into errors",
    "where is the lock file written",
    "join url parts safely",
    "decode a json response body",
]


def assemble(target: int) -> Path:
    """A git repository of synthetic corpus files holding about `target` chunks."""
    repo = WORK / f"repo-synthetic-{target}"
    if (repo / ".git").exists():
        return repo
    shutil.rmtree(repo, ignore_errors=True)
    cfg, total, taken = Config(), 0, 0
    for rel, data in corpora.synthetic_files():
        n = len(chunk_file(rel, data, cfg).chunks)
        out = repo / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        total += n
        taken += 1
        if total >= target:
            break
    corpora.git_commit(repo, "corpus", init=True)
    print(f"corpus: {taken} files, ~{total} chunks in {repo}", flush=True)
    return repo


def bundle(target: int) -> Path:
    repo = assemble(target)
    out = WORK / f"bundle-synthetic-{target}"
    if not (out / "manifest.msgpack").exists():
        print("indexing with the default model (about 8 minutes for 50k chunks on 2 cores)...", flush=True)
    t = time.perf_counter()
    s = build(repo, out)
    if s.embedded or s.rechunked:
        print(f"indexed: {s.chunks} chunks in {time.perf_counter() - t:.0f} s", flush=True)
    return out


def identifier_queries(b: Bundle, n: int) -> list[str]:
    """Names sampled by hash from the anchors: bare names and `Outer.name`."""
    t = b.chunks
    picked: dict[str, str] = {}
    for row in range(len(t)):
        a = t.chunk(row).anchor
        if not a or "::" not in a:
            continue
        name = a.split("::", 1)[1].split("(", 1)[0]
        parts = name.split(".")
        q = ".".join(parts[-2:]) if len(parts) > 1 and row % 2 else parts[-1]
        if len(parts[-1]) >= 4 and not parts[-1].startswith("__"):
            picked.setdefault(hashlib.sha1(q.encode()).hexdigest(), q)
    return [picked[h] for h in sorted(picked)[:n]]


class Fixed:
    """An embedder that returns vectors computed beforehand: the search is timed without the model."""

    def __init__(self, vectors: dict[str, Any]) -> None:
        self.vectors = vectors

    def embed_query(self, text: str) -> Any:
        return self.vectors[text]


def targets_apply(b: Bundle) -> bool:
    return len(b.chunks) >= TARGET_CHUNKS * 0.9


def in_process(fig: Figures, path: Path, n: int) -> bool:
    """Search latency on one open bundle; True when the bundle is large enough for the targets."""
    t0 = time.perf_counter()
    b = open_bundle(path)
    opened = time.perf_counter() - t0
    emb = load_embedder("default") if b.model is not None else None
    queries = identifier_queries(b, n // 2) + TEXT_QUERIES
    queries += [f"{q} implementation" for q in identifier_queries(b, n)[n // 2 :]][: max(0, n - len(queries))]
    embed_ms: list[float] = []
    vectors: dict[str, Any] = {}
    if emb is not None:
        for q in queries:
            t = time.perf_counter()
            vectors[q] = emb.embed_query(q)
            embed_ms.append((time.perf_counter() - t) * 1e3)
    fixed = Fixed(vectors) if emb is not None else None
    t = time.perf_counter()
    search(b, queries[0], embedder=fixed)
    first = (time.perf_counter() - t) * 1e3
    for q in queries[:10]:  # warm-up: page cache, lazily opened indexes, per-file text caches
        search(b, q, embedder=fixed)
    times: dict[str, list[float]] = {"identifier": [], "text": [], "all": []}
    slowest = (0.0, "")
    for q in queries:
        t = time.perf_counter()
        search(b, q, embedder=fixed)
        ms = (time.perf_counter() - t) * 1e3
        slowest = max(slowest, (ms, q))
        times["text" if " " in q else "identifier"].append(ms)
        times["all"].append(ms)
    print(f"\nin-process, {len(b.chunks)} chunks ({path})")
    print(f"  open_bundle {opened * 1e3:.0f} ms, first query {first:.0f} ms")
    for kind, xs in times.items():
        if xs:
            p50, p90, p95 = pct(xs, 50), pct(xs, 90), pct(xs, 95)
            label = f"search {kind:10s} n={len(xs):4d}"
            print(f"  {label}  p50 {p50:6.2f} ms  p90 {p90:6.2f} ms  p95 {p95:6.2f} ms  max {max(xs):.1f} ms")
    print(f"  slowest: {slowest[1]!r} {slowest[0]:.1f} ms")
    if embed_ms:
        print(f"  query embedding (apart)  p50 {pct(embed_ms, 50):6.2f} ms  p90 {pct(embed_ms, 90):6.2f} ms")
    guard(fig, b, queries, fixed, pct(times["all"], 50))
    big = targets_apply(b)
    size = f"{len(b.chunks):,} chunks, {len(times['all'])} queries"
    fig.add("query.inproc.p50", f"in-process query p50 ({size})", pct(times["all"], 50), "ms",
            ("<=", TARGET_P50_MS) if big else None, "issue 5" if big else "")  # fmt: skip
    fig.add("query.inproc.p95", f"in-process query p95 ({size})", pct(times["all"], 95), "ms")
    if embed_ms:
        fig.add("query.embed.p50", "query embedding alone, p50", pct(embed_ms, 50), "ms")
    return big


def guard(fig: Figures, b: Any, queries: list[str], fixed: Any, p50_ms: float) -> None:
    """What keeping Rust's panic dumps off stderr costs a query (bundle/panics.py): the guard's
    calls a search makes, times its cost a call (fd 2 moved to a private file and back)."""
    from cora_ci.bundle import panics

    calls = 0
    enter = panics._QUIET.enter

    def counted() -> bool:
        nonlocal calls
        calls += 1
        return enter()

    panics._QUIET.enter = counted  # type: ignore[method-assign]
    try:
        for q in queries:
            search(b, q, embedder=fixed)
    finally:
        panics._QUIET.enter = enter  # type: ignore[method-assign]
    n = 20_000
    t = time.perf_counter()
    for _ in range(n):
        with panics.quiet():
            pass
    per_call_us = (time.perf_counter() - t) / n * 1e6
    per_query_ms = calls / len(queries) * per_call_us / 1e3
    print(f"  panic guard: {calls / len(queries):.1f} calls a search, {per_call_us:.1f} us a call: "
          f"{per_query_ms:.3f} ms a query, {per_query_ms / p50_ms:.1%} of the p50")  # fmt: skip
    fig.add("query.guard.share", "panic guard's share of the in-process p50", per_query_ms / p50_ms)


_STAGES = r"""
import sys, time, json
t0 = time.perf_counter()
from pathlib import Path
from cora_ci.bundle import open_bundle
from cora_ci.embedding import load_embedder
from cora_ci.retrieval import search
from cora_ci.retrieval.catalog import catalog
t = {"imports": time.perf_counter() - t0}
def lap(name, since):
    t[name] = time.perf_counter() - since
    return time.perf_counter()
s = time.perf_counter()
b = open_bundle(Path(sys.argv[1])); s = lap("open_bundle (manifest, verification record)", s)
b.chunks; s = lap("chunk table (manifest columns unpacked)", s)
emb = load_embedder("default") if b.model is not None else None; s = lap("model load", s)
vec = emb.embed_query(sys.argv[2]) if emb is not None else None
s = lap("first query embedding (sessions)", s)
catalog(b).graph; s = lap("reference graph as arrays", s)
class Fixed:
    def embed_query(self, text): return vec
search(b, sys.argv[2], embedder=Fixed() if emb is not None else None)
s = lap("search, cold (indexes opened)", s)
print(json.dumps(t))
"""


def stages(path: Path, runs: int) -> None:
    """Where a cold process spends its time, stage by stage (median of `runs` fresh processes)."""
    import json

    got: dict[str, list[float]] = {}
    q = "parse a configuration file and report unknown keys"
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", _STAGES, str(path), q], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"\nstages: failed: {out.stderr.strip()[-300:]}")
        for k, v in json.loads(out.stdout).items():
            got.setdefault(k, []).append(v * 1e3)
    print(f"\ncold process, stage by stage (median of {runs} processes)")
    for k, v in got.items():
        print(f"  {k:45s} {statistics.median(v):7.1f} ms")
    print(f"  {'total':45s} {sum(statistics.median(v) for v in got.values()):7.1f} ms")


def end_to_end(fig: Figures, path: Path, runs: int, big: bool) -> None:
    exe = (
        shutil.which("cora-ci", path=os.path.dirname(sys.executable)) or shutil.which("cora-ci") or "cora-ci"
    )
    qs = ["parse a configuration file and report unknown keys", "resolve the dependencies of a package"]
    wall: list[float] = []
    for i in range(runs + 1):
        t = time.perf_counter()
        out = subprocess.run([exe, "query", qs[i % 2], "--bundle", str(path), "--format", "json"],
                             capture_output=True, text=True)  # fmt: skip
        dt = time.perf_counter() - t
        if out.returncode != 0:
            sys.exit(f"\nend to end: cora-ci query failed: {out.stderr.strip()[:300]}")
        if i:  # the first run fills the verified-files record and the page cache
            wall.append(dt)
    med = statistics.median(wall)
    print(f"\nend to end, `cora-ci query ... --format json`, {runs} runs: median {med:.3f} s, "
          f"p95 {pct(wall, 95):.3f} s, min {min(wall):.3f} s, max {max(wall):.3f} s")  # fmt: skip
    # Judged at any size: a smaller bundle only makes the process faster, so a failure is real.
    fig.add("query.process.p50", f"`cora-ci query` process, median of {runs}", med, "s",
            ("<=", TARGET_PROCESS_S), "issue 5" if big else "issue 5, on a smaller bundle")  # fmt: skip
    fig.add("query.process.p95", f"`cora-ci query` process, p95 of {runs}", pct(wall, 95), "s")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument(
        "--bundle", type=Path, help="an existing bundle (default: build the site-packages corpus)"
    )
    ap.add_argument("--chunks", type=int, default=50_000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--quick", action="store_true")
    json_option(ap)
    args = ap.parse_args(argv)
    if args.quick:
        args.queries, args.runs = 80, 5
    t0 = time.perf_counter()
    fig = Figures("query_speed")
    path = args.bundle or bundle(args.chunks)
    big = in_process(fig, path, args.queries)
    stages(path, max(3, args.runs // 3))
    end_to_end(fig, path, args.runs, big)
    if not big:
        fig.skip("query.inproc.target", f"in-process p50 target (judged on {TARGET_CHUNKS:,} chunks)",
                 "smaller bundle")  # fmt: skip
    fig.write(args.json)
    print(f"\nran {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
