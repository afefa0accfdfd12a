"""`cora-ci verify`: every checksum and the manifest's consistency, no cache trusted."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from cora_ci.errors import CoraError

if TYPE_CHECKING:
    pass


@click.command()
@click.argument("bundle", required=False, default=".cora/index", type=click.Path(path_type=Path))
def verify(bundle: Path) -> None:
    """Full integrity check of a bundle: every checksum (no cache) and the manifest's consistency."""
    from cora_ci.bundle.report import check

    problems = check(bundle)
    for p in problems:
        click.echo(f"FAIL {p}", err=True)
    if problems:
        raise CoraError("CORA-BND-003", f"{bundle}: {len(problems)} problem(s) found")
    click.echo(f"ok {bundle}")
