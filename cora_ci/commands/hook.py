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
@click.option("--wait", is_flag=True, envvar="CORA_HOOK_WAIT",
              help="sync: update before returning (--strict too), not in a background process.")  # fmt: skip
@click.option("--background", is_flag=True, hidden=True)  # the process a sync starts
def hook(action: str, repo: Path, strict: bool, checkout_type: str | None,
         rewrite_command: str | None, wait: bool, background: bool) -> None:  # fmt: skip
    """Run as a git hook: `index` the staged content (pre-commit) or `sync` to HEAD (post-*), quietly.

    A sync returns at once and updates the bundle in a process of its own (--wait: before it
    returns); a failure is told by the next hook run."""
    gc.disable()  # a build leaves no cyclic garbage to speak of: collections cost ~35 ms of a hook
    from cora_ci.hooks import background_sync, run_hook, start_sync

    if background:
        background_sync(repo)
        finished()
        return
    if action == "sync" and not (strict or wait):
        out = start_sync(repo, checkout_type, rewrite_command)
    else:
        out = run_hook(action, repo, strict=strict, checkout_type=checkout_type,
                       rewrite_command=rewrite_command)  # fmt: skip
    out.show()
    if out.status:
        sys.exit(out.status)
    finished()  # updated or warned, nothing left to clean: main() ends the process without teardown
