"""`cora-ci mcp`: serve bundles to LLM agents over the Model Context Protocol."""

from __future__ import annotations

from pathlib import Path

import click

from cora_ci.commands.common import BUNDLES_HELP, REPO_HELP
from cora_ci.errors import CoraError


def _address(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, int] | None:
    """`--http HOST:PORT` or `--http PORT` (then on 127.0.0.1); `[::1]:PORT` for IPv6."""
    if value is None:
        return None
    host, sep, port = value.rpartition(":")
    host = host.strip("[]") if sep else "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536 or (sep and not host):
        raise click.BadParameter(f"{value!r}: expected HOST:PORT or PORT, e.g. 127.0.0.1:8765")
    return host, int(port)


@click.command()
@click.option(
    "--bundle",
    "bundles",
    multiple=True,
    type=click.Path(path_type=Path),
    help=BUNDLES_HELP,
)
@click.option("--repo", type=click.Path(path_type=Path), default=None, help=REPO_HELP)
@click.option(
    "--http",
    "http",
    default=None,
    metavar="HOST:PORT",
    callback=_address,
    help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (PORT alone: on 127.0.0.1).",
)
@click.option(
    "--model",
    default=None,
    help='The bundle\'s model (by default its own): "static", "minilm", a directory, or "none".',
)
def mcp(
    bundles: tuple[Path, ...], repo: Path | None, http: tuple[str, int] | None, model: str | None
) -> None:
    """Serve search, show, related and outline to agents (MCP over stdio, or --http)."""
    try:
        from cora_ci.serve.mcp import serve
    except ImportError as e:
        if "mcp" not in (e.name or "") and "pydantic" not in (e.name or ""):
            raise
        raise CoraError(
            "CORA-MCP-001", f"cora-ci mcp needs the MCP SDK ({e.name} is not installed)"
        ) from None
    from cora_ci.render.many import wheres
    from cora_ci.serve.session import Session

    sessions = [Session(w, model) for w in wheres(bundles, repo, Path.cwd())]
    for s in sessions:  # loaded now, so the first call is as fast as the others
        try:
            s.warm()
        except CoraError as e:  # served anyway: each call opens it again (a first index may come)
            click.echo(f"warning: {e.one_line().removeprefix('error: ')}", err=True)
    serve(sessions, http)
