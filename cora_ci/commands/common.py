"""What several commands share: option helps, colour, `--shard`, and the fast exit of read-only verbs."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from cora_ci.errors import CoraError

if TYPE_CHECKING:
    from cora_ci.files.shard import ShardSpec

BUNDLE_HELP = "A bundle directory or archive (default: <repository root>/.cora/index)."
REPO_HELP = "Working tree to re-bind to (default: the current repository, if it is the bundle's source)."

_read_only = [False]  # set once a read-only command's answer is written


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


def read_only_done() -> None:
    """Tell `main` that a read-only answer is written, so the process may end without teardown."""
    _read_only[0] = True


def is_read_only_done() -> bool:
    return _read_only[0]
