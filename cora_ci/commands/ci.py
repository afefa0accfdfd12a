"""`cora-ci ci prepare|build`: the GitHub Action's steps (action.yml)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cora_ci.commands.common import shard_spec

if TYPE_CHECKING:
    from cora_ci.files.shard import ShardSpec


@click.group("ci")
def ci_group() -> None:
    """The GitHub Action's steps (action.yml): read GitHub's environment, write outputs and summary."""


def _blank_is_none(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    return value or None


@ci_group.command("prepare")
@click.option("--path", envvar="CORA_CI_PATH", default=".", help="Repository root, in the workspace.")
@click.option("--bundle-dir", envvar="CORA_CI_BUNDLE_DIR", default="", help="Default: PATH/.cora/index.")
@click.option("--artifact-name", envvar="CORA_CI_ARTIFACT_NAME", default="cora-index")
@click.option("--model", envvar="CORA_CI_MODEL", default="")
@click.option("--config", envvar="CORA_CI_CONFIG", default="")
@click.option("--shard", envvar="CORA_CI_SHARD", default="", help="I of a sharded build (with --shards).")
@click.option("--shards", envvar="CORA_CI_SHARDS", default="", help="N of a sharded build (with --shard).")
def ci_prepare(path: str, bundle_dir: str, artifact_name: str, model: str, config: str, shard: str,
               shards: str) -> None:  # fmt: skip
    """Where the bundle and archive go, and the cache keys (outputs for the cache step)."""
    from cora_ci import ci

    spec = ci.shard_input(shard, shards)
    p = ci.plan(os.environ, path, bundle_dir, artifact_name, model, config, spec)
    ci.publish(os.environ, p.outputs(), None, click.echo)


@ci_group.command("build")
@click.option("--repo", envvar="CORA_CI_REPO", required=True, type=click.Path(path_type=Path))
@click.option("--bundle-dir", envvar="CORA_CI_BUNDLE_DIR", required=True, type=click.Path(path_type=Path))
@click.option("--archive", envvar="CORA_CI_ARCHIVE", required=True, type=click.Path(path_type=Path))
@click.option("--model", envvar="CORA_CI_MODEL", default=None, callback=_blank_is_none)
@click.option("--config", envvar="CORA_CI_CONFIG", default=None, callback=_blank_is_none)
@click.option("--full", envvar="CORA_CI_FULL", type=bool, default=False,
              help="Rebuild from scratch even if a bundle was restored.")  # fmt: skip
@click.option("--shard", envvar="CORA_CI_SHARD", metavar="I/N", default=None, callback=shard_spec,
              help="Index only shard I of N (cora-ci index --shard).")  # fmt: skip
@click.option("--fail-on-secret", envvar="CORA_CI_FAIL_ON_SECRET", type=bool, default=False,
              help="Fail (CORA-SEC-003) when secrets were found, after the outputs are written.")  # fmt: skip
@click.option("--diff", envvar="CORA_CI_DIFF", type=bool, default=False,
              help="Add the symbols changed since the restored bundle to the job summary.")  # fmt: skip
def ci_build(repo: Path, bundle_dir: Path, archive: Path, model: str | None, config: str | None,
             full: bool, shard: ShardSpec | None, fail_on_secret: bool, diff: bool) -> None:  # fmt: skip
    """Index (an update when a bundle was restored), pack, write outputs and the job summary."""
    from cora_ci import ci
    from cora_ci.render.progress import Reporter
    from cora_ci.render.summary import summary_lines

    config_file = repo / config if config else None
    grouped = os.environ.get("GITHUB_ACTIONS") == "true"  # the log folds the build's output into a section
    if grouped:
        click.echo("::group::cora-ci index")
    o = ci.run_build(repo, bundle_dir, archive, model, config_file, full, Reporter(), shard, diff)
    if grouped:
        click.echo("::endgroup::")
        for line in ci.annotation_lines(o.summary.notes):
            click.echo(line)
    for line in summary_lines(o.summary):
        click.echo(line)
    click.echo(f"packed {o.packed.path}: {o.packed.files} files, {o.packed.bytes / 1e6:.2f} MB, "
               f"sha256 {o.packed.sha256}")  # fmt: skip
    ci.publish(os.environ, ci.outcome_outputs(o), ci.job_summary(o), click.echo)
    if fail_on_secret:
        from cora_ci.commands.common import fail_on_secrets

        fail_on_secrets(o.summary.notes)
