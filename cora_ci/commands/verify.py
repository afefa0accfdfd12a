"""`cora-ci verify`: every checksum and the manifest's consistency, no cache trusted."""

from __future__ import annotations

from pathlib import Path

import click

from cora_ci.errors import CoraError


@click.command()
@click.argument("bundle", required=False, default=".cora/index", type=click.Path(path_type=Path))
@click.option("--digest", metavar="SHA256", default=None,
              help="The sha256 it must have: an archive's (the Action's archive-sha256), or a directory's "
                   "bundle id.")  # fmt: skip
def verify(bundle: Path, digest: str | None) -> None:
    """Full integrity check of a bundle: every checksum (no cache) and the manifest's consistency."""
    from cora_ci.bundle.report import check

    if digest is not None:
        _pinned(bundle, digest.strip().lower())

    problems = check(bundle)
    for p in problems:
        click.echo(f"FAIL {p}", err=True)
    if problems:
        raise CoraError("CORA-BND-003", f"{bundle}: {len(problems)} problem(s) found")
    click.echo(f"ok {bundle}")


def _pinned(bundle: Path, digest: str) -> None:
    """The bundle is the one published: its archive's sha256, or its manifest's (the bundle id)."""
    from cora_ci.bundle import manifest as mf
    from cora_ci.bundle.store import sha256_file

    target = bundle if bundle.is_file() else bundle / mf.MANIFEST
    if not target.is_file():
        raise CoraError("CORA-BND-001", f"no bundle at {bundle}")
    got = sha256_file(target)
    if got != digest:
        raise CoraError("CORA-BND-012", f"{bundle}: sha256 {got}, not the {digest} expected",
                        "it is not the bundle that was published: download it again")  # fmt: skip
