"""`cora-ci install-hooks`: plain git hooks for users without the pre-commit framework."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    pass


@click.command("install-hooks")
@click.argument("repo", required=False, default=".", type=click.Path(path_type=Path))
@click.option("--uninstall", is_flag=True, help="Remove our hooks and restore the ones they chained.")
def install_hooks(repo: Path, uninstall: bool) -> None:
    """Install plain git hooks that keep .cora/index current, chaining to existing hooks."""
    from cora_ci import hooks

    for line in hooks.uninstall_hooks(repo) if uninstall else hooks.install_hooks(repo):
        click.echo(line)
