"""`cora-ci show`: one symbol's current code, by its anchor."""

from __future__ import annotations

from pathlib import Path

import click

from cora_ci.commands.common import BUNDLES_HELP, REPO_HELP, as_name, finished


@click.command()
@click.argument("anchor")
@click.option("--bundle", "bundles", multiple=True, type=click.Path(path_type=Path), help=BUNDLES_HELP)
@click.option("--repo", type=click.Path(path_type=Path), default=None, help=REPO_HELP)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    help="text: the code itself; json: the code with its path, lines and anchor.",
)
def show(anchor: str, bundles: tuple[Path, ...], repo: Path | None, fmt: str) -> None:
    """Print one symbol's current code, found by its anchor (path::Class.member)."""
    import json

    from cora_ci.render.formats import shown_dict, visible
    from cora_ci.render.many import run_show_many, wheres

    anchor = as_name(anchor)
    shown, ref = run_show_many(anchor, wheres(bundles, repo, Path.cwd()))
    finished()
    v = shown.view
    if fmt == "json":
        d = shown_dict(shown, anchor)
        if ref is not None:
            d["bundle"] = {"name": ref.name, "source": ref.source}
        click.echo(json.dumps(d, indent=2, ensure_ascii=False))
        return
    if shown.stale:
        click.echo(f"{visible(v.path)}:{v.start}-{v.end} ({shown.stale} since indexing)", err=True)
    click.echo(v.text())
