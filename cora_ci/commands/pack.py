"""`cora-ci pack`: a bundle as one deterministic archive, for CI to publish."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    pass


@click.command("pack")
@click.argument("bundle_dir", type=click.Path(path_type=Path))
@click.argument("out", required=False, type=click.Path(path_type=Path))
@click.option("-o", "--out", "out_opt", type=click.Path(path_type=Path), default=None,
              help="The archive file to write (or give it as the second argument).")  # fmt: skip
def pack_cmd(bundle_dir: Path, out: Path | None, out_opt: Path | None) -> None:
    """Write the bundle BUNDLE_DIR as one deterministic archive file OUT (.tar.gz), for CI to publish."""
    from cora_ci.bundle.archive import write_archive

    target = out or out_opt
    if target is None or (out is not None and out_opt is not None):
        raise click.UsageError("give the archive file once: as OUT or as -o FILE")
    p = write_archive(bundle_dir, target)
    click.echo(f"packed {bundle_dir} -> {p.path}: {p.files} files, {p.bytes / 1e6:.2f} MB, sha256 {p.sha256}")
