"""A commit as a user makes it, through the real pre-commit framework: what cora-ci's hooks add.

Repository: bench/corpora.py's synthetic repository (1,000 files by default, the default model),
set up as docs/hooks.md says: `.pre-commit-config.yaml` with `default_install_hook_types` (all five),
`default_stages: [pre-commit]`, `cora-ci-sync` from a snapshot of this checkout (committed into a
scratch repository, as `pre-commit try-repo` does), `pre-commit install`; `--with-index` adds the
pre-commit hook `cora-ci-index` (the set-up that blocks on failure, two cora-ci processes a commit).
Each commit is timed three ways, alternating: with cora-ci's hooks; in a clone whose only hook is
`true` at the same stages (pre-commit's own cost); with no hooks (`core.hooksPath` empty).
What cora-ci adds is the first minus the second; what a user notices is the first minus the third.
The sync updates the bundle in a process of its own after the commit returns (docs/hooks.md), so
two more figures say what that hides: when the bundle is current (the background sync's lock
released, from the commit's start), and a commit with `CORA_HOOK_WAIT=1` (the update while git
waits, as before the sync went to the background).

Commits: 5 edited Python files (a function appended to each), and one that touches nothing indexed
(a file under a directory the config excludes). Also: the lines a successful commit prints, and
the size of the environment pre-commit installs for the hooks.
Targets (issue 19): 5 files <= 0.5 s, nothing indexed <= 0.2 s, at most one line per hook.

    python bench/hook_speed.py [--files 1000] [--model default] [--runs 5] [--json FILE]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import corpora
from benchlib import Figures, cpu_model, json_option, load_average, measured_run

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
FIVE_TARGET, NOOP_TARGET = 0.5, 0.2
ALL_TYPES = "[pre-commit, post-checkout, post-merge, post-rewrite, post-commit]"


def run(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"failed: {' '.join(args)}\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return out


def snapshot(dest: Path, env: dict[str, str]) -> str:
    """This checkout's working tree committed into `dest`: the hook repository pre-commit clones."""
    listed = run(REPO, env, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file() and not name.startswith("bench/.cache/"):
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)
    run(dest, env, "git", "init", "-q")
    run(dest, env, "git", "add", "-A")
    run(dest, env, "git", "commit", "-qm", "cora-ci under test")
    return run(dest, env, "git", "rev-parse", "HEAD").stdout.strip()


def configs(hook_repo: Path, rev: str, with_index: bool) -> tuple[str, str]:
    """docs/hooks.md's set-up, and the same stages with a hook that does nothing."""
    head = f"default_install_hook_types: {ALL_TYPES}\ndefault_stages: [pre-commit]\nrepos:\n"
    index = "  - id: cora-ci-index\n" if with_index else ""
    cora = f"- repo: {hook_repo}\n  rev: {rev}\n  hooks:\n{index}  - id: cora-ci-sync\n"
    stages = "[pre-commit, post-commit]" if with_index else "[post-commit]"
    true = ("- repo: local\n  hooks:\n  - id: nothing\n    name: nothing\n    entry: 'true'\n"
            "    language: system\n    always_run: true\n    pass_filenames: false\n"
            f"    stages: {stages}\n")  # fmt: skip
    return head + cora, head + true


def edit(repo: Path, env: dict[str, str], k: int, tag: str) -> None:
    files = sorted(run(repo, env, "git", "ls-files", "*.py").stdout.split())
    for i, name in enumerate(files[:: max(1, len(files) // k)][:k]):
        with open(repo / name, "a") as f:
            f.write(f"\n\ndef hook_bench_{tag}_{i}(values):\n    return [v * {i} for v in values]\n")
    run(repo, env, "git", "add", "-A")


def touch_excluded(repo: Path, env: dict[str, str], tag: str) -> None:
    (repo / "notes").mkdir(exist_ok=True)
    with open(repo / "notes" / "log.txt", "a") as f:
        f.write(f"{tag}\n")
    run(repo, env, "git", "add", "-A")


def commit(repo: Path, env: dict[str, str], *extra: str) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system of git and every process under it: a figure that
    another job on the machine inflates much less) and the output of one `git commit`."""
    t, before = time.perf_counter(), os.times()
    out = run(repo, env, "git", *extra, "commit", "-qm", "bench")
    wall, after = time.perf_counter() - t, os.times()
    cpu = after.children_user - before.children_user + after.children_system - before.children_system
    return wall, cpu, out.stdout + out.stderr


def settled(repo: Path) -> float:
    """Seconds until the background sync a commit started is done (its lock, handed over before the
    hook returned, released)."""
    from cora_ci.lock import acquire

    t = time.perf_counter()
    os.close(acquire(repo / ".cora" / "index", wait=300))
    return time.perf_counter() - t


def env_size(home: Path) -> float:
    """MB on disk of the virtualenvs pre-commit made for hook repositories (cora-ci's only here)."""
    total = 0
    for venv in home.glob("repo*/py_env-*"):
        for root, _, names in os.walk(venv):
            for n in names:
                p = os.path.join(root, n)
                if not os.path.islink(p):
                    total += os.lstat(p).st_size
    return total / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--model", default="default")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--with-index", action="store_true", help="the pre-commit hook too (two processes)")
    json_option(ap)
    args = ap.parse_args()
    now = datetime.datetime.now(datetime.UTC)
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{now:%Y-%m-%dT%H:%M}Z, load average {load_average()}")  # fmt: skip
    fig = Figures("hook_speed")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        gitconfig = tmp / "gitconfig"
        gitconfig.write_text("[user]\n\temail = b@e.x\n\tname = b\n[init]\n\tdefaultBranch = main\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT", "CORA_"))}
        env.update(GIT_CONFIG_GLOBAL=str(gitconfig), GIT_CONFIG_NOSYSTEM="1",
                   XDG_CACHE_HOME=str(tmp / "cache"), PRE_COMMIT_HOME=str(tmp / "pre-commit"),
                   PRE_COMMIT_COLOR="never",
                   PATH=f"{BIN}{os.pathsep}{env['PATH']}")  # fmt: skip
        hook_repo = tmp / "hook-repo"
        hook_repo.mkdir()
        rev = snapshot(hook_repo, env)
        repo = corpora.synthetic_repo(tmp / "r", args.files)
        (repo / ".cora.toml").write_text(f'model = "{args.model}"\nexclude = ["notes/"]\n')
        floor = tmp / "floor"
        cora_cfg, true_cfg = configs(hook_repo, rev, args.with_index)
        (repo / ".pre-commit-config.yaml").write_text(cora_cfg)
        run(repo, env, "git", "add", "-A")
        run(repo, env, "git", "commit", "-qm", "set-up")
        run(REPO, env, "git", "clone", "-q", str(repo), str(floor))
        (floor / ".pre-commit-config.yaml").write_text(true_cfg)
        run(floor, env, "git", "commit", "-qam", "set-up")
        t = time.perf_counter()
        run(repo, env, "pre-commit", "install")
        run(repo, env, "pre-commit", "install-hooks")
        print(f"pre-commit installed cora-ci's hook environment in {time.perf_counter() - t:.0f} s")
        run(floor, env, "pre-commit", "install")
        first = measured_run(["cora-ci", "index", "-q"], repo, env)
        print(f"first build of {args.files:,} files ({args.model} model): {first.wall:.0f} s")
        size = env_size(tmp / "pre-commit")
        print(f"hook environment: {size:.0f} MB")
        fig.add("hook.env_mb", "hook environment pre-commit installs", size, "MB")
        lines: list[str] = []
        cases = (("5 files", lambda r, tag: edit(r, env, 5, tag), FIVE_TARGET),
                 ("nothing indexed", lambda r, tag: touch_excluded(r, env, tag), NOOP_TARGET))  # fmt: skip
        for case, change, target in cases:
            keys = ("hooked", "true", "none", "current", "waited")
            times: dict[str, list[tuple[float, float]]] = {k: [] for k in keys}
            for i in range(args.runs + 1):  # the first round warms caches: not counted
                change(repo, f"{case[0]}{i}")
                w, c, said = commit(repo, env)
                cur = w + settled(repo)
                change(floor, f"{case[0]}{i}")
                f, fc, _ = commit(floor, env)
                change(repo, f"{case[0]}{i}w")
                ww, wc, _ = commit(repo, {**env, "CORA_HOOK_WAIT": "1"})
                change(repo, f"{case[0]}{i}b")
                n, nc, _ = commit(repo, env, "-c", "core.hooksPath=/dev/null")
                run(repo, env, "cora-ci", "index", "-q")  # the bundle catches up with the unhooked commit
                if i:
                    for key, v in (("hooked", (w, c)), ("true", (f, fc)), ("none", (n, nc)),
                                   ("current", (cur, 0.0)), ("waited", (ww, wc))):  # fmt: skip
                        times[key].append(v)
                    lines = said.strip().splitlines()
            (w, c), (f, fc), (n, nc), (cur, _), (ww, wc) = (
                (statistics.median(v[0] for v in t), statistics.median(v[1] for v in t))
                for t in times.values()
            )
            print(f"\n{case}, median of {args.runs}: commit with cora-ci's hooks {w:.3f} s ({c:.3f} s CPU), "
                  f"with a `true` hook {f:.3f} s ({fc:.3f}), without hooks {n:.3f} s ({nc:.3f})")  # fmt: skip
            print(f"  cora-ci adds {w - f:.3f} s, {c - fc:.3f} s CPU (target <= {target} s); "
                  f"a user notices {w - n:.3f} s")  # fmt: skip
            print(f"  the bundle is current {cur - f:.3f} s after a `true` hook's commit would end; "
                  f"with CORA_HOOK_WAIT=1 cora-ci adds {ww - f:.3f} s, {wc - fc:.3f} s CPU")  # fmt: skip
            print("  printed:\n    " + "\n    ".join(lines))
            key = case.split()[0]
            fig.add(f"hook.{key}.added", f"commit, {case}: time cora-ci's hooks add ({args.files:,} files)",
                    w - f, "s", ("<=", target), "issue 19")  # fmt: skip
            fig.add(f"hook.{key}.added_cpu", f"commit, {case}: CPU seconds cora-ci's hooks add", c - fc, "s")
            fig.add(f"hook.{key}.current", f"commit, {case}: bundle current (background sync done), beyond "
                    "a `true` hook's commit", cur - f, "s")  # fmt: skip
            fig.add(f"hook.{key}.waited", f"commit, {case}: time cora-ci's hooks add with CORA_HOOK_WAIT=1",
                    ww - f, "s")  # fmt: skip
            fig.add(f"hook.{key}.noticed", f"commit, {case}: with hooks minus without ({args.files:,} files)",
                    w - n, "s")  # fmt: skip
            fig.add(
                f"hook.{key}.framework", f"commit, {case}: pre-commit's own cost (a `true` hook)", f - n, "s"
            )
            ours = [ln for ln in lines if "cora-ci" in ln]
            fig.add(f"hook.{key}.lines", f"lines printed by a commit, {case} (cora-ci's)", len(ours), "",
                    ("<=", 2), "issue 19: one per hook")  # fmt: skip
    print(f"\nload average at the end {load_average()}")
    fig.write(args.json)


if __name__ == "__main__":
    main()
