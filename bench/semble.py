"""NDCG@10 on the semble code-search subset: 14 public repositories, 263 annotated queries.

    python bench/semble.py [--quick] [--repo NAME ...] [--model M] [--mirrors DIR]
                           [--losses N] [--json FILE]

Data: ../shared/bench-data/semble/ (`$CORA_SEMBLE_DATA`; its README gives the pinned revisions,
each repository's `benchmark_root` and the metric). Each repository comes from a git mirror that
holds the pinned commit, `MIRRORS/<owner>+<name>/repo` (a bare clone, e.g. the `fetch` of
github:<owner>/<name>; `--mirrors`, default `$CORA_BENCH_MIRRORS` or /work/.mirror). The
`benchmark_root` subtree at that commit is written into bench/.cache/semble/src/<repo>/ as a
one-commit git repository (so result paths are relative to `benchmark_root`, targets to the
checkout root: suffix matching joins them) and indexed there with `cora_ci.build.build`.

Every query is asked with k=10 as `cora-ci query` asks it (bench/ir.py: the full ranking, packed
into results) and scored with semble's NDCG@10 by each result's own lines; in the same run the
40-line-window BM25 of bench/quality.py, and the same cora-ci answers scored by the range each
result prints (first to last line, a parent's skeleton included), for comparison. Printed per
repository, overall (mean over repositories) and by category, next to semble-hybrid's published
per-repository NDCG@10. `--losses N` lists the N worst queries with what came first.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import corpora
import ir
from benchlib import Figures, json_option, load_average, model_tag
from quality import WindowBM25

from cora_ci.build import build
from cora_ci.bundle import open_bundle
from cora_ci.embedding import load_embedder

ROOT = Path(__file__).resolve().parent
DATA = Path(os.environ.get("CORA_SEMBLE_DATA", ROOT.parent.parent / "shared" / "bench-data" / "semble"))
MIRRORS = Path(os.environ.get("CORA_BENCH_MIRRORS", "/work/.mirror"))
CACHE = corpora.CACHE_ROOT / "semble"
PUBLISHED = "semble-hybrid-1ea77add4c1b.json"


class Spec(NamedTuple):
    name: str
    github: str
    rev: str
    root: str  # benchmark_root ("" = the whole checkout)
    matches_published: bool  # annotations as in semble's published run (README: 10 of the 14)
    quick: bool = False


REPOS = (
    Spec("aiohttp", "aio-libs/aiohttp", "fc67cfdfd7d4bbf53ef76515fae69726626fe256", "aiohttp", True),
    Spec("axum", "tokio-rs/axum", "309d1bd9530eec2217134cb262760af1df42ee3b", "axum/src", True, True),
    Spec("chi", "go-chi/chi", "a54874f0e2f12647a19e82ee70dfa8185014100c", "", True, True),
    Spec("cobra", "spf13/cobra", "61968e893eee2f27696c2fbc8e34fa5c4afaf7c4", "", True),
    Spec("express", "expressjs/express", "8e022edc9185f540a3fcecaf5e56b850d919cdac", "lib", False, True),
    Spec("fastapi", "fastapi/fastapi", "c3c9dd6b1a08bcda766e7b43eafe72c4c5e9e193", "fastapi", False),
    Spec("gin", "gin-gonic/gin", "d3ffc9985281dcf4d3bef604cce4e662b1a327a6", "", True),
    Spec("gson", "google/gson", "f4d371d29c04066dbe7fdb31f642831f9c7f40cd", "gson", True),
    Spec("pydantic", "pydantic/pydantic", "82c15f0ba8a9f8d8d6ba595df73ad20e2ee2eccf", "pydantic", True),
    Spec("serde", "serde-rs/serde", "fa7da4a93567ed347ad0735c28e439fca688ef26", "", True),
    Spec("sinatra", "sinatra/sinatra", "f891dd2b6f4911e356600efe6c3b82af97d262c6", "lib", False, True),
    Spec("trpc", "trpc/trpc", "c188dab0822caf3615199e4ac95147bc7560d26f", "packages/server/src", False),
    Spec("vitest", "vitest-dev/vitest", "596f73986abe2161a9a06f0ca03df68e82690b21", "packages/vitest/src",
         True),
    Spec("zod", "colinhacks/zod", "c7805073fef5b6b8857307c3d4b3597a70613bc2", "packages/zod/src", True),
)  # fmt: skip
CATEGORIES = ("architecture", "semantic", "symbol")
COLUMNS = ("cora-ci", "cora-ci, printed range", "40-line BM25")


def mirror(spec: Spec, mirrors: Path) -> Path:
    for d in (mirrors / spec.github.replace("/", "+") / "repo", mirrors / spec.github.replace("/", "+")):
        ok = subprocess.run(["git", f"--git-dir={d}", "cat-file", "-e", f"{spec.rev}^{{commit}}"],
                            capture_output=True).returncode == 0  # fmt: skip
        if d.is_dir() and ok:
            return d
    raise LookupError(f"no git mirror of {spec.github} holding {spec.rev[:12]} under {mirrors}")


def checkout(spec: Spec, mirrors: Path, cache: Path = CACHE) -> Path:
    """`benchmark_root` at the pinned commit as a one-commit git repository (cached in `cache`)."""
    dest = cache / "src" / spec.name
    stamp = dest / ".git" / "semble-rev"
    if stamp.exists() and stamp.read_text() == spec.rev:
        return dest
    git = mirror(spec, mirrors)
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    tree = f"{spec.rev}:{spec.root}" if spec.root else spec.rev
    with tempfile.TemporaryFile() as tar:
        subprocess.run(["git", f"--git-dir={git}", "archive", "--format=tar", tree], stdout=tar, check=True)
        tar.seek(0)
        subprocess.run(["tar", "-x", "-C", str(dest)], stdin=tar, check=True)
    corpora.git_commit(dest, f"{spec.github}@{spec.rev} {spec.root or '.'}", init=True)
    stamp.write_text(spec.rev)
    return dest


@dataclass
class Scored:
    spec: Spec
    index_s: float
    chunks: int
    queries: list[dict[str, Any]]
    scores: dict[str, list[float]] = field(default_factory=dict)  # column -> per query
    results: int = 0  # cora-ci results returned, summed over queries
    unindexed: int = 0  # targets whose path matches no file of the checkout


def run_repo(spec: Spec, model: str, mirrors: Path, emb: Any) -> Scored:
    src = checkout(spec, mirrors)
    out = CACHE / "bundles" / f"{spec.name}-{model_tag(model)}"
    t = time.perf_counter()
    summary = build(src, out, model=model)
    took = time.perf_counter() - t
    bundle = open_bundle(out)
    windows = WindowBM25(src)
    queries = json.loads((DATA / "annotations" / f"{spec.name}.json").read_text())
    s = Scored(spec, took, summary.chunks, queries, {c: [] for c in COLUMNS})
    files = subprocess.run(["git", "ls-files"], cwd=src, capture_output=True, text=True).stdout.split()
    for q in queries:
        targets = [ir.target(t) for t in q["relevant"] + q.get("secondary", [])]
        s.unindexed += sum(not any(ir.suffix_match(f, t.path) for f in files) for t in targets)
        got = ir.cora_results(bundle, q["query"], 10, emb)
        s.results += len(got)
        s.scores["cora-ci"].append(ir.ndcg10(got, targets))
        s.scores["cora-ci, printed range"].append(ir.ndcg10(got, targets, own=False))
        s.scores["40-line BM25"].append(ir.ndcg10(ir.window_results(windows, q["query"], 10), targets))
        q["_got"] = got
    print(f"  {spec.name}: {summary.chunks} chunks, {summary.embedded} embedded, built in {took:.1f} s; "
          f"NDCG@10 {ir.mean(s.scores['cora-ci']):.3f}", flush=True)  # fmt: skip
    return s


def category_means(runs: list[Scored], column: str) -> dict[str, float]:
    """Per-repository category means, averaged over the repositories that have the category."""
    out = {}
    for cat in CATEGORIES:
        per = [ir.mean([x for x, q in zip(r.scores[column], r.queries, strict=True) if q["category"] == cat])
               for r in runs if any(q["category"] == cat for q in r.queries)]  # fmt: skip
        out[cat] = ir.mean(per)
    return out


def report(runs: list[Scored], published: dict[str, dict[str, Any]], fig: Figures) -> None:
    print("\nNDCG@10 per repository (cora-ci scored by each result's own lines)")
    head = "| repo | queries | " + " | ".join(COLUMNS) + " | semble-hybrid (published) | results/query |"
    print(head + "\n|" + "---|" * head.count(" | ") + "---|")
    for r in runs:
        pub = published.get(r.spec.name, {}).get("ndcg10", float("nan"))
        cells = " | ".join(f"{ir.mean(r.scores[c]):.3f}" for c in COLUMNS)
        star = "" if r.spec.matches_published else " *"
        print(f"| {r.spec.name}{star} | {len(r.queries)} | {cells} | {pub:.3f} | "
              f"{r.results / len(r.queries):.1f} |")  # fmt: skip
    sets = [
        ("all", runs),
        ("annotated as in the published run", [r for r in runs if r.spec.matches_published]),
    ]
    for label, sub in sets:
        if not sub:
            continue
        cells = " | ".join(f"**{ir.mean([ir.mean(r.scores[c]) for r in sub]):.3f}**" for c in COLUMNS)
        pub = ir.mean([published[r.spec.name]["ndcg10"] for r in sub if r.spec.name in published])
        n = sum(len(r.queries) for r in sub)
        per_q = sum(r.results for r in sub) / n
        print(f"| mean over {len(sub)} ({label}) | {n} | {cells} | {pub:.3f} | {per_q:.1f} |")
    print("(* annotations newer than semble's published run)")
    for label, sub in sets:
        print(f"\nby category, {label} (mean of per-repository category means)")
        for c in COLUMNS:
            m = category_means(sub, c)
            print(f"  {c:24s} " + "  ".join(f"{k} {v:.3f}" for k, v in m.items()))
        pub_cat = {cat: ir.mean([published[r.spec.name]["by_category"][cat] for r in sub
                                 if cat in published.get(r.spec.name, {}).get("by_category", {})])
                   for cat in CATEGORIES}  # fmt: skip
        print(f"  {'semble-hybrid':24s} " + "  ".join(f"{k} {v:.3f}" for k, v in pub_cat.items()))
    missing = sum(r.unindexed for r in runs)
    print(f"\ntargets matching no file of their checkout (count as misses): {missing}")
    overall = ir.mean([ir.mean(r.scores["cora-ci"]) for r in runs])
    base = ir.mean([ir.mean(r.scores["40-line BM25"]) for r in runs])
    title = f"semble subset, NDCG@10 ({len(runs)} repositories, mean over repositories)"
    fig.add("semble.ndcg10", "cora-ci NDCG@10, mean over repositories", overall, target=(">=", 0.87),
            source="issue 16 (semble-hybrid 0.83 on these 14)",
            cell=(title, "cora-ci", "NDCG@10"))  # fmt: skip
    fig.add("semble.baseline", "40-line BM25 NDCG@10", base, cell=(title, "40-line BM25", "NDCG@10"))
    for r in runs:
        fig.add(f"semble.{r.spec.name}", f"{r.spec.name}: cora-ci NDCG@10", ir.mean(r.scores["cora-ci"]),
                cell=(f"{title}, per repository", r.spec.name, "cora-ci"))  # fmt: skip


def losses(runs: list[Scored], n: int) -> None:
    """The worst cora-ci queries: the targets, and what the answer put first."""
    rows = [(x, r, q) for r in runs for x, q in zip(r.scores["cora-ci"], r.queries, strict=True)]
    rows.sort(key=lambda t: t[0])
    print(f"\n{n} lowest cora-ci queries (NDCG@10; targets; first results with own lines)")
    for x, r, q in rows[:n]:
        targets = [ir.target(t) for t in q["relevant"] + q.get("secondary", [])]
        tdesc = ", ".join(f"{t.path}" + (f":{t.span[0]}-{t.span[1]}" if t.span else "") for t in targets)
        print(f"- [{r.spec.name}/{q['category']}] {x:.2f} {q['query']!r}\n    targets: {tdesc}")
        for i, g in enumerate(q["_got"][:5]):
            own = ",".join(f"{a}-{b}" for a, b in g.own)
            hit = any(ir.covers(g, t) for t in targets)
            print(f"    {i + 1}. {'*' if hit else ' '} {g.path}:{own}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="4 small repositories (axum, chi, express, sinatra)")
    ap.add_argument("--repo", nargs="+", choices=[s.name for s in REPOS], help="only these repositories")
    ap.add_argument("--model", default="default", help="default | minilm | static | none | a model directory")
    ap.add_argument("--mirrors", type=Path, default=MIRRORS, help="where <owner>+<name>/repo mirrors are")
    ap.add_argument("--losses", type=int, default=0, metavar="N", help="list the N worst queries")
    json_option(ap)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    print(f"semble subset, model {args.model}, load average {load_average()}", flush=True)
    specs = [s for s in REPOS if (not args.repo or s.name in args.repo) and (s.quick or not args.quick)]
    published = {r["repo"]: r for r in json.loads((DATA / "results" / PUBLISHED).read_text())["repos"]}
    emb = load_embedder(args.model)
    runs, skipped = [], []
    for spec in specs:
        try:
            runs.append(run_repo(spec, args.model, args.mirrors, emb))
        except LookupError as e:
            print(f"  {spec.name}: skipped, {e}", flush=True)
            skipped.append(spec.name)
    fig = Figures("semble")
    for name in skipped:
        fig.skip(f"semble.{name}", f"{name}: cora-ci NDCG@10", "no mirror holding the pinned commit")
    if runs:
        report(runs, published, fig)
        if args.losses:
            losses(runs, args.losses)
    index_s = sum(r.index_s for r in runs)
    print(f"\nindexing {index_s:.0f} s; ran {time.perf_counter() - t0:.0f} s; load average {load_average()}")
    fig.write(args.json)


if __name__ == "__main__":
    main()
