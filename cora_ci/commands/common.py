"""What several commands share: option helps, colour, `--shard`, and the fast exit of read-only verbs."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from cora_ci.errors import CoraError

if TYPE_CHECKING:
    from cora_ci.files.shard import ShardSpec
    from cora_ci.render.answer import Result
    from cora_ci.render.bundles import BundleRef

BUNDLE_HELP = "A bundle directory or archive (default: <repository root>/.cora/index)."
BUNDLES_HELP = (
    "A bundle directory or archive; repeat to search several as one (default: <repository root>/.cora/index"
    " and the dependency bundles its config lists)."
)
FORMAT_HELP = "cora (<cora:chunk> blocks; the default in pipes), json, or text (the default on a terminal)."
REPO_HELP = "Working tree to re-bind to (default: the current repository, if it is the bundle's source)."

_finished = [False]  # set once a command's work is written and nothing is left to clean up


def as_text(arg: str) -> str:
    """A command-line argument as text: bytes that are not UTF-8 (the shell passes them through as
    surrogates) become U+FFFD, so `caf\xe9 menu` still searches for `menu`."""
    return arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def as_name(arg: str) -> str:
    """A command-line path or anchor as the bundle names files: non-UTF-8 bytes as U+F780..U+F7FF."""
    from cora_ci.files.names import from_os

    return from_os(arg)


def use_color() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def shard_spec(ctx: click.Context, param: click.Parameter, value: str | None) -> ShardSpec | None:
    """`--shard I/N`, checked where it is given (a bad one is a usage error)."""
    from cora_ci.files.shard import parse_spec

    if not value:
        return None
    try:
        return parse_spec(value)
    except CoraError as e:
        raise click.BadParameter(e.message) from None


def default_format() -> str:
    """Text for a person at a terminal, `<cora:chunk>` blocks for a program reading a pipe."""
    return "text" if sys.stdout.isatty() else "cora"


def echo_answer(fmt: str | None, results: list[Result], commit: str | None, as_json: str,
                explain: bool = False, bundles: Sequence[BundleRef] = (),
                notes: Sequence[str] = ()) -> None:  # fmt: skip
    """Print results in `fmt` (default: text on a terminal, cora in a pipe); `as_json` is the JSON
    (which holds the `notes`; other formats print them on stderr)."""
    from cora_ci.render.formats import as_cora, as_text

    fmt = fmt or default_format()
    if fmt == "json":
        click.echo(as_json)
        return
    for note in notes:
        click.echo(f"note: {note}", err=True)
    if fmt == "cora":
        if results:
            click.echo(as_cora(results, explain, commit, bundles))
    else:
        color = use_color()
        for line in as_text(results, explain, commit, bundles):
            click.echo(line, color=color)
    if not results and fmt != "json":
        click.echo("no results", err=True)


def fail_on_secrets(notes: Sequence[Any]) -> None:
    """CORA-SEC-003 when the run found secrets (skipped, redacted or withheld: none is in the bundle,
    but each is in the repository, to be moved out and rotated)."""
    found = [n for n in notes if n.code in ("CORA-SEC-001", "CORA-SEC-002", "CORA-SEC-004")]
    if found:
        where = ", ".join(f"{n.path}:{n.line}" if n.line else n.path for n in found[:3])
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        raise CoraError("CORA-SEC-003", f"{len(found)} secret(s) found: {where}{more}")


def finished() -> None:
    """Tell `main` that the command's work is done and written (a read-only answer printed, an
    update swapped in and synced), so the process may end without tearing its objects down."""
    _finished[0] = True


def is_finished() -> bool:
    return _finished[0]
