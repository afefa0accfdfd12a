"""Several bundles in one query: how to merge their rankings, and what it costs.

    python bench/many_bundles.py [--quick] [--bundle DIR] [--json FILE]

Quality (issue 21: "scores are made comparable across bundles: fuse by rank or normalise, and
measure the choice"): the repositories of bench/quality.py (stripped of doc comments, their
natural-language and identifier queries) are searched each alone and then together with all the
others, as one project and its dependencies would be. A result counts where it is one of the
query's target chunks in the query's own repository; a chunk of another bundle never does. The
merges compared: `joint` (the product: raw BM25 and cosine scores normalised over all bundles'
candidates together, then features, expansion and references across bundles), `score` (separate
searches merged by their own scores, each bundle's best at about 1) and `rank` (separate searches
merged by reciprocal rank). Reported: MRR@10 and Recall@1 alone and with each merge, pooled over
the queries of every repository.

Speed (issue 21: a query over 5 bundles of 50k chunks <= 3x the time of one): the 50,000-chunk
bundle of bench/query_speed.py opened five times (five `Bundle`s, five searches' worth of work),
`search_many` against `search` on one, query embedding included, p50 over the same queries.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import quality
import query_speed
from benchlib import Figures, json_option, pct

from cora_ci.bundle import open_bundle
from cora_ci.embedding import load_embedder
from cora_ci.retrieval.many import Merge, Part, search_many

MERGES: tuple[Merge, ...] = ("joint", "score", "rank")
SOURCES = ["click", "itsdangerous", "jinja2", "markupsafe", "attrs"]
TARGET_RATIO = 3.0


def _mrr(first: int | None) -> float:
    return 1.0 / (first + 1) if first is not None and first < quality.K else 0.0


def merged_quality(fig: Figures, names: list[str], n_text: int, n_ident: int) -> None:
    sources = [s for s in quality.CORPUS if s.name in names]
    repos = quality.load(sources, "default", n_text, n_ident, False)
    emb = quality.CachedEmbedder(load_embedder("default"))
    parts = [Part(r.bundle, emb) for r in repos]
    rows: dict[str, list[tuple[float, float]]] = {m: [] for m in ("alone", *MERGES)}
    for i, r in enumerate(repos):
        for q in r.queries:
            runs = {"alone": search_many([parts[i]], q.text, k=quality.K)}
            for m in MERGES:  # the bundles in one order for every query: no merge favours the asker
                runs[m] = search_many(parts, q.text, k=quality.K, merge=m)
            for name, hits in runs.items():
                mine = 0 if name == "alone" else i
                first = next(
                    (n for n, h in enumerate(hits) if h.origin == mine and h.chunk_id in q.targets), None
                )
                rows[name].append((_mrr(first), float(first == 0)))
    n = len(rows["alone"])
    print(f"\nquality over {len(repos)} repositories together ({n} queries), MRR@10 / Recall@1:")
    for name, xs in rows.items():
        mrr, r1 = sum(x for x, _ in xs) / n, sum(y for _, y in xs) / n
        print(f"  {name:6s}  MRR@10 {mrr:.3f}  R@1 {r1:.3f}")
        fig.add(f"many.quality.{name}.mrr", f"MRR@10, {name} ({len(repos)} bundles, {n} queries)", mrr)
        fig.add(f"many.quality.{name}.r1", f"Recall@1, {name}", r1)


def speed(fig: Figures, path: Path, n: int) -> None:
    one = open_bundle(path)
    five = [open_bundle(path) for _ in range(5)]
    emb: Any = load_embedder("default") if one.model is not None else None
    queries = (query_speed.identifier_queries(one, n // 2) + query_speed.TEXT_QUERIES)[:n]
    alone, many = [Part(one, emb)], [Part(b, emb) for b in five]
    for q in queries[:10]:  # warm-up: page cache, lazily opened indexes
        search_many(alone, q)
        search_many(many, q)
    t1: list[float] = []
    t5: list[float] = []
    for q in queries:  # alternating, so a drift of the machine's speed hits both
        t = time.perf_counter()
        search_many(alone, q)
        t1.append((time.perf_counter() - t) * 1e3)
        t = time.perf_counter()
        search_many(many, q)
        t5.append((time.perf_counter() - t) * 1e3)
    ratio = pct(t5, 50) / pct(t1, 50)
    size = f"{len(one.chunks):,} chunks"
    print(f"\nspeed, {size} per bundle, {len(queries)} queries (embedding included):")
    print(f"  1 bundle  p50 {pct(t1, 50):6.2f} ms  p95 {pct(t1, 95):6.2f} ms")
    print(f"  5 bundles p50 {pct(t5, 50):6.2f} ms  p95 {pct(t5, 95):6.2f} ms  ratio {ratio:.2f}")
    big = len(one.chunks) >= query_speed.TARGET_CHUNKS * 0.9
    fig.add("many.speed.one.p50", f"query over 1 bundle ({size}), p50", pct(t1, 50), "ms")
    fig.add("many.speed.five.p50", f"query over 5 bundles ({size} each), p50", pct(t5, 50), "ms")
    fig.add("many.speed.ratio", "5 bundles / 1 bundle, p50", ratio, "x",
            ("<=", TARGET_RATIO) if big else None, "issue 21" if big else "")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--bundle", type=Path, help="the bundle timed (default: query_speed.py's 50k one)")
    ap.add_argument("--chunks", type=int, default=50_000)
    ap.add_argument("--quick", action="store_true")
    json_option(ap)
    args = ap.parse_args(argv)
    fig = Figures("many_bundles")
    names = SOURCES[:3] if args.quick else SOURCES
    merged_quality(fig, names, 15 if args.quick else 40, 15 if args.quick else 40)
    speed(fig, args.bundle or query_speed.bundle(args.chunks), 60 if args.quick else 200)
    fig.write(args.json)


if __name__ == "__main__":
    main()
