"""`cora-ci hook`: the entry point of the git hooks (pre-commit framework or plain git)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import click

from cora_ci.commands.common import finished


@click.command()
@click.argument("action", type=click.Choice(["index", "sync"]))
@click.argument("repo", required=False, default=".", type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True, envvar="CORA_HOOK_STRICT",
              help="Exit non-zero on failure (blocks the commit) instead of warning.")  # fmt: skip
@click.option("--checkout-type", envvar="PRE_COMMIT_CHECKOUT_TYPE", default=None,
              help="post-checkout's third argument: 0 (a file checkout) skips the sync.")  # fmt: skip
@click.option("--rewrite-command", envvar="PRE_COMMIT_REWRITE_COMMAND", default=None,
              help="post-rewrite's argument (amend or rebase): syncs even inside a rebase.")  # fmt: skip
def hook(action: str, repo: Path, strict: bool, checkout_type: str | None,
         rewrite_command: str | None) -> None:  # fmt: skip
    """Run as a git hook: `index` the staged content (pre-commit) or `sync` to HEAD (post-*), quietly."""
    gc.disable()  # a build leaves no cyclic garbage to speak of: collections cost ~35 ms of a hook
    from cora_ci.hooks import run_hook

    out = run_hook(action, repo, strict=strict, checkout_type=checkout_type, rewrite_command=rewrite_command)
    out.show()
    if out.status:
        sys.exit(out.status)
    finished()  # updated or warned, nothing left to clean: main() ends the process without teardown
