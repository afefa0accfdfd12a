"""The command line: one click group listing the verbs; each verb lives in `cora_ci.commands`.

A verb's module is imported only when that verb runs (click's lazy-group pattern): a hook or a
query process pays for its own imports, not for every verb's (all of them took ~0.15 s, a third
of a no-op hook process).
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from cora_ci import __version__
from cora_ci.commands.common import is_finished
from cora_ci.errors import CODES, CoraError, printable

# name -> "module:attribute" under cora_ci.commands (`--help` lists them by name, as click does)
COMMANDS = {
    "chunk": "chunk:chunk",
    "index": "index:index",
    "merge": "merge:merge",
    "info": "info:info",
    "verify": "verify:verify",
    "hook": "hook:hook",
    "install-hooks": "install_hooks:install_hooks",
    "query": "query:query",
    "show": "show:show",
    "related": "related:related",
    "outline": "outline:outline",
    "diff": "diff:diff",
    "mcp": "mcp:mcp",
    "agents": "agents:agents",
    "pack": "pack:pack_cmd",
    "unpack": "unpack:unpack_cmd",
    "ci": "ci:ci_group",
}


def load_command(name: str) -> click.Command:
    """The command `name`, its module imported now."""
    module, attr = COMMANDS[name].split(":")
    command = getattr(importlib.import_module(f"cora_ci.commands.{module}"), attr)
    assert isinstance(command, click.Command) and command.name == name, name
    return command


class _Verbs(click.Group):
    """A group whose commands are imported when looked up, not when the group is made."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load_command(cmd_name) if cmd_name in COMMANDS else None


@click.group(cls=_Verbs, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cora-ci")
def cli() -> None:
    """cora-ci: a portable code index bundle, built per commit, queried offline."""


def _exit_now() -> None:
    """End a finished command without tearing the interpreter down: freeing the model's sessions,
    the indexes and the bundle's objects costs ~70 ms of a ~0.5 s query and 40-75 ms of a hook's
    or an update's process, and nothing is left to flush or clean (the BM25 shadow directory is
    removed once the index is open; an update's bundle is swapped in, synced and unlocked)."""
    sys.stdout.flush()  # a closed pipe raises here, handled like any other
    sys.stderr.flush()
    os._exit(0)


def _one_blas_thread() -> None:
    """numpy's OpenBLAS starts a thread per core when numpy is imported (~12 ms of a query process)
    and keeps it spinning after each call (a quarter of the process's CPU time); cora-ci's BLAS
    work is one query vector or one chunk's rows at a time, as fast on one thread, which leaves the
    second core to cora-ci's own threads and gives the same floats on any machine. A setting of
    the user's own wins (bench/RESULTS.md, 2026-11-29)."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main() -> None:
    """Entry point: expected failures print one line with a stable code, never a traceback."""
    _one_blas_thread()
    try:
        cli.main(standalone_mode=False)
        if is_finished():
            _exit_now()
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as e:  # a bad command line: one line with its code, like any error
        ctx = getattr(e, "ctx", None)
        where = ctx.command_path if ctx is not None else "cora-ci"
        message = " ".join(e.format_message().split())
        click.echo(printable(f"error: CORA-CLI-001: {message} (hint: see `{where} --help`)"), err=True)
        sys.exit(e.exit_code)
    except CoraError as e:
        click.echo(e.one_line(), err=True)
        sys.exit(e.exit_status)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except BaseException as e:  # a Rust panic (pyo3's PanicException) is no Exception
        from cora_ci.bundle.panics import is_panic  # here: importing cora_ci.bundle costs ~0.1 s

        if os.environ.get("CORA_DEBUG") or not (isinstance(e, Exception) or is_panic(e)):
            raise
        code = CODES["CORA-INT-001"]
        click.echo(printable(f"error: {code.code}: {type(e).__name__}: {e} (hint: {code.hint})"), err=True)
        sys.exit(code.exit_status)
