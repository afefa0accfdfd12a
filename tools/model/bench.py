#!/usr/bin/env python3
"""Throughput / memory benchmark for the int8 MiniLM ONNX build.

  python bench.py --model-dir out1 [--model-file X.onnx] [--chunks 320] [--workload code|funcs]

workload "code": real code chunks of ~300-600 wordpiece tokens cut from .py files
of a few installed packages (click, jinja2, rich, pydantic...), truncated to 256
tokens by the tokenizer; "funcs": the single functions from click used by verify.py
(mostly short, median ~110 tokens).
Every batch size runs in its own fresh subprocess (2 intra-op threads) so that
ru_maxrss is the peak of that configuration alone. Inputs are sorted by length
and padded per batch. Timed = tokenise + pad + ONNX run + pooling, after one
warm-up batch.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

PKGS = ["click", "jinja2", "rich", "pydantic", "packaging", "pygments", "yaml", "tqdm"]


def pkg_dir(name):
    spec = importlib.util.find_spec(name)
    return Path(next(iter(spec.submodule_search_locations))) if spec else None


def code_chunks(tokenizer, n: int, max_length: int = 256) -> list[str]:
    """Consecutive-line chunks of 300..600 tokens (deterministic targets)."""
    tokenizer.no_truncation()
    chunks = []
    k = 0
    for pkg in PKGS:
        d = pkg_dir(pkg)
        if d is None:
            continue
        for f in sorted(d.rglob("*.py")):
            lines = f.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
            lines = [ln for ln in lines]
            cur = []
            target = 300 + (k * 37) % 301  # 300..600
            for ln in lines:
                cur.append(ln)
                if len(cur) % 8 == 0 or ln is lines[-1]:
                    ntok = len(tokenizer.encode("".join(cur)).ids)
                    if ntok >= target:
                        if ntok <= 600:
                            chunks.append("".join(cur))
                            k += 1
                            target = 300 + (k * 37) % 301
                        cur = []
                        if len(chunks) >= n:
                            tokenizer.enable_truncation(max_length)
                            return chunks
    tokenizer.enable_truncation(max_length)
    return chunks


def worker(args):
    from embedder import Embedder

    e = Embedder(args.model_dir, model_file=args.model_file, threads=args.threads)
    if args.max_length:
        e.cfg["max_length"] = args.max_length
    if args.workload == "code":
        texts = code_chunks(e.tokenizer, args.chunks, e.cfg["max_length"])
    else:
        from verify import click_dir, code_snippets

        texts = code_snippets(click_dir(), args.chunks)
    rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    e.embed(texts[: args.batch], batch_size=args.batch)  # warm-up
    best = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        seqs = e.tokenize(texts)
        t1 = time.perf_counter()
        e.embed_ids(seqs, batch_size=args.batch, sort_by_length=True)
        t2 = time.perf_counter()
        if best is None or t2 - t0 < best[0]:
            best = (t2 - t0, t1 - t0)
    lens = [len(s) for s in seqs]
    out = {
        "batch": args.batch,
        "n": len(texts),
        "seconds": best[0],
        "tokenize_seconds": best[1],
        "chunks_per_s": len(texts) / best[0],
        "mean_tokens": sum(lens) / len(lens),
        "rss_after_load_mb": rss_loaded / 1024,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--model-file", default=None)
    ap.add_argument("--chunks", type=int, default=320)
    ap.add_argument("--batches", default="1,4,8,16,32")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--workload", choices=["code", "funcs"], default="code")
    ap.add_argument(
        "--max-length",
        type=int,
        default=None,
        help="override truncation length (experiments only; the build uses 256)",
    )
    ap.add_argument("--batch", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.batch is not None:
        return worker(args)
    rows = []
    for b in [int(x) for x in args.batches.split(",")]:
        cmd = [
            sys.executable,
            __file__,
            "--model-dir",
            args.model_dir,
            "--chunks",
            str(args.chunks),
            "--threads",
            str(args.threads),
            "--repeat",
            str(args.repeat),
            "--workload",
            args.workload,
            "--batch",
            str(b),
        ]
        if args.max_length:
            cmd += ["--max-length", str(args.max_length)]
        if args.model_file:
            cmd += ["--model-file", args.model_file]
        r = json.loads(
            subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        )
        rows.append(r)
        print(
            f"batch {b:>3}: {r['chunks_per_s']:7.1f} chunks/s  ({r['n']} chunks, mean {r['mean_tokens']:.0f} tok, "  # noqa: E501
            f"tokenise {r['tokenize_seconds']:.2f}s of {r['seconds']:.2f}s)  "
            f"RSS after load {r['rss_after_load_mb']:.0f} MB, peak {r['peak_rss_mb']:.0f} MB",
            flush=True,
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
