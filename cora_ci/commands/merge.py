"""`cora-ci merge`: join the bundles of a sharded build into the tree's bundle."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    pass


@click.command()
@click.argument("shards", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="SHARD_BUNDLE...")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="The merged bundle's directory.")
@click.option("--timings", is_flag=True, help="Also print the seconds spent in each stage.")
def merge(shards: tuple[Path, ...], out: Path, timings: bool) -> None:
    """Join the bundles of shards 1..N of one tree (directories or archives) into its full bundle."""
    from cora_ci.merge import merge as merge_shards

    s = merge_shards(list(shards), out)
    click.echo(
        f"merged {s.shards} shards of {s.source}: {s.files} files, {s.chunks} chunks, {s.seconds:.1f} s"
    )
    click.echo(f"bundle {s.out}")
    if timings:
        click.echo("stages: " + ", ".join(f"{k} {v:.3f}" for k, v in s.stages.items()))
