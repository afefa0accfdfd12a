"""`cora-ci diff`: the symbols added, modified, removed, renamed and moved between two bundles."""

from __future__ import annotations

from pathlib import Path

import click

from cora_ci.commands.common import finished, use_color


@click.command()
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("--impact", is_flag=True, help="For each changed symbol, the code in NEW that references it.")
@click.option("-k", "k", type=click.IntRange(1, 100), default=5, show_default=True,
              help="With --impact: places listed per changed symbol.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="markdown: a table for a pull request or a job summary.")  # fmt: skip
def diff(old: Path, new: Path, impact: bool, k: int, fmt: str) -> None:
    """What changed from bundle OLD to bundle NEW (directories or archives), symbol by symbol."""
    from cora_ci.bundle import open_bundle
    from cora_ci.diff import diff_bundles
    from cora_ci.diff import formats as out
    from cora_ci.diff.impact import impact as impact_of

    a, b = open_bundle(old), open_bundle(new)
    d = diff_bundles(a, b)
    impacts = {c.anchor: impact_of(b, c, k) for c in d.changes} if impact else {}
    if fmt == "json":
        click.echo(out.as_json(d, impacts, str(old), str(new)))
    elif fmt == "markdown":
        click.echo(out.as_markdown(d, impacts), nl=False)
    else:
        color = use_color()
        for line in out.as_text(d, impacts):
            click.echo(line, color=color)
    finished()
