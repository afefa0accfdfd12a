"""`cora-ci info`: what a bundle holds."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    pass


@click.command()
@click.argument("bundle", required=False, default=".cora/index", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["json", "text"]), default="text")
def info(bundle: Path, fmt: str) -> None:
    """What a bundle holds: source, model, config, files, chunks, sizes."""
    import json

    from cora_ci.bundle import open_bundle
    from cora_ci.bundle.report import describe, describe_text

    b = open_bundle(bundle)
    d = describe(b)
    if fmt == "json":
        click.echo(json.dumps(d, indent=2, sort_keys=True))
    else:
        for line in describe_text(d):
            click.echo(line)
