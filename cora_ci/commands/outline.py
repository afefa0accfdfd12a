"""`cora-ci outline`: the symbols of one file, with kinds, lines and anchors."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cora_ci.commands.common import BUNDLES_HELP, FORMAT_HELP, REPO_HELP, as_name, finished, use_color


@click.command()
@click.argument("path")
@click.option("--format", "fmt", type=click.Choice(["cora", "json", "text"]), default=None, help=FORMAT_HELP)
@click.option("--bundle", "bundles", multiple=True, type=click.Path(path_type=Path), help=BUNDLES_HELP)
@click.option("--repo", type=click.Path(path_type=Path), default=None, help=REPO_HELP)
def outline(path: str, fmt: str | None, bundles: tuple[Path, ...], repo: Path | None) -> None:
    """A file's table of contents: its symbols with kinds, lines and anchors (PATH as indexed)."""
    from cora_ci.render import outline as render
    from cora_ci.render.many import run_outline_many, wheres

    ws = wheres(bundles, repo, Path.cwd())
    o, b, ref = run_outline_many(render.as_indexed(as_name(path)), ws)
    fmt = fmt or ("text" if sys.stdout.isatty() else "cora")
    if fmt == "json":
        click.echo(render.as_json(o, ref.path if ref else str(ws[0].bundle), b.id))
    elif fmt == "cora":
        click.echo(render.as_cora(o))
    else:
        color = use_color()
        for line in render.as_text(o):
            click.echo(line, color=color)
    finished()
