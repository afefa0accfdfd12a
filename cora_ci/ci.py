"""The GitHub Action's logic (`action.yml`), kept here so it is typed and tested rather than bash.

The action runs two steps of ours around GitHub's cache: `cora-ci ci prepare` decides where the
bundle and the archive go and which cache keys to use (the branch's own bundle first, then the
default branch's), then, after the cache is restored there, `cora-ci ci build` indexes (an update
when a bundle was restored, since `cora-ci index` updates whatever bundle it finds), packs the
archive, and writes the step's outputs and the job summary. Everything comes from the environment
GitHub provides, so a test can run both steps with a fabricated one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from cora_ci.build import Progress, Summary, build
from cora_ci.build.common import Note
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.archive import Packed, write_archive
from cora_ci.errors import LEFT_OUT, CoraError
from cora_ci.files.shard import ShardSpec, parse_spec
from cora_ci.render.summary import languages

ARCHIVE_NAME = "cora-index.tar.gz"
_KEY_VERSION = "v1"  # bump when a cached bundle must no longer be restored


@dataclass(frozen=True)
class Plan:
    repo: Path
    bundle_dir: Path
    archive: Path
    cache_key: str
    restore_keys: tuple[str, ...]
    artifact_name: str
    shard: ShardSpec | None = None

    def outputs(self) -> dict[str, str]:
        return {
            "repo": str(self.repo),
            "bundle-dir": str(self.bundle_dir),
            "archive": str(self.archive),
            "cache-key": self.cache_key,
            "restore-keys": "\n".join(self.restore_keys),
            "artifact-name": self.artifact_name,
            "shard": str(self.shard or ""),
        }


@dataclass(frozen=True)
class Outcome:
    summary: Summary
    incremental: bool
    packed: Packed
    bundle_id: str
    changes: str | None = None  # the Markdown of `cora-ci diff --impact` against the previous bundle


def _need(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "")
    if not value:
        raise CoraError("CORA-CI-001", f"${name} is not set", "run this inside GitHub Actions (or set it)")
    return value


def default_branch(env: Mapping[str, str]) -> str:
    """The repository's default branch, from the event payload GitHub writes ("" if unknown)."""
    path = env.get("GITHUB_EVENT_PATH", "")
    try:
        event = json.loads(Path(path).read_text()) if path else {}
        return str(event.get("repository", {}).get("default_branch") or "")
    except (OSError, ValueError, AttributeError):
        return ""


def shard_input(shard: str, shards: str) -> ShardSpec | None:
    """The action's `shard` and `shards` inputs (I and N): both, or neither for a full build."""
    if not shard and not shards:
        return None
    if not shard or not shards:
        raise CoraError("CORA-CFG-002", "inputs shard and shards: give both (I and N) or neither")
    return parse_spec(f"{shard}/{shards}")


def plan(env: Mapping[str, str], path: str, bundle_dir: str, artifact_name: str, model: str,
         config: str, shard: ShardSpec | None = None) -> Plan:  # fmt: skip
    """Paths (relative ones are taken from the workspace, as GitHub's own actions do) and cache keys.

    The key ends with the branch and the day (UTC): a branch saves one bundle a day, not one per
    push (GitHub's cache entries cannot be overwritten, and one per commit piles up); a later push
    that day restores it by its exact key and updates from it. The restore keys are the branch's
    prefix, then the default branch's, so a new branch or a PR starts from the nearest bundle
    GitHub lets it read. Model, config, paths and the shard are part of the prefix: a
    bundle built with another model, or another shard's, would be rebuilt in full anyway. A
    shard's artifact is `<artifact-name>-shard-I-of-N`, so the jobs of a matrix never collide.
    """
    workspace = Path(_need(env, "GITHUB_WORKSPACE"))
    repo = workspace / (path or ".")
    out = workspace / bundle_dir if bundle_dir else repo / ".cora" / "index"
    temp = Path(env.get("RUNNER_TEMP") or workspace / ".cora")
    if shard is not None:
        artifact_name = f"{artifact_name or 'cora-index'}-shard-{shard.index}-of-{shard.count}"
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", artifact_name or "cora-index").strip("-") or "cora-index"
    archive = temp / "cora-ci" / slug / ARCHIVE_NAME
    fields = (path, bundle_dir, model, config, *([str(shard)] if shard else []))
    scope = hashlib.sha256("\0".join(fields).encode()).hexdigest()[:8]
    prefix = f"cora-index-{_KEY_VERSION}-{env.get('RUNNER_OS', 'os')}-{scope}-"
    branch = env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME") or "detached"
    restore = [f"{prefix}{branch}-"]
    if (main := default_branch(env)) and main != branch:
        restore.append(f"{prefix}{main}-")
    _need(env, "GITHUB_SHA")  # inside a workflow run
    key = f"{prefix}{branch}-{time.strftime('%Y-%m-%d', time.gmtime())}"
    return Plan(repo.resolve(), out.absolute(), archive.absolute(), key, tuple(restore), artifact_name, shard)


def run_build(repo: Path, bundle_dir: Path, archive: Path, model: str | None, config: Path | None,
              full: bool, progress: Progress, shard: ShardSpec | None = None,
              diff: bool = False) -> Outcome:  # fmt: skip
    """Index `repo` (or shard `shard` of it) into `bundle_dir` (an update when a previous bundle is
    there), then pack it; with `diff`, also the symbols changed since the previous bundle."""
    existed = (bundle_dir / mf.MANIFEST).is_file()

    def run() -> Summary:
        return build(
            repo, bundle_dir, model=model, config_file=config, full=full, progress=progress, shard=shard
        )

    changes = None
    if diff and existed:
        with tempfile.TemporaryDirectory(prefix=".cora-previous-", dir=bundle_dir.parent) as tmp:
            previous = Path(tmp) / "bundle"
            # the update swaps a new directory in and never rewrites a file of the old one: hard
            # links keep the previous bundle without copying its bytes
            shutil.copytree(bundle_dir, previous, copy_function=os.link)
            s = run()
            changes = _changes(previous, bundle_dir)
    else:
        s = run()
    packed = write_archive(bundle_dir, archive)
    bundle_id = (bundle_dir / mf.MANIFEST_SUM).read_text().split()[0]
    return Outcome(s, existed and not full and not s.rebuilt, packed, bundle_id, changes)


def _changes(old: Path, new: Path) -> str:
    """The changed symbols and what references them, as Markdown for the job summary."""
    from cora_ci.bundle import open_bundle
    from cora_ci.diff import diff_bundles
    from cora_ci.diff.formats import as_markdown
    from cora_ci.diff.impact import impact

    a, b = open_bundle(old), open_bundle(new)
    d = diff_bundles(a, b)
    return as_markdown(
        d, {c.anchor: impact(b, c, 3) for c in d.changes}, "Changed symbols since the previous bundle"
    )


def outcome_outputs(o: Outcome) -> dict[str, str]:
    s = o.summary
    return {
        "bundle-path": str(s.out),
        "archive-path": str(o.packed.path),
        "archive-sha256": o.packed.sha256,
        "bundle-id": o.bundle_id,
        "files": str(s.files),
        "chunks": str(s.chunks),
        "embedded": str(s.embedded),
        "incremental": "true" if o.incremental else "false",
    }


def job_summary(o: Outcome) -> str:
    """A short Markdown table for `$GITHUB_STEP_SUMMARY`."""
    s = o.summary
    if o.incremental:
        how = f"incremental: {s.rechunked} file(s) re-chunked, {s.removed} removed, the rest reused"
    else:
        how = f"full ({s.rebuilt or 'no previous bundle'})"
    rows = [
        ("build", how),
        ("files", f"{s.files} ({s.skipped} skipped)"),
        ("chunks", f"{s.chunks} ({s.embedded} embedded with {s.model})"),
        ("languages", languages(s) or "none"),
        ("time", f"{s.seconds:.1f} s"),
        ("archive", f"{o.packed.bytes / 1e6:.2f} MB, sha256 `{o.packed.sha256[:16]}`"),
        ("bundle id", f"`{o.bundle_id}`"),
    ]
    body = "\n".join(f"| {k} | {v.replace('|', '&#124;')} |" for k, v in rows)
    changes = f"\n{o.changes}" if o.changes is not None else ""
    return f"### cora-ci index of {s.source}\n\n| | |\n| --- | --- |\n{body}\n{changes}"


_MAX_ANNOTATIONS = 50  # GitHub shows a step's first few anyway; the job summary and info list all


def annotation_lines(notes: list[Note]) -> list[str]:
    """A `::warning` workflow command per file skipped or secret redacted, on its file and line, so
    the run's page shows what left the bundle (never the secret: the message names its kind)."""
    out = []
    left = [n for n in notes if n.code in LEFT_OUT]
    for n in left[:_MAX_ANNOTATIONS]:
        at = f"file={_prop(n.path)}" + (f",line={n.line}" if n.line else "")
        out.append(f"::warning {at},title={n.code}::{_data(n.message)}")
    if len(left) > _MAX_ANNOTATIONS:
        out.append(f"::notice::{len(left) - _MAX_ANNOTATIONS} more left out: cora-ci info --diagnostics")
    return out


def _data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


def write_outputs(path: Path, values: Mapping[str, str]) -> None:
    """Append `values` to a `$GITHUB_OUTPUT` file; a value with newlines uses a random delimiter."""
    lines = []
    for k, v in values.items():
        if "\n" in v:
            delim = f"ghadelimiter_{secrets.token_hex(8)}"
            lines.append(f"{k}<<{delim}\n{v}\n{delim}\n")
        else:
            lines.append(f"{k}={v}\n")
    _append(path, "".join(lines))


def _append(path: Path, text: str) -> None:
    try:
        with path.open("a", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise CoraError("CORA-IO-002", f"cannot write {path}: {e.strerror or e}") from None


def publish(env: Mapping[str, str], outputs: Mapping[str, str], summary: str | None,
            echo: Callable[[str], None]) -> None:  # fmt: skip
    """Outputs to `$GITHUB_OUTPUT` and the summary to `$GITHUB_STEP_SUMMARY`, or to the log outside CI."""
    if out := env.get("GITHUB_OUTPUT"):
        write_outputs(Path(out), outputs)
    else:
        for k, v in outputs.items():
            echo(f"{k}={v}")
    if summary is not None and (step := env.get("GITHUB_STEP_SUMMARY")):
        _append(Path(step), summary)
