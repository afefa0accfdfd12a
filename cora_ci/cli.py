"""The command line: parses options and calls the pipeline stages; nothing else lives here."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from cora_ci import __version__
from cora_ci.errors import CODES, CoraError


def _use_color() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cora-ci")
def cli() -> None:
    """cora-ci: a portable code index bundle, built per commit, queried offline."""


@cli.command()
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
    for f in files:
        try:
            data = f.abspath.read_bytes()
        except OSError as e:
            raise CoraError("CORA-IO-002", f"cannot read {f.relpath}: {e.strerror}") from None
        result = chunk_file(f.relpath, data, cfg)
        if result.strategy is None:
            for d in result.diagnostics:
                click.echo(f"{f.relpath}: {d.code}: {d.message}", err=True)
        chunks.extend(result.chunks)
    fmt = fmt or ("text" if sys.stdout.isatty() else "json")
    if fmt == "json":
        click.echo(as_json(chunks))
    else:
        color = _use_color()
        for line in as_text(chunks):
            click.echo(line, color=color)


def main() -> None:
    """Entry point: expected failures print one line with a stable code, never a traceback."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except CoraError as e:
        click.echo(e.one_line(), err=True)
        sys.exit(e.exit_status)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except Exception as e:
        if os.environ.get("CORA_DEBUG"):
            raise
        code = CODES["CORA-INT-001"]
        click.echo(f"error: {code.code}: {type(e).__name__}: {e} (hint: {code.hint})", err=True)
        sys.exit(code.exit_status)
