"""`cora-ci unpack`: extract a bundle archive safely."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from cora_ci.errors import CoraError

if TYPE_CHECKING:
    pass


@click.command("unpack")
@click.argument("archive", type=click.Path(path_type=Path))
@click.option("-o", "--out", type=click.Path(path_type=Path), default=None,
              help="A new or empty directory for a writable copy (default: a read-only cache).")  # fmt: skip
def unpack_cmd(archive: Path, out: Path | None) -> None:
    """Extract a bundle archive safely and verify it; print where the bundle is."""
    from cora_ci.bundle import open_bundle
    from cora_ci.bundle.archive import unpack_to

    if not archive.is_file():
        raise CoraError("CORA-IO-001", f"no archive file at {archive}")
    root = unpack_to(archive, out) if out is not None else open_bundle(archive).root
    click.echo(str(root))
