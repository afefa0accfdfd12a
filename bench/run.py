"""Every benchmark in one command: figures next to their targets in bench/RESULTS.md, and a plot.

    python bench/run.py [--quick] [--only NAME ...] [--results FILE] [--no-write] [--render]

Fetches the pinned corpora (bench/corpora.py, sha256-checked), then runs each bench script as its
own process (so each measures a cold process, and one crash cannot take the others down) with
`--json`, and writes the summary between the `bench/run.py` markers of bench/RESULTS.md (the
hand-written sections below them are kept) and bench/quality_vs_time.png. A script that fails is
reported with the tail of its log (bench/.cache/logs/) and the others still run; the exit status is
1 when any script failed. A failed *target* is a figure, not a failure of the run.

`--quick` takes a few minutes' worth of each script (small corpora, fewer queries and runs, the
1,000-file scale only, first builds and bundles that an earlier run left in bench/.cache/ when
cora-ci finds them current) and lists what it skipped: about 2 minutes on 2 cores after any earlier
run, 5 on a fresh clone (which fetches the corpora and builds those bundles once). The full run
builds the first builds and quality bundles anew: about 11 minutes, 18 when the 50,000-chunk query
bundle (kept in $CORA_BENCH_DIR while current) must be built too, plus about 5 minutes for the
semble subset and an hour for issue localization's 72 exact instances (without a model).
`--render` writes the last run's summary and plot again from its logs (bench/.cache/logs/),
measuring nothing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import corpora
from benchlib import cpu_model, load_average

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "RESULTS.md"
PLOT = BENCH / "quality_vs_time.png"
LOGS = corpora.CACHE_ROOT / "logs"
BEGIN, END = "<!-- bench/run.py:begin -->", "<!-- bench/run.py:end -->"
PACKAGES = ("tantivy", "onnxruntime", "tree-sitter", "tree-sitter-language-pack", "tokenizers",
            "numpy")  # fmt: skip


@dataclass(frozen=True)
class Step:
    name: str  # bench/<name>.py
    full: tuple[str, ...]
    quick: tuple[str, ...]
    quick_skips: str = ""  # what --quick leaves out, said in the summary
    corpus_dirs: bool = False  # append `--corpus` and the corpora's source directories


STEPS = (
    Step("chunk_speed", (), ("--quick",), "3 latency runs per size; corpus sampled to 15 MB", True),
    Step("embed_speed", (), ("--quick",), "150 chunks, 2 repeats", True),
    Step("index_speed", (), ("--quick",), "click only (full: this repository, werkzeug, rxjs, zod)"),
    Step("build_speed", (), ("--models", "none,static", "--texts", "500"),
         "no MiniLM build (full: none, static and minilm on 1,000 files)"),
    Step("update_speed", (), ("--cases", "1000:default", "--runs", "3", "--reuse"),
         "1,000 files with the model only, from the cached first build when it is still "
         "current (full: built now, and 300, 3,000 and 30,000 files without a model for the growth)"),
    Step("query_speed", (), ("--quick", "--chunks", "5000"),
         "a 5,000-chunk bundle, 80 queries, 5 processes: the in-process target (50k chunks) is not judged"),
    Step("mcp_warm", (), ("--quick", "--chunks", "5000"),
         "query_speed's 5,000-chunk bundle, 60 calls per tool: the 50k-chunk targets are not judged"),
    Step("many_bundles", (), ("--quick", "--chunks", "5000"),
         "3 repositories, 30 queries each; query_speed's 5,000-chunk bundle five times (ratio not judged)"),
    Step("rebind_speed", (), ("--quick",), "3 files, 20 anchors each"),
    Step("quality", ("--fresh",), ("--quick",),
         "click, itsdangerous, jinja2, rxjs; 45 queries each; cached bundles, so index seconds are "
         "their last first build's (full: 8 repositories, 180 each, built now)"),
    Step("secret_scan", (), ()),
    Step("semble", (), ("--quick",),
         "axum, chi, express, sinatra (full: the 14 repositories of the semble subset)"),
    Step("definitions", (), ("--quick",),
         "axum, chi, express, sinatra and 4 small others, 40 names each (full: 29 repositories, 200 each)"),
    Step("localization", ("--repo", "sympy", "astropy", "--model", "none"), ("--quick",),
         "astropy's first 2 issues without a model (full: the 72 exact instances, sympy and astropy, "
         "without a model, about an hour; with the model, and django, scikit-learn and matplotlib, "
         "only by running the script alone)"),
    Step("airgap", (), ()),
)  # fmt: skip


@dataclass
class Outcome:
    step: Step
    seconds: float
    returncode: int
    log: Path
    doc: dict[str, Any] = field(default_factory=dict)
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and bool(self.doc)

    @property
    def why(self) -> str:
        """How a failed script failed, in a few words."""
        if self.timed_out:
            return "timed out"
        if self.returncode < 0:
            return f"killed by signal {-self.returncode}"
        return f"exit {self.returncode}" if self.returncode else "exit 0 but no figures written"


# ----------------------------------------------------------------------------- running


def run_step(step: Step, quick: bool, dirs: list[Path], timeout: float) -> Outcome:
    """One script in its own process; its stdout and stderr go to a log, its figures to JSON."""
    LOGS.mkdir(parents=True, exist_ok=True)
    log, out = LOGS / f"{step.name}.log", LOGS / f"{step.name}.json"
    out.unlink(missing_ok=True)
    base = list(step.quick if quick else step.full)
    extra = ["--corpus", *map(str, dirs)] if step.corpus_dirs else []
    cmd = [sys.executable, str(BENCH / f"{step.name}.py"), *base, *extra, "--json", str(out)]
    said = f" --corpus ({len(dirs)} corpora)" if extra else ""
    print(f"-> {step.name} {' '.join(base)}{said}".rstrip(), flush=True)
    t = time.perf_counter()
    timed_out = False
    with log.open("w") as f:
        # A session of its own, so a timeout also ends the processes the script started.
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            f.write(f"\nbench/run.py: timed out after {timeout:.0f} s\n")
            rc, timed_out = 1, True
    took = time.perf_counter() - t
    doc = json.loads(out.read_text()) if rc == 0 and out.exists() else {}
    res = Outcome(step, took, rc, log, doc, timed_out)
    if res.ok:
        print(f"   ok in {took:.0f} s, {len(doc['figures'])} figures (log {log})", flush=True)
    else:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        print(f"   FAILED ({res.why}) after {took:.0f} s; last lines of {log}:\n{tail}", flush=True)
    return res


def fetch_corpora() -> tuple[list[Path], str]:
    """The corpora's source directories, or none and why (every script that needs them then fails)."""
    try:
        return list(corpora.fetch().values()), ""
    except SystemExit as e:
        return [], str(e)


# ----------------------------------------------------------------------------- the summary


def _sh(*cmd: str) -> str:
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else "?"


def machine() -> str:
    ram = "?"
    try:
        kib = next(int(ln.split()[1]) for ln in Path("/proc/meminfo").read_text().splitlines()
                   if ln.startswith("MemTotal:"))  # fmt: skip
        ram = f"{kib / 2**20:.1f} GiB RAM"
    except (OSError, StopIteration, ValueError):
        pass
    return f"{cpu_model()}, {os.cpu_count()} cores, {ram}, {platform.system()} {platform.machine()}"


def versions() -> str:
    commit = _sh("git", "rev-parse", "--short", "HEAD")
    changed = _sh("git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                  f":!{RESULTS.relative_to(REPO)}", f":!{PLOT.relative_to(REPO)}")  # fmt: skip
    dirty = " + uncommitted changes" if changed else ""
    found = []
    for name in PACKAGES:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} (not installed)")
    return f"Python {platform.python_version()}; cora-ci {commit}{dirty}; " + ", ".join(found)


def fmt_value(value: float, unit: str) -> str:
    if unit in ("files", "") and float(value).is_integer():
        text = f"{int(value):,}"
    elif unit == "":
        text = f"{value:.3f}"
    elif abs(value) >= 100:
        text = f"{value:,.0f}"
    elif abs(value) >= 10 or unit in ("ms", "%", "MB/s"):
        text = f"{value:.1f}"
    else:
        text = f"{value:.3f}" if unit == "s" else f"{value:.2f}"
    return f"{text} {unit}".rstrip() if unit not in ("x", "%") else f"{text}{unit}"


def fmt_target(fig: dict[str, Any]) -> str:
    if not fig["target"]:
        return ""
    op, bound = fig["target"]
    unit = fig["unit"]
    value = f"{int(bound):,} {unit}".rstrip() if float(bound).is_integer() else fmt_value(bound, unit)
    src = f" ({fig['target_source']})" if fig["target_source"] else ""
    return f"{op} {value}{src}"


def status(fig: dict[str, Any]) -> str:
    return {True: "pass", False: "**FAIL**", None: ""}[fig["ok"]]


def shown(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def summary(outcomes: list[Outcome], info: dict[str, Any]) -> str:
    """The generated section of RESULTS.md (markdown, between the markers)."""
    quick, corpus_error = info["quick"], info["corpus_error"]
    mode = "`python bench/run.py --quick`" if quick else "`python bench/run.py`"
    total = sum(o.seconds for o in outcomes)
    failed = [o for o in outcomes if not o.ok]
    figs = [f for o in outcomes for f in o.doc.get("figures", [])]
    lines = [
        BEGIN,
        f"## Summary ({mode}), {info['date']}",
        "",
        "Generated by `bench/run.py`: this section is rewritten by every run; the sections after it are "
        "hand-written analyses of earlier runs.",
        "",
        f"- Machine: {info['machine']}; load average {info['load_start']} at the start, "
        f"{info['load_end']} at the end (1, 5, 15 min; other jobs may share the machine: figures under "
        "load are pessimistic).",
        f"- Software: {info['versions']}.",
        "- Corpora (bench/corpora.py, sha256-checked): "
        + ", ".join(f"{c.name} {c.version} ({c.registry})" for c in corpora.CORPORA)
        + "; the 1k and 10k-file repositories are made from their code files (renamed copies).",
        f"- Ran {len(outcomes)} scripts in {total / 60:.1f} min: "
        + (", ".join(f"{o.step.name} {o.seconds:.0f} s" for o in outcomes) or "none")
        + ".",
        f"- Figures: {len(figs)}, of which {sum(f['ok'] is True for f in figs)} pass and "
        f"{sum(f['ok'] is False for f in figs)} fail their target; {sum(f['ok'] is None for f in figs)} "
        "have none.",
    ]
    if corpus_error:
        lines.append(f"- **Corpora could not be fetched**: {corpus_error}")
    if failed:
        why = [f"{o.step.name} ({o.why}, log `{shown(o.log)}`)" for o in failed]
        lines.append("- **Scripts that failed** (no figures from them): " + ", ".join(why) + ".")
    skipped = [f"{o.step.name}: {o.step.quick_skips}" for o in outcomes if quick and o.step.quick_skips]
    skipped += [
        f"{o.step.name}: {x['label']}: {x['why']}" for o in outcomes for x in o.doc.get("skipped", [])
    ]
    if skipped:
        lines += ["- Skipped or reduced in this run:", *(f"  - {x}" for x in skipped)]
    lines += ["", "| script | figure | value | target | status |", "| --- | --- | --- | --- | --- |"]
    for o in outcomes:
        for f in o.doc.get("figures", []):
            if not f.get("cell"):
                lines.append(f"| {o.step.name} | {f['label']} | {fmt_value(f['value'], f['unit'])} | "
                             f"{fmt_target(f)} | {status(f)} |")  # fmt: skip
        if not o.ok:
            lines.append(f"| {o.step.name} | (script failed: {o.why}) | | | **FAIL** |")
    lines += matrices([f for f in figs if f.get("cell")])
    if PLOT.exists():
        lines += ["", f"Quality against index time (per repository and ranker): [{PLOT.name}]({PLOT.name})",
                  "", f"![file NDCG@10 against index seconds]({PLOT.name})"]  # fmt: skip
    return "\n".join([*lines, END])


def matrices(figs: list[dict[str, Any]]) -> list[str]:
    """Figures given a (table, row, column) cell, as one markdown matrix per table."""
    out: list[str] = []
    for title in dict.fromkeys(f["cell"][0] for f in figs):
        mine = [f for f in figs if f["cell"][0] == title]
        cols = list(dict.fromkeys(f["cell"][2] for f in mine))
        out += ["", f"{title[0].upper()}{title[1:]}:", "", "| | " + " | ".join(cols) + " | target | status |",
                "| --- " * (len(cols) + 3) + "|"]  # fmt: skip
        for row in dict.fromkeys(f["cell"][1] for f in mine):
            cells = {f["cell"][2]: f for f in mine if f["cell"][1] == row}
            judged = [f for f in cells.values() if f["target"]]
            values = [fmt_value(cells[c]["value"], cells[c]["unit"]) if c in cells else "" for c in cols]
            said = {fmt_target(f) for f in judged}
            if len(said) == 1 and len(judged) == len(cells):  # one target for the whole row
                target = said.pop()
            else:
                target = "; ".join(f"{f['cell'][2]} {fmt_target(f)}" for f in judged)
            verdict = "**FAIL**" if any(f["ok"] is False for f in judged) else "pass" if judged else ""
            out.append(f"| {row} | " + " | ".join(values) + f" | {target} | {verdict} |")
    return out


def write_results(text: str, path: Path) -> None:
    """Replace the generated section, or insert it after the title line, keeping everything else."""
    old = path.read_text() if path.exists() else "# Benchmark results\n"
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        new = head + text + rest.split(END, 1)[1]
    else:
        title, _, body = old.partition("\n")
        new = f"{title}\n\n{text}\n{body}"
    path.write_text(new)


# ----------------------------------------------------------------------------- the plot


RANKER_STYLE = {  # ranker -> (marker, colour)
    "baseline: 40-line windows, BM25": ("x", "tab:gray"),
    "BM25 alone": ("s", "tab:blue"),
    "vectors alone": ("^", "tab:orange"),
    "fusion (BM25 + vectors)": ("D", "tab:purple"),
    "full ranking": ("o", "tab:green"),
}


def plot(points: list[dict[str, Any]], path: Path, quick: bool) -> str:
    """File NDCG@10 against index seconds, one point per repository and ranker; '' or why not."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install -e '.[bench]')"
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    for ranker, (marker, colour) in RANKER_STYLE.items():
        mine = [p for p in points if p["ranker"] == ranker]
        if mine:
            ax.scatter([max(p["index_s"], 1e-3) for p in mine], [p["ndcg10"] for p in mine],
                       marker=marker, color=colour, label=ranker, s=40)  # fmt: skip
    for p in points:
        if p["ranker"] == "full ranking":
            ax.annotate(p["repo"], (max(p["index_s"], 1e-3), p["ndcg10"]), fontsize=7,
                        xytext=(4, -3), textcoords="offset points")  # fmt: skip
    ax.axhline(0.83, color="tab:red", linestyle=":", linewidth=1, label="0.83 (issue 5 reference)")
    ax.set_xscale("log")
    ax.set_xlabel("index seconds (baseline: 40-line windows; BM25 alone: bundle build minus embedding)")
    ax.set_ylabel("file NDCG@10, all queries")
    ax.set_title(f"Retrieval quality vs index time, bench/quality.py{' --quick' if quick else ''}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
    return ""


# ----------------------------------------------------------------------------- main


def run_all(args: argparse.Namespace) -> tuple[list[Outcome], dict[str, Any]]:
    """Every selected script, then what the summary says about the run (saved for `--render`)."""
    now = datetime.datetime.now(datetime.UTC)
    info: dict[str, Any] = {"quick": args.quick, "date": f"{now:%Y-%m-%d %H:%M} UTC",
                            "load_start": load_average(), "machine": machine()}  # fmt: skip
    print(f"bench/run.py {'--quick' if args.quick else '(full)'}: {info['machine']}; load average "
          f"{info['load_start']}")  # fmt: skip
    dirs, info["corpus_error"] = fetch_corpora()
    print(
        f"corpora: {len(dirs)} verified"
        + (f"; FAILED: {info['corpus_error']}" if info["corpus_error"] else "")
    )
    timeout = 30 * 60 if args.quick else 4 * 3600
    steps = [s for s in STEPS if not args.only or s.name in args.only]
    outcomes = [run_step(s, args.quick, dirs, timeout) for s in steps]
    info["load_end"], info["versions"] = load_average(), versions()
    info["outcomes"] = [{"name": o.step.name, "seconds": o.seconds, "returncode": o.returncode,
                         "timed_out": o.timed_out} for o in outcomes]  # fmt: skip
    (LOGS / "run.json").write_text(json.dumps(info, indent=1) + "\n")
    return outcomes, info


def last_run() -> tuple[list[Outcome], dict[str, Any]]:
    """The last run as saved in the logs: the summary can be rendered again without measuring again."""
    info = json.loads((LOGS / "run.json").read_text())
    by_name = {s.name: s for s in STEPS}
    outcomes = []
    for o in info["outcomes"]:
        out = LOGS / f"{o['name']}.json"
        doc = json.loads(out.read_text()) if o["returncode"] == 0 and out.exists() else {}
        outcomes.append(Outcome(by_name[o["name"]], o["seconds"], o["returncode"], LOGS / f"{o['name']}.log",
                                doc, o["timed_out"]))  # fmt: skip
    return outcomes, info


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few minutes: small corpora, 1k files only")
    ap.add_argument("--only", nargs="+", choices=[s.name for s in STEPS], help="run these scripts only")
    ap.add_argument("--results", type=Path, default=RESULTS, help="the markdown file to update")
    ap.add_argument("--no-write", action="store_true", help="print the summary, write nothing")
    ap.add_argument("--render", action="store_true",
                    help="measure nothing: redo the last run's summary and plot from its logs")  # fmt: skip
    args = ap.parse_args()
    outcomes, info = last_run() if args.render else run_all(args)
    quality = next((o for o in outcomes if o.step.name == "quality" and o.ok), None)
    if quality is not None and not args.no_write:
        why = plot(quality.doc["data"]["points"], PLOT, info["quick"])
        print(f"plot: {PLOT}" if not why else f"plot skipped: {why}")
    text = summary(outcomes, info)
    print("\n" + text)
    if not args.no_write:
        write_results(text, args.results)
        print(f"\nwrote {args.results}")
    return 1 if any(not o.ok for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
