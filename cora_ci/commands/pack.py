"""`cora-ci pack`: a bundle as one deterministic archive, for CI to publish."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import click


@click.command("pack")
@click.argument("bundle_dir", type=click.Path(path_type=Path))
@click.argument("out", required=False, type=click.Path(path_type=Path))
@click.option("-o", "--out", "out_opt", type=click.Path(path_type=Path), default=None,
              help="The archive file to write (or the second argument); - for stdout.")  # fmt: skip
def pack_cmd(bundle_dir: Path, out: Path | None, out_opt: Path | None) -> None:
    """Write the bundle BUNDLE_DIR as one deterministic archive file OUT (.tar.gz), for CI to publish."""
    from cora_ci.bundle.archive import write_archive

    target = out or out_opt
    if target is None or (out is not None and out_opt is not None):
        raise click.UsageError("give the archive file once: as OUT or as -o FILE")
    if str(target) == "-":  # to standard output; what was packed goes to stderr
        with tempfile.TemporaryDirectory(prefix="cora-pack-") as tmp:
            p = write_archive(bundle_dir, Path(tmp) / "bundle.tar.gz")
            with p.path.open("rb") as f:
                shutil.copyfileobj(f, sys.stdout.buffer)
            sys.stdout.flush()
        what = f"{p.files} files, {p.bytes / 1e6:.2f} MB, sha256 {p.sha256}"
        click.echo(f"packed {bundle_dir} -> stdout: {what}", err=True)
        return
    p = write_archive(bundle_dir, target)
    click.echo(f"packed {bundle_dir} -> {p.path}: {p.files} files, {p.bytes / 1e6:.2f} MB, sha256 {p.sha256}")
