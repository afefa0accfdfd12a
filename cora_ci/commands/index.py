"""`cora-ci index`: build or update the bundle of a commit, the staging area, the worktree or a directory."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cora_ci.commands.common import fail_on_secrets, finished, shard_spec

if TYPE_CHECKING:
    from cora_ci.files.shard import ShardSpec


@click.command()
@click.argument("repo", required=False, default=".", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Bundle directory (default: REPO/.cora/index).",
)
@click.option("--rev", default=None, help="Index this commit (default: HEAD in a git repository).")
@click.option("--staged", "kind", flag_value="staged", help="Index the staging area (the git index).")
@click.option("--worktree", "kind", flag_value="worktree", help="Index the working tree as it is on disk.")
@click.option(
    "--model",
    default=None,
    help='"default" (= "static": a token table trained on code, seconds), "minilm" (bundled '
    'all-MiniLM-L6-v2 int8: minutes), "none" (BM25 only) or a model directory.',
)
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of updating an existing bundle.")
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="A pyproject.toml or .cora.toml (default: the one in the indexed source).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress, only the summary.")
@click.option("--timings", is_flag=True, help="Also print the seconds spent in each stage.")
@click.option(
    "--fail-on-secret",
    is_flag=True,
    help="Fail (CORA-SEC-003) if secrets were found (the bundle is written without them).",
)
@click.option("--shard", metavar="I/N", default=None, callback=shard_spec,
              help="Index only shard I of N of the files (by size); `cora-ci merge` joins them.")  # fmt: skip
def index(repo: Path, out: Path | None, rev: str | None, kind: str | None, model: str | None, full: bool,
          config_file: Path | None, quiet: bool, timings: bool, fail_on_secret: bool,
          shard: ShardSpec | None) -> None:  # fmt: skip
    """Build the bundle of a git commit, the staging area, the working tree or a plain directory."""
    gc.disable()  # no cyclic garbage to speak of (peak RSS unchanged): collections only cost time
    from cora_ci.build import build
    from cora_ci.render.progress import Reporter
    from cora_ci.render.summary import summary_lines

    if rev and kind:
        raise click.UsageError("--rev cannot be combined with --staged or --worktree")
    kind = "rev" if rev else kind
    s = build(repo, out, kind=kind, rev=rev, model=model, config_file=config_file, full=full,
              progress=(lambda *_: None) if quiet else Reporter(), shard=shard)  # fmt: skip
    for line in summary_lines(s, timings):
        click.echo(line)
    if fail_on_secret:
        fail_on_secrets(s.notes)
    finished()  # the bundle is swapped in and synced: main() ends the process without teardown
