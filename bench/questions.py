"""How-and-where questions a user asks, judged at the chunk: is the code that does it first?

    python bench/questions.py [--model M] [--mirrors DIR] [--losses] [--json FILE]

bench/questions.json holds questions written by hand about four repositories no other benchmark
uses (C#, Rust, PHP, Kotlin), each with the anchors of the code that answers it (a method that
does the work, not a declaration that names it). The other sets measure what this one does not:
bench/quality.py asks with a symbol's own doc sentence (its words are in the target), semble's
set is judged by file. The questions were written after a user trial on the same repositories
(bench/RESULTS.md, 2026-11-29), so they are not blind; keep them as they are, add new ones rather
than edit these, and do not tune to single questions.

Each repository is checked out at its pinned commit from a git mirror (`MIRRORS/<owner>+<name>`,
as bench/semble.py) and indexed; each question asked as `cora-ci query -k 10` asks it. A result
answers when its own lines hold at least half of a target chunk's lines (a class skeleton around
the method does not). Figures: MRR@10, R@1, R@5, and file R@5 (a target's file among the first
five), overall and per repository, next to bench/quality.py's 40-line-window BM25 in the same run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import corpora
import ir
from benchlib import Figures, json_option, load_average, model_tag
from quality import WindowBM25
from semble import MIRRORS, Spec, checkout

from cora_ci.build import build
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.embedding import load_embedder

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "questions.json"
CACHE = corpora.CACHE_ROOT / "questions"
K = 10
Targets = dict[str, list[tuple[str, set[int]]]]  # anchor -> its chunks' (path, lines)


def target_lines(bundle: Bundle, anchors: list[str]) -> Targets:
    """Each anchor's chunks as (path, the lines they hold); a function split in two is both."""
    want: Targets = {a: [] for a in anchors}
    t = bundle.chunks
    for row in range(len(t)):
        c = t.chunk(row)
        for a in c.anchors:
            if a in want:
                want[a].append((c.path, {n for lo, hi in c.verbatim_ranges() for n in range(lo, hi + 1)}))
    missing = [a for a, got in want.items() if not got]
    if missing:
        raise SystemExit(f"questions.json: no chunk anchored {missing[0]!r} (of {len(missing)})")
    return want


def answers(path: str, own: set[int], targets: Targets) -> bool:
    """`own` lines of `path` hold at least half of some target's lines (all its chunks)."""
    for parts in targets.values():
        lines: set[int] = set().union(*(ls for _, ls in parts))
        if path == parts[0][0] and 2 * len(own & lines) >= len(lines):
            return True
    return False


def own_lines(r: ir.Res) -> set[int]:
    return {n for lo, hi in r.own for n in range(lo, hi + 1)}


def scores(hits: list[bool], files: list[bool]) -> dict[str, float]:
    first = next((i for i, h in enumerate(hits[:K]) if h), None)
    return {"MRR@10": 0.0 if first is None else 1.0 / (first + 1), "R@1": float(first == 0),
            "R@5": float(first is not None and first < 5), "file R@5": float(any(files[:5]))}  # fmt: skip


def mean_of(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: ir.mean([r[key] for r in rows]) for key in ("MRR@10", "R@1", "R@5", "file R@5")}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--model", default="default")
    ap.add_argument("--mirrors", type=Path, default=MIRRORS)
    ap.add_argument("--losses", action="store_true", help="what came first where the answer did not")
    json_option(ap)
    args = ap.parse_args()
    data = json.loads(DATA.read_text())
    emb = load_embedder(args.model)
    fig = Figures("questions")
    print(f"how-and-where questions, model {args.model}, load average {load_average()}")
    rows: dict[str, list[dict[str, float]]] = {"cora-ci": [], "40-line BM25": []}
    per_repo: list[tuple[str, int, dict[str, float], dict[str, float]]] = []
    for repo in data["repositories"]:
        spec = Spec(repo["name"], repo["github"], repo["rev"], "", True)
        src = checkout(spec, args.mirrors, CACHE)
        out = CACHE / "bundles" / f"{spec.name}-{model_tag(args.model)}"
        build(src, out, model=args.model)
        bundle = open_bundle(out)
        windows = WindowBM25(src)
        mine: dict[str, list[dict[str, float]]] = {"cora-ci": [], "40-line BM25": []}
        for q in repo["questions"]:
            targets = target_lines(bundle, q["targets"])
            paths = {parts[0][0] for parts in targets.values()}
            got = ir.cora_results(bundle, q["question"], K, emb)
            hits = [answers(r.path, own_lines(r), targets) for r in got]
            mine["cora-ci"].append(scores(hits, [r.path in paths for r in got]))
            wins = [windows.windows[i] for i in windows.search(q["question"], K)]
            base = [answers(p, set(range(a, b + 1)), targets) for p, a, b in wins]
            mine["40-line BM25"].append(scores(base, [p in paths for p, _, _ in wins]))
            if args.losses and not (hits and hits[0]):
                first = next((i + 1 for i, h in enumerate(hits) if h), None)
                shown = ", ".join(f"{r.path}:{r.printed[0]}" for r in got[:3])
                print(f"- [{spec.name}] {q['question']!r}: answered at {first or '-'}; first {shown}")
        for key in rows:
            rows[key].extend(mine[key])
        n = len(repo["questions"])
        per_repo.append((spec.name, n, mean_of(mine["cora-ci"]), mean_of(mine["40-line BM25"])))
    print("\n| repository | questions | MRR@10 | R@1 | R@5 | file R@5 | 40-line BM25 MRR@10 |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, n, m, b in per_repo:
        print(f"| {name} | {n} | {m['MRR@10']:.3f} | {m['R@1']:.3f} | {m['R@5']:.3f} | {m['file R@5']:.3f} "
              f"| {b['MRR@10']:.3f} |")  # fmt: skip
    for key, r in rows.items():
        m = mean_of(r)
        print(f"{key:14s} all {len(r)} questions: " + ", ".join(f"{k} {v:.3f}" for k, v in m.items()))
        tag = "cora" if key == "cora-ci" else "bm25_windows"
        for k, v in m.items():
            fig.add(f"questions.{tag}.{k.lower().replace(' ', '_').replace('@', '')}",
                    f"how-and-where questions, {key}: {k}", v, "")  # fmt: skip
    fig.write(args.json)


if __name__ == "__main__":
    main()
