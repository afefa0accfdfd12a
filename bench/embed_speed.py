"""Embedding speed and memory against the targets: >= 100 real code chunks/s on 2 cores, <= 800 MB.

Inputs are real chunks: `chunk_file` over this repository and the installed site-packages, sampled
deterministically (by a hash of path and chunk id), embedded as `document_text` like a bundle does.
Each execution mode runs in a fresh subprocess, so its peak RSS (ru_maxrss) is its own and
includes model loading; modes alternate across repeats and the best time of each counts, because
other work may share the machine. `--corpus DIR ...` samples those directories (bench/run.py passes
the pinned corpora of bench/corpora.py) instead of site-packages.
Run: python bench/embed_speed.py [--quick] [--n N] [--repeats R] [--corpus DIR ...] [--json FILE]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from benchlib import Figures, cpu_model, json_option

REPO = Path(__file__).resolve().parents[1]
SITE = Path(sysconfig.get_paths()["purelib"])
CODE_SUFFIXES = frozenset({".py", ".pyi", ".js", ".ts", ".c", ".h", ".cc", ".cpp", ".hpp", ".rs", ".go"})
SKIP_DIRS = frozenset({".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis"})
MAX_FILE = 200_000  # bytes; bigger files are mostly generated tables
PER_FILE = 4  # chunks a file may add to the pool, so a few big files cannot dominate the sample
# (label, mode, workers): the chosen mode first, then the alternatives it was compared with.
MODES = (("2 sessions x 1 thread, 2 Python threads", "sessions", 2),
         ("1 session x 2 intra-op threads", "intra", 2),
         ("1 session x 1 thread (baseline)", "sessions", 1))  # fmt: skip
TARGET_RATE, TARGET_RSS_MB = 100.0, 800.0


def _stable(key: str) -> int:
    return zlib.crc32(key.encode())


def _code_files(roots: list[Path]) -> list[tuple[str, Path]]:
    """(label, path) of code files: git's files of this repository, then those under `roots`."""
    out: list[tuple[str, Path]] = []
    listed = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    out += [(f"repo/{p}", REPO / p) for p in listed.stdout.splitlines() if Path(p).suffix in CODE_SUFFIXES]
    for top in roots:
        for root, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("__editable__"))
            for f in sorted(files):
                if Path(f).suffix in CODE_SUFFIXES:
                    p = Path(root, f)
                    out.append((f"{top.name}/{p.relative_to(top)}", p))
    return out


def sample_texts(n: int, roots: list[Path]) -> tuple[list[str], list[str], int]:
    """`n` document texts of real chunks and their context parts (what precedes the code).

    Every repository file and site-packages files in hashed order add up to PER_FILE chunks each
    (chosen by hash) to a pool of 4n; the sample is the pool's first n by hash.
    """
    from cora_ci.chunking import chunk_file
    from cora_ci.config import Config
    from cora_ci.embedding import document_text

    cfg = Config()
    files = sorted(_code_files(roots), key=lambda f: (not f[0].startswith("repo/"), _stable(f[0])))
    pool: list[tuple[int, str, str]] = []
    scanned = 0
    for label, path in files:
        if len(pool) >= 4 * n and not label.startswith("repo/"):
            break
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if not data.strip() or len(data) > MAX_FILE:
            continue
        scanned += 1
        result = chunk_file(label, data, cfg)
        texts = [(_stable(f"{label}#{c.id}"), document_text(c), c.text) for c in result.chunks]
        pool += [(key, t, t[: len(t) - len(code)]) for key, t, code in sorted(texts)[:PER_FILE]]
    pool.sort()
    return [t for _, t, _ in pool[:n]], [c for _, _, c in pool[:n]], scanned


def worker(mode: str, workers: int, texts_file: str, vectors_file: str) -> None:
    """One measurement in a fresh process: load, first call (sessions), timed embedding, RSS."""
    import numpy as np

    from cora_ci.embedding import loading

    texts = json.loads(Path(texts_file).read_text())
    t0 = time.perf_counter()
    emb = loading.load_minilm(mode=mode, workers=workers)
    t1 = time.perf_counter()
    emb.embed_documents(texts[:1])  # creates the sessions
    t2 = time.perf_counter()
    emb.embed_documents(texts[1:9])  # warm-up
    t3 = time.perf_counter()
    vectors = emb.embed_documents(texts)
    t4 = time.perf_counter()
    np.save(vectors_file, vectors)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"load_s": t1 - t0, "first_call_s": t2 - t1, "embed_s": t4 - t3, "rss_mb": rss}))


def token_stats(texts: list[str], contexts: list[str]) -> dict[str, float]:
    from cora_ci.embedding import load_embedder

    emb = load_embedder(None)
    assert emb is not None
    window = emb.info.max_length
    counts = [emb.token_count(t) for t in texts]
    q = statistics.quantiles(counts, n=10)
    over = [c for c in counts if c > window]
    ctx = [emb.token_count(c) - 2 for c in contexts]  # without [CLS]/[SEP]
    return {
        "window": window,
        "median": statistics.median(counts),
        "p90": q[-1],
        "max": max(counts),
        "share_over": len(over) / len(counts),
        "dropped_share": sum(c - window for c in over) / sum(counts),
        "dropped_share_of_long": sum(c - window for c in over) / sum(over) if over else 0.0,
        "tokens_embedded": sum(min(c, window) for c in counts),
        "ctx_median": statistics.median(ctx),
        "ctx_p90": statistics.quantiles(ctx, n=10)[-1],
        "ctx_over_half": sum(c > window // 2 for c in ctx) / len(ctx),
        "ctx_fills": sum(c >= window - 2 for c in ctx) / len(ctx),
    }


def machine() -> str:
    import onnxruntime

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (f"{cpu_model()}, {cores} cores usable, Python {platform.python_version()}, "
            f"onnxruntime {onnxruntime.__version__}, {platform.system()} {platform.machine()}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="150 chunks, 2 repeats (about a minute)")
    ap.add_argument("--n", type=int, help="chunks to embed (default 600, quick 150)")
    ap.add_argument("--repeats", type=int, help="runs per mode (default 3, quick 2)")
    ap.add_argument("--corpus", nargs="+", type=Path, metavar="DIR", help=f"sample these (default {SITE})")
    ap.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)  # MODE WORKERS TEXTS VECTORS
    json_option(ap)
    args = ap.parse_args()
    if args.worker:
        mode, workers, texts_file, vectors_file = args.worker
        worker(mode, int(workers), texts_file, vectors_file)
        return
    import numpy as np

    n = args.n or (150 if args.quick else 600)
    repeats = args.repeats or (2 if args.quick else 3)
    print(f"# embed_speed {datetime.datetime.now().isoformat(timespec='seconds')}")
    print(f"machine: {machine()}")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    t = time.perf_counter()
    texts, contexts, scanned = sample_texts(n, args.corpus or [SITE])
    if len(texts) < n:
        sys.exit(f"only {len(texts)} chunks found for a sample of {n}: nothing measured")
    print(f"sample: {len(texts)} chunks from {scanned} files ({time.perf_counter() - t:.1f} s to chunk)")
    ts = token_stats(texts, contexts)
    print(f"tokens per chunk text (with context, incl. [CLS]/[SEP]): median {ts['median']:.0f}, "
          f"p90 {ts['p90']:.0f}, max {ts['max']}; over the {ts['window']}-token window: "
          f"{ts['share_over']:.1%} of chunks")  # fmt: skip
    print(f"tokens not embedded (truncated): {ts['dropped_share']:.1%} of all tokens, "
          f"{ts['dropped_share_of_long']:.1%} of the tokens of long chunks")  # fmt: skip
    print(f"context before the code (path, hierarchy, header): median {ts['ctx_median']:.0f} tokens, "
          f"p90 {ts['ctx_p90']:.0f}; over half the window {ts['ctx_over_half']:.1%}, "
          f"fills it {ts['ctx_fills']:.1%}")  # fmt: skip

    results: dict[str, list[dict[str, Any]]] = {label: [] for label, _, _ in MODES}
    vectors: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        texts_file = Path(tmp, "texts.json")
        texts_file.write_text(json.dumps(texts))
        for r in range(repeats):
            for label, mode, workers in MODES:
                if r and workers == 1:
                    continue  # the single-thread baseline is slow and only a reference: once
                vec_file = Path(tmp, f"{mode}{workers}.npy")
                cmd = [sys.executable, __file__, "--worker", mode, str(workers), str(texts_file)]
                cmd.append(str(vec_file))
                out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
                results[label].append(json.loads(out.strip().splitlines()[-1]))
                vectors[label] = np.load(vec_file)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    print("\n| mode | chunks/s (best) | all runs | tokens/s | peak RSS MB | load ms | first call ms |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for label, runs in results.items():
        rates = [len(texts) / x["embed_s"] for x in runs]
        best = max(runs, key=lambda x: -x["embed_s"])
        print(f"| {label} | {max(rates):.1f} | {', '.join(f'{x:.1f}' for x in rates)} | "
              f"{ts['tokens_embedded'] / best['embed_s']:.0f} | {max(x['rss_mb'] for x in runs):.0f} | "
              f"{statistics.median(x['load_s'] for x in runs) * 1000:.0f} | "
              f"{statistics.median(x['first_call_s'] for x in runs) * 1000:.0f} |")  # fmt: skip
    labels = list(vectors)
    chosen = labels[0]
    for other in labels[1:]:
        same = np.array_equal(vectors[chosen], vectors[other])
        cos = float(np.min(np.sum(vectors[chosen] * vectors[other], axis=1)))
        print(f"vectors of '{chosen}' vs '{other}': bitwise equal {same}, min cosine {cos:.7f}")
    rate = max(len(texts) / x["embed_s"] for x in results[chosen])
    rss = max(x["rss_mb"] for x in results[chosen])
    verdict = {True: "pass", False: "FAIL"}
    print(f"\ntarget >= {TARGET_RATE:.0f} chunks/s: {rate:.1f} -> {verdict[rate >= TARGET_RATE]}")
    print(f"target <= {TARGET_RSS_MB:.0f} MB peak RSS: {rss:.0f} -> {verdict[rss <= TARGET_RSS_MB]}")
    fig = Figures("embed_speed")
    what = f"{len(texts)} real chunks, best of {repeats}"
    fig.add("embed.rate", f"embedding, {chosen} ({what})", rate, "chunks/s", (">=", TARGET_RATE), "issue 3")
    fig.add("embed.rss", "embedding peak RSS (model load included)", rss, "MB", ("<=", TARGET_RSS_MB),
            "issue 3")  # fmt: skip
    fig.add(
        "embed.truncated", "tokens beyond the model's window (not embedded)", 100 * ts["dropped_share"], "%"
    )
    fig.write(args.json)


if __name__ == "__main__":
    main()
