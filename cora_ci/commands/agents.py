"""`cora-ci agents`: the set-up for LLM agents, an AGENTS.md snippet and the MCP client config."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import click

SNIPPET = """\
## Code search: cora-ci

This repository has a code index (cora-ci), served to you by the `cora-ci` MCP server.

- Find code with `search` before grepping or opening files: it takes an identifier (`Session.send`),
  a question in words ("where are retries configured"), a pasted error or traceback, or a whole
  issue (its title as the first line, which weighs most), and returns
  the matching functions, classes and doc sections with their paths and lines.
- Every result has an **anchor**, `path::Class.method`: a stable name for the symbol that survives
  edits. Pass it to `show` for the symbol's whole current code, or to `related` for what to read
  next: its callers, callees, class, overrides and tests.
- `outline(path)` lists a file's symbols with their lines and anchors, cheaper than reading it.
- `stale: "moved"` means the code changed since indexing and was found again by its anchor;
  `"missing"`, that it is gone.
- Without MCP, the same from a shell: `cora-ci query "..."`, `cora-ci show ANCHOR`,
  `cora-ci related ANCHOR`, `cora-ci outline PATH`.
"""


def _command() -> str:
    """This installation's `cora-ci`: by name when it is the one on PATH, else by its full path."""
    here = Path(sys.argv[0]).resolve() if sys.argv and Path(sys.argv[0]).name == "cora-ci" else None
    found = shutil.which("cora-ci")
    if here is None or (found is not None and Path(found).resolve() == here):
        return "cora-ci"
    return os.fspath(here)


def client_config(command: str) -> dict[str, object]:
    """The `mcpServers` entry most MCP clients read (Claude Desktop, Cursor, Windsurf, ...)."""
    return {"mcpServers": {"cora-ci": {"command": command, "args": ["mcp"]}}}


@click.command()
@click.option("--json", "only_json", is_flag=True, help="Only the MCP client configuration, as JSON.")
def agents(only_json: bool) -> None:
    """Print the AGENTS.md / CLAUDE.md snippet and the JSON that registers the MCP server."""
    command = _command()
    config = json.dumps(client_config(command), indent=2)
    if only_json:
        click.echo(config)
        return
    click.echo("<!-- Add to AGENTS.md or CLAUDE.md at the repository root: -->\n")
    click.echo(SNIPPET)
    click.echo("<!-- Register the server with your MCP client, e.g. in .mcp.json (Claude Code, Cursor):")
    click.echo(config)
    click.echo(f"or, with Claude Code: claude mcp add cora-ci -- {command} mcp")
    click.echo("-->")
