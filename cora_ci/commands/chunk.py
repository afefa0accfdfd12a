"""`cora-ci chunk`: the chunks of files, as the indexer would cut them (for people and tests)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cora_ci.commands.common import use_color
from cora_ci.errors import CoraError

if TYPE_CHECKING:
    pass


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["json", "text"]), default=None,
              help="json for programs; text for people (the default on a terminal).")  # fmt: skip
@click.option("--config", "config_file", type=click.Path(path_type=Path), default=None,
              help="A pyproject.toml or .cora.toml (default: found at the repository root).")  # fmt: skip
def chunk(paths: tuple[Path, ...], fmt: str | None, config_file: Path | None) -> None:
    """Print the chunks of the given files and directories."""
    from cora_ci import config as config_mod
    from cora_ci.chunking import chunk_file
    from cora_ci.files.walk import git_toplevel, list_files
    from cora_ci.render.chunks import as_json, as_text

    if config_file is not None:
        cfg = config_mod.load_file(config_file)
    else:
        cfg = config_mod.discover(git_toplevel(Path.cwd()) or Path.cwd())
    files = list_files(list(paths), cfg)
    chunks = []
    skipped: list[str] = []  # printed once every file was read: a failure is its one line
    for f in files:
        try:
            data = f.abspath.read_bytes()
        except OSError as e:
            raise CoraError("CORA-IO-002", f"cannot read {f.relpath}: {e.strerror}") from None
        result = chunk_file(f.relpath, data, cfg)
        if result.strategy is None:
            skipped.extend(f"{f.relpath}: {d.code}: {d.message}" for d in result.diagnostics)
        chunks.extend(result.chunks)
    for line in skipped:
        click.echo(line, err=True)
    fmt = fmt or ("text" if sys.stdout.isatty() else "json")
    if fmt == "json":
        click.echo(as_json(chunks))
    else:
        color = use_color()
        for line in as_text(chunks):
            click.echo(line, color=color)
