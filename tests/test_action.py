"""The GitHub Action: action.yml and the workflows of docs/action.md against GitHub's schemas, and the
action's `run:` steps executed for real, in a git repository, with the environment GitHub gives.

GitHub's own actions (`uses:` steps) are not run, except the two the second run depends on:
`actions/cache/restore` and `actions/cache/save`, played by a directory that maps keys to saved
bundles, with GitHub's matching rules (exact key, else the newest entry under the first matching
restore-key prefix).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import git
from test_query_cli import NO_NETWORK

ROOT = Path(__file__).resolve().parent.parent
BIN = os.path.dirname(sys.executable)
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


# ---- schemas ---------------------------------------------------------------------------------


def _check_jsonschema(schema: str, files: list[Path], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema with socket creation disabled: its builtin schemas ship in the package."""
    guard = tmp_path / "guard"
    guard.mkdir(exist_ok=True)
    (guard / "sitecustomize.py").write_text(NO_NETWORK)
    exe = shutil.which("check-jsonschema", path=BIN) or "check-jsonschema"
    env = {**os.environ, "PYTHONPATH": str(guard)}
    return subprocess.run([exe, "--builtin-schema", schema, *map(str, files)], capture_output=True,
                          text=True, env=env, check=False)  # fmt: skip


def test_action_yml_matches_the_github_actions_schema(tmp_path: Path) -> None:
    out = _check_jsonschema("vendor.github-actions", [ROOT / "action.yml"], tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_schema_check_fails_on_a_broken_action(tmp_path: Path) -> None:
    """The check has teeth (and still needs no network): a step without `shell` is refused."""
    broken = tmp_path / "action.yml"
    broken.write_text("name: x\ndescription: y\nruns:\n  using: composite\n  steps:\n    - run: echo hi\n")
    out = _check_jsonschema("vendor.github-actions", [broken], tmp_path)
    assert out.returncode == 1 and "network disabled" not in out.stderr, out.stdout + out.stderr


def _readme_workflows() -> list[str]:
    text = "\n".join((ROOT / "docs" / name).read_text() for name in ("action.md", "security.md"))
    blocks = re.findall(r"^```yaml\n(.*?)^```$", text, re.M | re.S)
    return [b for b in blocks if re.search(r"^jobs:", b, re.M)]


def test_readme_workflows_match_the_github_workflows_schema(tmp_path: Path) -> None:
    workflows = _readme_workflows()
    assert len(workflows) >= 3  # publish on push, a PR job that queries, a nightly full rebuild
    files = []
    for i, text in enumerate(workflows):
        files.append(tmp_path / f"workflow{i}.yml")
        files[-1].write_text(text)
    out = _check_jsonschema("vendor.github-workflows", files, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    joined = "\n".join(workflows)
    for needed in (
        "uses: OWNER/cora-ci@REF",
        "cora-ci query",
        "--full",
        "schedule:",
        "pull_request:",
        "push:",
        "shard: [1, 2, 3, 4]",  # the monorepo workflow: a matrix of shards, then a merge
        "cora-ci index --shard ${{ matrix.shard }}/4",
        "actions/download-artifact@v4",
        "pattern: cora-shard-${{ github.sha }}-*",
        "cora-ci merge shards/*/cora-shard.tar.gz --out merged",
    ):
        assert needed in joined, needed


def test_cora_ci_gets_its_own_environment_and_leaves_the_callers_python_alone() -> None:
    steps = ACTION["runs"]["steps"]
    setup = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python@"))
    assert setup["with"]["update-environment"] is False and "cache" not in setup["with"]
    locate = next(s for s in steps if s.get("id") == "venv")
    assert "$RUNNER_TEMP/cora-ci-venv" in locate["run"]  # inside the runner's temp, not the workspace
    cache = next(s for s in steps if s.get("uses", "").startswith("actions/cache@"))
    assert cache["with"]["path"] == "${{ steps.venv.outputs.dir }}"
    install = next(s for s in steps if "pip install" in s.get("run", ""))
    assert install["if"] == "steps.venv-cache.outputs.cache-hit != 'true'"
    assert install["run"].split()[-1] == '"$GITHUB_ACTION_PATH[minilm]"'  # its own checkout, any model
    assert '"$VENV/bin/python" -m pip install' in install["run"]  # into the venv, never the caller's python
    path = next(s for s in steps if s.get("name") == "Put cora-ci on PATH")
    assert 'ln -sf "$VENV/bin/cora-ci"' in path["run"] and "GITHUB_PATH" in path["run"]  # cora-ci alone
    order = [steps.index(x) for x in (setup, locate, cache, install, path)]
    assert order == sorted(order) < [steps.index(next(s for s in steps if s.get("id") == "prepare"))]


# ---- a small evaluator of GitHub expressions -------------------------------------------------

_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _value(term: str, ctx: Mapping[str, Any]) -> Any:
    term = term.strip()
    if term.startswith("'") and term.endswith("'"):
        return term[1:-1].replace("''", "'")
    if term in ("true", "false"):
        return term == "true"
    node: Any = ctx
    for part in term.split("."):
        node = node.get(part, "") if isinstance(node, Mapping) else ""
    return node


def _text(v: Any) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def evaluate(expr: str, ctx: Mapping[str, Any]) -> Any:
    """`a || b`, `a && b`, `a == 'x'`, `a != 'x'`, literals and context paths: what action.yml uses."""
    if "||" in expr:
        return next((v for v in (evaluate(p, ctx) for p in expr.split("||")) if v), "")
    if "&&" in expr:
        return all(evaluate(p, ctx) for p in expr.split("&&"))
    for op in ("==", "!="):
        if op in expr:
            a, b = (_text(_value(t, ctx)).lower() for t in expr.split(op))
            return (a == b) == (op == "==")
    return _value(expr, ctx)


def substitute(text: str, ctx: Mapping[str, Any]) -> str:
    return _EXPR.sub(lambda m: _text(evaluate(m.group(1), ctx)), text)


def test_the_evaluator() -> None:
    ctx = {"inputs": {"a": "true", "b": ""}, "steps": {"s": {"outputs": {"k": "v"}}}}
    assert substitute("x-${{ inputs.a }}-${{ steps.s.outputs.k }}-${{ inputs.none }}", ctx) == "x-true-v-"
    assert evaluate("inputs.a == 'true'", ctx) is True and evaluate("inputs.a != 'true'", ctx) is False
    assert evaluate("inputs.b || 'd'", ctx) == "d" and evaluate("steps.t.outputs.k != 'true'", ctx) is True


def parse_outputs(path: Path) -> dict[str, str]:
    """A `$GITHUB_OUTPUT` file: `k=v` lines and `k<<DELIM` blocks."""
    out: dict[str, str] = {}
    lines = iter(path.read_text().splitlines()) if path.exists() else iter([])
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            body = []
            for nxt in lines:
                if nxt == delim:
                    break
                body.append(nxt)
            out[name] = "\n".join(body)
        else:
            name, _, value = line.partition("=")
            out[name] = value
    return out


# ---- a runner for the composite action -------------------------------------------------------


@dataclass
class Cache:
    """actions/cache as GitHub matches it: exact key, else the newest entry under a restore prefix."""

    root: Path
    saved: list[str] = field(default_factory=list)

    def restore(self, path: Path, key: str, restore_keys: list[str]) -> dict[str, str]:
        hit = key if key in self.saved else None
        for prefix in restore_keys if hit is None else []:
            hit = next((k for k in reversed(self.saved) if k.startswith(prefix)), None)
            if hit:
                break
        if hit is None:
            return {"cache-hit": "false"}
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(self.root / str(self.saved.index(hit)), path, symlinks=True)
        return {"cache-hit": _text(hit == key), "cache-matched-key": hit}

    def save(self, path: Path, key: str) -> None:
        if key not in self.saved:  # GitHub refuses to overwrite a key
            shutil.copytree(path, self.root / str(len(self.saved)), symlinks=True)
            self.saved.append(key)


@dataclass
class Run:
    outputs: dict[str, str]
    summary: str
    log: str
    skipped: list[str]
    uploaded: list[Path]
    artifacts: list[str] = field(default_factory=list)  # the uploaded artifacts' names


def run_action(repo: Path, temp: Path, cache: Cache, inputs: Mapping[str, str], github: Mapping[str, str],
               event: Mapping[str, Any]) -> Run:  # fmt: skip
    """Run action.yml's steps in `repo` (the workspace) as a fresh runner would: no bundle on disk."""
    shutil.rmtree(repo / ".cora", ignore_errors=True)
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir(parents=True)
    (temp / "event.json").write_text(json.dumps(event))
    env = {
        **os.environ,
        "PATH": BIN + os.pathsep + os.environ["PATH"],
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "GITHUB_WORKSPACE": str(repo),
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_EVENT_PATH": str(temp / "event.json"),
        "GITHUB_STEP_SUMMARY": str(temp / "summary.md"),
        "GITHUB_PATH": str(temp / "github-path"),
        "RUNNER_TEMP": str(temp),
        "RUNNER_OS": "Linux",
        **{"GITHUB_" + k.upper(): v for k, v in github.items()},
    }
    for name in ("GITHUB_HEAD_REF", "GITHUB_BASE_REF"):
        env.setdefault(name, "")
    defaults = {k: v.get("default", "") for k, v in ACTION["inputs"].items()}
    ctx: dict[str, Any] = {"github": {**github, "action_path": str(ROOT), "workspace": str(repo)},
                           "runner": {"os": "Linux", "temp": str(temp)}, "env": env, "steps": {}}  # fmt: skip
    ctx["inputs"] = {k: substitute(str(v), ctx) for k, v in defaults.items()} | dict(inputs)
    log, skipped, uploaded, names = [], [], [], []
    for i, step in enumerate(ACTION["runs"]["steps"]):
        sid = step.get("id", f"__{i}")
        if "if" in step and not evaluate(step["if"], ctx):
            ctx["steps"][sid] = {"outputs": {}, "outcome": "skipped", "conclusion": "skipped"}
            continue
        with_ = {k: substitute(str(v), ctx) for k, v in step.get("with", {}).items()}
        outputs: dict[str, str] = {}
        uses = step.get("uses", "")
        if uses.startswith("actions/cache/restore@"):
            keys = [k for k in with_["restore-keys"].splitlines() if k]
            outputs = cache.restore(Path(with_["path"]), with_["key"], keys)
        elif uses.startswith("actions/cache/save@"):
            cache.save(Path(with_["path"]), with_["key"])
        elif uses.startswith("actions/upload-artifact@"):
            uploaded.append(Path(with_["path"]))
            names.append(with_["name"])
        elif uses:  # setup-python, the cache of cora-ci's environment
            skipped.append(step.get("name", uses))
        elif "pip install" in step["run"]:  # installing what is installed: the venv holds this one
            venv = Path(substitute(step["env"]["VENV"], ctx))
            (venv / "bin").mkdir(parents=True, exist_ok=True)
            (venv / "bin" / "cora-ci").symlink_to(Path(BIN) / "cora-ci")
            skipped.append(step["name"])
        else:
            out_file = temp / f"output-{i}"
            step_env = {**env, "GITHUB_OUTPUT": str(out_file)}
            step_env |= {k: substitute(str(v), ctx) for k, v in step.get("env", {}).items()}
            script = temp / f"step-{i}.sh"
            script.write_text(substitute(step["run"], ctx))
            p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=repo,
                               env=step_env, capture_output=True, text=True, check=False)  # fmt: skip
            log.append(p.stdout + p.stderr)
            assert p.returncode == 0, f"step {step.get('name')} failed:\n{p.stdout}{p.stderr}"
            added = (temp / "github-path").read_text().split() if (temp / "github-path").exists() else []
            env["PATH"] = os.pathsep.join([*reversed(added), os.environ["PATH"]])  # as the runner does
            outputs = parse_outputs(out_file)
        ctx["steps"][sid] = {"outputs": outputs, "outcome": "success", "conclusion": "success"}
    action_outputs = {k: substitute(v["value"], ctx) for k, v in ACTION["outputs"].items()}
    summary = (temp / "summary.md").read_text() if (temp / "summary.md").exists() else ""
    return Run(action_outputs, summary, "\n".join(log), skipped, uploaded, names)


# ---- the action, run ---------------------------------------------------------------------------

FILES = {
    "src/shop.py": '''\
        """A tiny shop."""


        class Cart:
            """Items a customer is about to buy."""

            def add(self, item, qty=1):
                """Put an item in the cart."""
                self.items = getattr(self, "items", {})
                self.items[item] = self.items.get(item, 0) + qty

            def total(self, prices):
                """Sum of the prices of everything in the cart."""
                return sum(prices[i] * q for i, q in self.items.items())


        def checkout(cart, prices):
            """Charge the customer for the cart."""
            return round(cart.total(prices), 2)
        ''',
    "web/app.ts": "export function render(cart: string[]): string {\n  return cart.join(', ');\n}\n",
    "README.md": "# Shop\n\nA demo shop with a cart and a checkout.\n",
}


def _today() -> str:
    """The day a cache key rolls over on (UTC)."""
    return time.strftime("%Y-%m-%d", time.gmtime())


def _push(sha: str, branch: str = "main") -> dict[str, str]:
    return {"sha": sha, "ref": f"refs/heads/{branch}", "ref_name": branch, "event_name": "push",
            "repository": "acme/shop"}  # fmt: skip


def _shop(make_repo: Callable[[dict[str, str]], Path], tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Cache]:  # fmt: skip
    """The shop's repository, and an empty actions cache (cora-ci's own cache kept private)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return make_repo({k: textwrap.dedent(v) for k, v in FILES.items()}), Cache(tmp_path / "actions-cache")


def test_the_action_builds_then_updates_from_the_restored_bundle(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, cache = _shop(make_repo, tmp_path, monkeypatch)
    temp = tmp_path / "runner-temp"
    event = {"repository": {"default_branch": "main"}}

    # 1. A push to main on a fresh runner: nothing to restore, a full build, the archive uploaded.
    sha1 = git(repo, "rev-parse", "HEAD").strip()
    first = run_action(repo, temp, cache, {}, _push(sha1), event)
    o = first.outputs
    assert o["incremental"] == "false" and o["files"] == "3" and int(o["chunks"]) >= 5
    assert 0 < int(o["embedded"]) <= int(o["chunks"])  # the default model: real vectors
    bundle, archive = Path(o["bundle-path"]), Path(o["archive-path"])
    assert bundle == repo / ".cora" / "index" and archive.is_file() and first.uploaded == [archive]
    assert archive.is_relative_to(temp) and archive.name == "cora-index.tar.gz"
    assert o["bundle-id"] == (bundle / "manifest.sha256").read_text().split()[0]
    info = json.loads(subprocess.run([f"{BIN}/cora-ci", "info", str(archive), "--format", "json"],
                                     capture_output=True, text=True, check=True).stdout)  # fmt: skip
    assert info["stats"]["chunks"] == int(o["chunks"]) and info["source"]["commit"] == sha1
    assert "| build | full (no previous bundle) |" in first.summary
    for row in ("| files | 3 (0 skipped) |", f"| chunks | {o['chunks']} (", "| languages | ", "python 1",
                "typescript 1", "| time | ", f"`{o['bundle-id']}`"):  # fmt: skip
        assert row in first.summary, (row, first.summary)
    assert "indexed " in first.log and "packed " in first.log  # the log reads like `cora-ci index`
    assert "::group::cora-ci index\n" in first.log and "::endgroup::\n" in first.log  # progress folded
    assert first.skipped == ["Set up Python", "Restore cora-ci's environment", "Install cora-ci"]
    assert len(cache.saved) == 1 and cache.saved[0].endswith(f"-main-{_today()}")

    # 2. A commit that changes no indexed file, on a new runner: restored by prefix, nothing embedded.
    git(repo, "commit", "-q", "--allow-empty", "-m", "empty")
    sha2 = git(repo, "rev-parse", "HEAD").strip()
    second = run_action(repo, temp, cache, {}, _push(sha2), event)
    o2 = second.outputs
    assert o2["incremental"] == "true" and o2["embedded"] == "0" and o2["chunks"] == o["chunks"]
    assert len(cache.saved) == 1  # the day's entry of the branch was restored: nothing new saved
    assert "| build | incremental: 0 file(s) re-chunked, 0 removed, the rest reused |" in second.summary
    assert json.loads(subprocess.run([f"{BIN}/cora-ci", "info", o2["archive-path"], "--format", "json"],
                      capture_output=True, text=True, check=True).stdout)["source"]["commit"] == sha2  # fmt: skip

    # 3. A pull request from a new branch changing one method: it starts from main's bundle.
    git(repo, "checkout", "-q", "-b", "feature")
    shop = repo / "src" / "shop.py"
    shop.write_text(shop.read_text().replace("return round(cart.total(prices), 2)",
                                             "return round(cart.total(prices) * 1.2, 2)  # with VAT"))  # fmt: skip
    git(repo, "commit", "-qam", "vat")
    sha3 = git(repo, "rev-parse", "HEAD").strip()
    pr = {"sha": sha3, "ref": "refs/pull/7/merge", "ref_name": "7/merge", "head_ref": "feature",
          "base_ref": "main", "event_name": "pull_request", "repository": "acme/shop"}  # fmt: skip
    third = run_action(repo, temp, cache, {"upload": "false", "diff": "true"}, pr, event)
    o3 = third.outputs
    assert o3["incremental"] == "true" and 1 <= int(o3["embedded"]) <= 2, o3
    assert "1 file(s) re-chunked" in third.summary and third.uploaded == []
    # asked for, the changed symbols since the restored bundle (main's) are in the job summary
    assert "### Changed symbols since the previous bundle" in third.summary
    assert "| modified (body) | `src/shop.py::checkout` | method | src/shop.py:17-19 |" in third.summary
    assert "Changed symbols" not in second.summary  # not asked for
    assert cache.saved[-1].endswith(f"-feature-{_today()}") and len(cache.saved) == 2
    q = subprocess.run([f"{BIN}/cora-ci", "query", "charge the customer with VAT", "--bundle", o3["archive-path"],
                        "--format", "json", "-k", "3"], capture_output=True, text=True, check=True, cwd=tmp_path)  # fmt: skip
    hits = json.loads(q.stdout)["results"]
    assert any(r["anchor"] == "src/shop.py::checkout" and "1.2" in r["text"] for r in hits), hits

    # 4. The nightly full rebuild: no restore, --full, everything embedded again.
    nightly = run_action(
        repo, temp, cache, {"incremental": "false", "upload": "false"}, _push(sha3, "feature"), event
    )
    o4 = nightly.outputs
    assert o4["incremental"] == "false" and "| build | full (--full) |" in nightly.summary
    assert o4["chunks"] == o3["chunks"] and int(o4["embedded"]) > int(o3["embedded"])


def test_the_action_builds_shards_that_merge_into_the_full_bundle(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, cache = _shop(make_repo, tmp_path, monkeypatch)
    event = {"repository": {"default_branch": "main"}}
    sha = git(repo, "rev-parse", "HEAD").strip()
    runs = []
    for i in (1, 2):  # two jobs of a matrix, each on a fresh runner
        inputs = {"shard": str(i), "shards": "2", "model": "none"}
        run = run_action(repo, tmp_path / f"temp{i}", cache, inputs, _push(sha), event)
        o = run.outputs
        assert o["artifact-name"] == f"cora-index-{sha}-shard-{i}-of-2" and run.artifacts == [
            o["artifact-name"]
        ]
        assert run.uploaded == [Path(o["archive-path"])] and o["incremental"] == "false"
        assert (
            f"shard {i}/2: " in run.log and f"### cora-ci index of rev {sha[:12]}, shard {i}/2" in run.summary
        )
        runs.append(run)
    assert sum(int(r.outputs["files"]) for r in runs) == 3
    assert len(cache.saved) == 2 and cache.saved[0] != cache.saved[1]  # one cache entry per shard
    merged, full = tmp_path / "merged", tmp_path / "full"
    archives = [r.outputs["archive-path"] for r in runs]
    done = subprocess.run([f"{BIN}/cora-ci", "merge", *archives, "--out", str(merged)], capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    subprocess.run(
        [f"{BIN}/cora-ci", "index", str(repo), "--out", str(full), "--model", "none", "-q"], check=True
    )
    assert (merged / "manifest.msgpack").read_bytes() == (full / "manifest.msgpack").read_bytes()
    # The next run of shard 1 restores shard 1's own bundle and updates it.
    git(repo, "commit", "-q", "--allow-empty", "-m", "next")
    sha2 = git(repo, "rev-parse", "HEAD").strip()
    again = run_action(repo, tmp_path / "temp1", cache, {"shard": "1", "shards": "2", "model": "none"},
                       _push(sha2), event)  # fmt: skip
    assert again.outputs["incremental"] == "true" and again.outputs["files"] == runs[0].outputs["files"]


def test_shard_inputs_come_in_pairs(tmp_path: Path) -> None:
    from cora_ci.ci import shard_input
    from cora_ci.errors import CoraError
    from cora_ci.files.shard import ShardSpec

    assert shard_input("", "") is None and shard_input("2", "3") == ShardSpec(2, 3)
    for bad in (("2", ""), ("", "3"), ("4", "3")):
        with pytest.raises(CoraError) as e:
            shard_input(*bad)
        assert e.value.code == "CORA-CFG-002"


def test_paths_and_cache_keys_follow_the_inputs(tmp_path: Path) -> None:
    from cora_ci.ci import plan

    env = {"GITHUB_WORKSPACE": str(tmp_path), "GITHUB_SHA": "abc", "GITHUB_REF_NAME": "main",
           "RUNNER_TEMP": str(tmp_path / "t"), "RUNNER_OS": "Linux"}  # fmt: skip
    p = plan(env, "sub", "", "cora-index-abc", "none", "")
    assert p.repo == tmp_path / "sub" and p.bundle_dir == tmp_path / "sub" / ".cora" / "index"
    assert p.archive == tmp_path / "t" / "cora-ci" / "cora-index-abc" / "cora-index.tar.gz"
    assert p.cache_key.endswith(f"-main-{_today()}") and p.restore_keys == (p.cache_key[: -len(_today())],)
    other = plan(env, "sub", "out/idx", "a/b c", "default", "")
    assert other.bundle_dir == tmp_path / "out" / "idx" and other.archive.parent.name == "a-b-c"
    assert other.cache_key != p.cache_key  # another model never restores this one's bundle


def test_outside_github_actions_the_steps_say_what_is_missing(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    out = subprocess.run([f"{BIN}/cora-ci", "ci", "prepare"], capture_output=True, text=True, env=env,
                         cwd=tmp_path, check=False)  # fmt: skip
    assert out.returncode == 4 and out.stderr.startswith("error: CORA-CI-001: $GITHUB_WORKSPACE is not set")
    assert out.stderr.count("\n") == 1


def test_multiline_outputs_round_trip(tmp_path: Path) -> None:
    from cora_ci.ci import write_outputs

    f = tmp_path / "out"
    write_outputs(f, {"a": "1", "keys": "x-\ny-", "b": "two=2"})
    assert parse_outputs(f) == {"a": "1", "keys": "x-\ny-", "b": "two=2"}


def test_what_left_the_bundle_is_annotated_on_its_file_and_line() -> None:
    from cora_ci.build.common import Note
    from cora_ci.ci import annotation_lines

    notes = [Note("a,b:c.env", None, "CORA-SEC-001", "conventional secrets file skipped"),
             Note("src/k.py", 3, "CORA-SEC-002", "aws-access-key-id on line 3 (fingerprint 0123456789ab): redacted"),
             Note("src/x.py", 1, "CORA-CHK-002", "1 parse error(s)\nstructure may be partial")]  # fmt: skip
    assert annotation_lines(notes) == [
        "::warning file=a%2Cb%3Ac.env,title=CORA-SEC-001::conventional secrets file skipped",
        "::warning file=src/k.py,line=3,title=CORA-SEC-002::aws-access-key-id on line 3 (fingerprint 0123456789ab): redacted",
    ]  # a parse error is in the summary, not an annotation
    many = [Note(f"f{i}.bin", None, "CORA-CHK-003", "binary file skipped") for i in range(60)]
    lines = annotation_lines(many)
    assert len(lines) == 51 and lines[-1] == "::notice::10 more left out: cora-ci info --diagnostics"


WORKFLOW = ROOT / ".github" / "workflows" / "cora-index.yml"


def test_this_repository_runs_its_own_action(tmp_path: Path) -> None:
    """The workflow in .github/ is valid, uses this checkout's action with inputs it has."""
    out = _check_jsonschema("vendor.github-workflows", [WORKFLOW], tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    flow = yaml.safe_load(WORKFLOW.read_text())
    assert set(flow[True]) == {"push", "pull_request"}  # YAML reads the `on` key as true
    step = next(s for s in flow["jobs"]["index"]["steps"] if s.get("uses") == "./")
    assert set(step["with"]) <= set(ACTION["inputs"])


def test_the_workflow_s_pull_request_run_lists_the_changed_symbols(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The action run as the workflow calls it, on a push and then on a pull request."""
    repo, cache = _shop(make_repo, tmp_path, monkeypatch)
    step = next(
        s for s in yaml.safe_load(WORKFLOW.read_text())["jobs"]["index"]["steps"] if s.get("uses") == "./"
    )
    event = {"repository": {"default_branch": "main"}}

    def inputs(event_name: str) -> dict[str, str]:
        return {
            k: substitute(str(v), {"github": {"event_name": event_name}}) for k, v in step["with"].items()
        }

    push = run_action(
        repo, tmp_path / "t1", cache, inputs("push"), _push(git(repo, "rev-parse", "HEAD").strip()), event
    )
    assert push.uploaded and "Changed symbols" not in push.summary
    git(repo, "checkout", "-q", "-b", "feature")
    shop = repo / "src" / "shop.py"
    shop.write_text(
        shop.read_text().replace("return round(cart.total(prices), 2)", "return cart.total(prices)")
    )
    git(repo, "commit", "-qam", "no rounding")
    sha = git(repo, "rev-parse", "HEAD").strip()
    pr = {"sha": sha, "ref": "refs/pull/8/merge", "ref_name": "8/merge", "head_ref": "feature",
          "base_ref": "main", "event_name": "pull_request", "repository": "acme/shop"}  # fmt: skip
    run = run_action(repo, tmp_path / "t2", cache, inputs("pull_request"), pr, event)
    assert not run.uploaded and "| modified (body) | `src/shop.py::checkout` |" in run.summary
