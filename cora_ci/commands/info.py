"""`cora-ci info`: what a bundle holds."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("bundle", required=False, default=".cora/index", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["json", "text"]), default="text")
@click.option(
    "--diagnostics",
    "diags",
    is_flag=True,
    help="Every file skipped, secret dropped and other diagnostic, as `path:line: CODE message`.",
)
def info(bundle: Path, fmt: str, diags: bool) -> None:
    """What a bundle holds: source, model, config, files, chunks, sizes."""
    import json

    from cora_ci.bundle import open_bundle
    from cora_ci.bundle.report import describe, describe_text, diagnostics
    from cora_ci.render.summary import note_line

    b = open_bundle(bundle)
    if diags:
        notes = diagnostics(b)
        if fmt == "json":
            keys = ("path", "line", "code", "message")
            rows = [dict(zip(keys, n, strict=True)) for n in notes]
            click.echo(json.dumps({"diagnostics": rows}, indent=2))
        else:
            for n in notes:
                click.echo(note_line(*n))
        return
    d = describe(b)
    if fmt == "json":
        click.echo(json.dumps(d, indent=2, sort_keys=True))
    else:
        for line in describe_text(d):
            click.echo(line)
