"""Issue localization: which file (and function) a real issue's fix edits, from the issue's text.

    python bench/localization.py [--quick] [--repo NAME ...] [--limit N] [--model M]
                                 [--mirrors DIR] [--losses N] [--json FILE]

Data: ../shared/bench-data/issue-localization-dev.jsonl (`$CORA_LOCALIZATION_DATA`; 218 issues of
SWE-bench Lite with the commit they were filed against and their fix; its README says how to get
the code). Instances are grouped by repository and taken in `created_at` order; each repository is
indexed once into one bundle, then *updated* (`cora_ci.build.build` on the same bundle) for each
next snapshot, so the run exercises updates too.

- exact (sympy, astropy): a shared clone of a git mirror holding the commits,
  `MIRRORS/<owner>+<name>/repo` (`--mirrors`, default `$CORA_BENCH_MIRRORS` or /work/.mirror),
  checked out at each `base_commit` in bench/.cache/localization/work/<name>.
- approximate (django, scikit-learn, matplotlib): the newest feature release published before
  `created_at` (dates in RELEASES; a feature release, not a later patch release, so no backported
  fix leaks in), downloaded with pip into bench/.cache/localization/downloads/ (Django's sdist, the
  others' wheels) and committed into the work repository; scored at file level only, paths matched
  by suffix, and reported apart.

Rankers, all in one run: cora-ci as `cora-ci query` answers the issue text (bench/ir.py; files in
order of first appearance among k=50 results; function hit@10 from the k=10 answer), BM25 over
whole files (SWE-bench's baseline, `ir.FileBM25`) and the 40-line-window BM25 of bench/quality.py
(files by first appearance among its best 400 windows). Metrics: file Recall@1/5/10 (the gold file
among the first k distinct files) and function hit@10 (one of the first 10 results' own lines
overlaps an edited function's lines at `base_commit`: the `edit_functions` found there by `ast`,
else, for a function the fix adds, the pre-image lines its hunks change).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from collections import defaultdict
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
SHARED = ROOT.parent.parent / "shared" / "bench-data"
DATA = Path(os.environ.get("CORA_LOCALIZATION_DATA", SHARED / "issue-localization-dev.jsonl"))
MIRRORS = Path(os.environ.get("CORA_BENCH_MIRRORS", "/work/.mirror"))
CACHE = corpora.CACHE_ROOT / "localization"
EXACT = ("sympy/sympy", "astropy/astropy")
# Feature releases and their publication dates (the project's release notes).
RELEASES: dict[str, tuple[str, str, list[tuple[str, str]]]] = {
    "django/django": ("django", "sdist", [
        ("2.1", "2018-08-01"), ("2.2", "2019-04-01"), ("3.0", "2019-12-02"), ("3.1", "2020-08-04"),
        ("3.2", "2021-04-06"), ("4.0", "2021-12-07"), ("4.1", "2022-08-03"), ("4.2", "2023-04-03")]),
    "scikit-learn/scikit-learn": ("scikit-learn", "wheel", [
        ("0.19.0", "2017-08-11"), ("0.20.0", "2018-09-26"), ("0.21.0", "2019-05-09"), ("0.22", "2019-12-03"),
        ("0.23.0", "2020-05-12"), ("0.24.0", "2020-12-22"), ("1.0", "2021-09-24"), ("1.1.0", "2022-05-12"),
        ("1.2.0", "2022-12-08")]),
    "matplotlib/matplotlib": ("matplotlib", "wheel", [
        ("3.3.0", "2020-07-16"), ("3.4.0", "2021-03-26"), ("3.5.0", "2021-11-16"), ("3.6.0", "2022-09-15"),
        ("3.7.0", "2023-02-13")]),
}  # fmt: skip
RANKERS = ("cora-ci", "BM25 over files", "40-line BM25")
DEPTH, WINDOWS = 50, 400  # cora-ci results, and baseline windows, asked for to rank 10 distinct files


class Instance(NamedTuple):
    id: str
    repo: str
    commit: str
    created: str
    text: str
    gold: str  # the file the fix edits
    functions: tuple[str, ...]  # edit_functions' qualified names
    changed: tuple[ir.Span, ...]  # pre-image lines the hunks change (an insertion: the line before)


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def parse(row: dict[str, Any]) -> Instance:
    files = re.findall(r"^--- a/(\S+)", row["patch"], re.M)
    (gold,) = files
    changed: list[ir.Span] = []
    line = 0
    for text in row["patch"].splitlines():
        m = _HUNK.match(text)
        if m:
            line = int(m.group(1))
        elif text.startswith("-") and not text.startswith("---"):
            changed.append((line, line))
            line += 1
        elif text.startswith("+") and not text.startswith("+++"):
            changed.append((max(line - 1, 1), max(line - 1, 1)))
        elif text.startswith(" "):
            line += 1
    funcs = tuple(f.split(":", 1)[1] for f in row["edit_functions"])
    return Instance(row["instance_id"], row["repo"], row["base_commit"], row["created_at"],
                    row["problem_statement"], gold, funcs, tuple(sorted(set(changed))))  # fmt: skip


def function_spans(source: str, names: tuple[str, ...]) -> list[ir.Span]:
    """Lines (decorators included) of the named `Class.method` / `function` definitions."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: list[ir.Span] = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                qual = prefix + node.name
                if qual in names:
                    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                    found.append((start, node.end_lineno or node.lineno))
                if isinstance(node, ast.ClassDef):
                    walk(node.body, qual + ".")

    walk(tree.body, "")
    return found


# ----------------------------------------------------------------------------- snapshots


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def exact_checkout(repo: str, commit: str, mirrors: Path) -> Path:
    work = CACHE / "work" / repo.split("/")[1]
    if not (work / ".git").exists():
        shutil.rmtree(work, ignore_errors=True)
        work.parent.mkdir(parents=True, exist_ok=True)
        src = mirrors / repo.replace("/", "+") / "repo"
        if not (src / "HEAD").exists():
            raise LookupError(f"no git mirror of {repo} at {src}")
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(src), str(work)], check=True)
    # A mirror may lack its largest blobs (a snapshot keeps none of 4 MiB and more: data files);
    # those paths are left out of the checkout, which would fail on them.
    tree = _git("ls-tree", "-r", "-z", commit, cwd=work).split("\0")
    blobs: dict[str, list[str]] = defaultdict(list)
    for e in tree:
        if e and e.split()[1] == "blob":
            blobs[e.split()[2]].append(e.split("\t", 1)[1])
    check = subprocess.run(["git", "cat-file", "--batch-check"], cwd=work, input="\n".join(blobs) + "\n",
                           capture_output=True, text=True, check=True).stdout  # fmt: skip
    gone = sorted(
        p for line in check.splitlines() if line.endswith(" missing") for p in blobs[line.split()[0]]
    )
    esc = [re.sub(r"([*?\[\\!#])", r"\\\1", p) for p in gone]
    (work / ".git" / "info").mkdir(exist_ok=True)
    (work / ".git" / "info" / "sparse-checkout").write_text("".join(["/*\n", *(f"!/{p}\n" for p in esc)]))
    _git("config", "core.sparseCheckout", "true", cwd=work)
    _git("checkout", "-q", "-f", "--detach", commit, cwd=work)
    _git("clean", "-q", "-f", "-d", "-x", cwd=work)
    if gone:  # cora-ci indexes HEAD's tree: a commit on top of base_commit without them
        for i in range(0, len(gone), 200):
            _git("rm", "-q", "--cached", "--sparse", "--", *gone[i : i + 200], cwd=work)
        _git("-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "--no-verify",
             "-m", f"{commit} without {len(gone)} file(s) the mirror lacks", cwd=work)  # fmt: skip
    return work


def release_for(repo: str, created: str) -> str:
    before = [v for v, date in RELEASES[repo][2] if date < created[:10]]
    return before[-1]


def download(repo: str, version: str) -> Path:
    """The sdist or wheel of `version`, downloaded once with pip."""
    name, kind, _ = RELEASES[repo]
    dest = CACHE / "downloads" / f"{name}-{version}"
    if dest.is_dir() and any(dest.iterdir()):
        return next(dest.iterdir())
    dest.mkdir(parents=True, exist_ok=True)
    base = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(dest), f"{name}=={version}"]
    if kind == "sdist":
        tries = [[*base, "--no-binary", ":all:"]]
    else:
        plats = [a for p in ("manylinux1", "manylinux2010", "manylinux2014", "manylinux_2_17")
                 for a in ("--platform", f"{p}_x86_64")]  # fmt: skip
        tries = [
            [*base, "--only-binary", ":all:", "--python-version", py, *plats] for py in ("3.8", "3.7", "3.6")
        ]
    for cmd in tries:
        if subprocess.run(cmd, capture_output=True).returncode == 0 and any(dest.iterdir()):
            return next(dest.iterdir())
    raise SystemExit(f"pip download of {name}=={version} failed")


def release_checkout(repo: str, version: str) -> Path:
    """The release's files committed into one work repository per project (each next version
    replaces the previous one's files: an update of the same bundle)."""
    work = CACHE / "work" / repo.split("/")[1]
    stamp = work / ".git" / "release"
    if stamp.exists() and stamp.read_text() == version:
        return work
    archive = download(repo, version)
    fresh = not (work / ".git").exists()
    if fresh:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    for p in work.iterdir():
        if p.name != ".git":
            shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z:
            z.extractall(work)
    else:
        with tarfile.open(archive) as tf:
            top = tf.getnames()[0].split("/")[0] + "/"
            members = [m for m in tf.getmembers() if m.name.startswith(top)]
            for m in members:
                m.name = m.name[len(top) :]
            tf.extractall(work, members=[m for m in members if m.name], filter="data")
    corpora.git_commit(work, f"{repo} {version}", init=fresh)
    stamp.write_text(version)
    return work


# ----------------------------------------------------------------------------- ranking


@dataclass
class Outcome:
    inst: Instance
    snapshot: str
    files: dict[str, list[str]]  # ranker -> first 10 distinct files
    fn_hit: dict[str, bool | None]  # ranker -> function hit@10 (None: not scored)
    gold_spans: list[ir.Span] = field(default_factory=list)
    fallback: bool = False  # gold lines from the hunks: no edited function existed at base


def rank(inst: Instance, exact: bool, work: Path, bundle: Any, emb: Any, windows: WindowBM25 | None,
         files: ir.FileBM25 | None, snapshot: str) -> Outcome:  # fmt: skip
    """One issue's files by every ranker; without `windows` and `files` (a replay), cora-ci's only."""
    deep = ir.cora_results(bundle, inst.text, DEPTH, emb)
    wins = ir.window_results(windows, inst.text, WINDOWS) if windows is not None else []
    ranked = {
        "cora-ci": ir.distinct_files((r.path for r in deep), 10),
        "BM25 over files": files.search(inst.text, 10) if files is not None else [],
        "40-line BM25": ir.distinct_files((r.path for r in wins), 10),
    }
    out = Outcome(inst, snapshot, ranked, dict.fromkeys(RANKERS))
    if exact:
        path = work / inst.gold
        src = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        out.gold_spans = function_spans(src, inst.functions)
        if not out.gold_spans:
            out.gold_spans, out.fallback = list(inst.changed), True
        top = ir.cora_results(bundle, inst.text, 10, emb)
        for name, res in (
            (("cora-ci", top), ("40-line BM25", wins[:10])) if windows is not None else (("cora-ci", top),)
        ):
            out.fn_hit[name] = any(
                r.path == inst.gold and any(ir.overlaps(r.own, a, b) for a, b in out.gold_spans) for r in res
            )
    return out


def _shown(rank: int | None) -> str:
    return "-" if rank is None else str(rank + 1)


def file_rank(o: Outcome, ranker: str) -> int | None:
    match = (
        (lambda p: p == o.inst.gold) if o.inst.repo in EXACT else (lambda p: ir.suffix_match(p, o.inst.gold))
    )
    return next((i for i, p in enumerate(o.files[ranker]) if match(p)), None)


def run_repo(
    repo: str, rows: list[Instance], model: str, mirrors: Path, emb: Any, replay: bool = False
) -> tuple[list[Outcome], dict[str, float]]:
    """Index, update and rank snapshot by snapshot. Each snapshot's bundle is kept; `replay` ranks
    with cora-ci only, over the kept bundles (no checkout of a release, no update, no baselines):
    a ranking change measured in minutes, against the figures of the last full run."""
    exact = repo in EXACT
    bundle_dir = CACHE / "bundles" / f"{repo.split('/')[1]}-{model_tag(model)}"
    kept = bundle_dir.with_name(bundle_dir.name + "-snapshots")
    times: dict[str, float] = defaultdict(float)
    out: list[Outcome] = []
    groups: dict[str, list[Instance]] = defaultdict(list)  # snapshot -> instances, in created_at order
    for inst in rows:
        groups[inst.commit if exact else release_for(repo, inst.created)].append(inst)
    files = ir.FileBM25()
    for n, (snap, insts) in enumerate(groups.items()):
        if replay:
            out.extend(_replay(repo, snap, insts, kept / snap, mirrors, emb))
            continue
        t = time.perf_counter()
        work = exact_checkout(repo, snap, mirrors) if exact else release_checkout(repo, snap)
        times["checkout"] += time.perf_counter() - t
        t = time.perf_counter()
        s = build(work, bundle_dir, model=model)
        took = time.perf_counter() - t
        times["index" if n == 0 else "update"] += took
        shutil.rmtree(kept / snap, ignore_errors=True)
        shutil.copytree(bundle_dir, kept / snap)
        bundle = open_bundle(bundle_dir)
        t = time.perf_counter()
        windows = WindowBM25(work)
        files.index(work)
        times["baselines"] += time.perf_counter() - t
        t = time.perf_counter()
        for inst in insts:
            out.append(rank(inst, exact, work, bundle, emb, windows, files, snap[:12] if exact else snap))
        times["queries"] += time.perf_counter() - t
        print(f"  {repo} {snap[:12]}: {len(insts)} issue(s); {'index' if n == 0 else 'update'} {took:.1f} s "
              f"({s.rechunked} files chunked, {s.embedded} embedded, {s.chunks} chunks)",
              flush=True)  # fmt: skip
        for o in out[-len(insts) :]:
            ranks = ", ".join(f"{name} {_shown(file_rank(o, name))}" for name in RANKERS)
            fn = "" if o.fn_hit["cora-ci"] is None else f"; fn hit {o.fn_hit['cora-ci']}"
            print(f"    {o.inst.id}: gold file rank {ranks}{fn}", flush=True)
    times["snapshots"] = len(groups)
    return out, times


def _replay(repo: str, snap: str, insts: list[Instance], bundle_dir: Path, mirrors: Path,
            emb: Any) -> list[Outcome]:  # fmt: skip
    if not bundle_dir.exists():
        raise LookupError(f"no kept bundle of {repo} at {snap}: run once without --replay")
    exact = repo in EXACT
    work = exact_checkout(repo, snap, mirrors) if exact else bundle_dir
    bundle = open_bundle(bundle_dir)
    out = [rank(i, exact, work, bundle, emb, None, None, snap[:12] if exact else snap) for i in insts]
    for o in out:
        fn = "" if o.fn_hit["cora-ci"] is None else f"; fn hit {o.fn_hit['cora-ci']}"
        print(f"    {o.inst.id}: gold file rank cora-ci {_shown(file_rank(o, 'cora-ci'))}{fn}", flush=True)
    return out


# ----------------------------------------------------------------------------- report


def table(title: str, outs: list[Outcome], fig: Figures | None, key: str) -> None:
    if not outs:
        return
    fn = any(o.fn_hit["cora-ci"] is not None for o in outs)
    print(f"\n{title}: {len(outs)} issues")
    print("| ranker | R@1 | R@5 | R@10 |" + (" fn hit@10 |" if fn else ""))
    print("|---|---|---|---|" + ("---|" if fn else ""))
    for name in RANKERS:
        if not any(o.files[name] for o in outs):  # a replay: cora-ci's only
            continue
        ranks = [file_rank(o, name) for o in outs]
        rec = {k: ir.mean([float(r is not None and r < k) for r in ranks]) for k in (1, 5, 10)}
        hits = [float(h) for o in outs if (h := o.fn_hit[name]) is not None]
        cell = (f" {ir.mean(hits):.3f} |" if hits else " - |") if fn else ""
        print(f"| {name} | {rec[1]:.3f} | {rec[5]:.3f} | {rec[10]:.3f} |{cell}")
        if fig is not None:
            cname = f"localization, {title}"
            slug = re.sub(r"\W+", "_", name).strip("_").lower()
            target = (">=", 0.85) if name == "cora-ci" else None
            for k in (1, 5, 10):
                fig.add(f"localization.{key}.{slug}.r{k}", f"{title}, {name}: file Recall@{k}", rec[k],
                        target=target if k == 5 else None,
                        source="issue 16 (and 10 points above BM25 over files)" if target and k == 5 else "",
                        cell=(cname, name, f"R@{k}"))  # fmt: skip
            if hits:
                fig.add(f"localization.{key}.{slug}.fn10", f"{title}, {name}: function hit@10",
                        ir.mean(hits), cell=(cname, name, "fn hit@10"))  # fmt: skip


def losses(outs: list[Outcome], n: int) -> None:
    """Issues cora-ci ranks worst (gold file latest or absent), with what it placed first."""

    def lowest(o: Outcome) -> int:
        r = file_rank(o, "cora-ci")
        return -(99 if r is None else r)

    scored = sorted(outs, key=lowest)
    print(f"\n{n} issues where cora-ci ranks the fixed file lowest (rank; BM25-over-files' rank)")
    for o in scored[:n]:
        r, b = file_rank(o, "cora-ci"), file_rank(o, "BM25 over files")
        first = o.inst.text.strip().splitlines()[0][:100]
        print(f"- {o.inst.id} ({o.snapshot}): gold {o.inst.gold} at {'-' if r is None else r + 1} "
              f"(files BM25 {'-' if b is None else b + 1}); issue: {first!r}")  # fmt: skip
        for i, p in enumerate(o.files["cora-ci"][:5]):
            print(f"    {i + 1}. {p}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    names = {r.split("/")[1]: r for r in (*EXACT, *RELEASES)}
    ap.add_argument("--repo", nargs="+", choices=sorted(names), help="only these repositories")
    ap.add_argument("--limit", type=int, default=0, metavar="N", help="the first N issues of each repository")
    ap.add_argument("--quick", action="store_true",
                    help="astropy's first 2 issues, without a model unless --model says")  # fmt: skip
    ap.add_argument("--model", help="default | minilm | static | none | a model directory (default: default)")
    ap.add_argument("--mirrors", type=Path, default=MIRRORS, help="where <owner>+<name>/repo mirrors are")
    ap.add_argument(
        "--replay",
        action="store_true",
        help="rank with cora-ci only, over the bundles a previous run kept (no baselines)",
    )
    ap.add_argument("--losses", type=int, default=0, metavar="N", help="list the N worst issues")
    json_option(ap)
    args = ap.parse_args(argv)
    if args.quick:
        args.repo, args.limit = args.repo or ["astropy"], args.limit or 2
    args.model = args.model or ("none" if args.quick else "default")
    t0 = time.perf_counter()
    print(f"issue localization, model {args.model}, load average {load_average()}", flush=True)
    rows = sorted((parse(json.loads(line)) for line in DATA.read_text().splitlines() if line.strip()),
                  key=lambda i: (i.created, i.id))  # fmt: skip
    by_repo: dict[str, list[Instance]] = defaultdict(list)
    for inst in rows:
        by_repo[inst.repo].append(inst)
    repos = [names[n] for n in args.repo] if args.repo else [*EXACT, *RELEASES]
    emb = load_embedder(args.model)
    fig = Figures("localization")
    outs: dict[str, list[Outcome]] = {}
    for repo in repos:
        insts = by_repo[repo][: args.limit] if args.limit else by_repo[repo]
        t = time.perf_counter()
        try:
            outs[repo], times = run_repo(repo, insts, args.model, args.mirrors, emb, args.replay)
        except LookupError as e:
            print(f"  {repo}: skipped, {e}", flush=True)
            fig.skip(f"localization.{repo}", repo, str(e))
            continue
        spent = ", ".join(f"{k} {v:.0f} s" for k, v in times.items() if k != "snapshots")
        print(f"  {repo}: {len(insts)} issues, {times['snapshots']:.0f} snapshots in "
              f"{time.perf_counter() - t:.0f} s ({spent})", flush=True)  # fmt: skip
    for repo, o in outs.items():
        table(repo + (" (exact)" if repo in EXACT else " (release before the issue)"), o, None, "")
    exact = [o for r in EXACT for o in outs.get(r, [])]
    approx = [o for r in RELEASES for o in outs.get(r, [])]
    table("exact instances (sympy, astropy at base_commit)", exact, fig, "exact")
    table(
        "approximate instances (django, scikit-learn, matplotlib releases; file level)", approx, fig, "approx"
    )
    fallback = sum(o.fallback for o in exact)
    print(f"\nfunction gold lines from the hunks (the edited function is new): {fallback} of {len(exact)}")
    if args.losses:
        losses(exact + approx, args.losses)
    print(f"\nran {time.perf_counter() - t0:.0f} s; load average {load_average()}")
    fig.write(args.json)


if __name__ == "__main__":
    main()
