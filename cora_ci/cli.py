"""The command line: parses options and calls the pipeline stages; nothing else lives here."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from cora_ci import __version__
from cora_ci.chunking.model import KINDS
from cora_ci.errors import CODES, CoraError

if TYPE_CHECKING:
    from cora_ci.files.shard import ShardSpec


def _use_color() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _shard_spec(ctx: click.Context, param: click.Parameter, value: str | None) -> ShardSpec | None:
    """`--shard I/N`, checked where it is given (a bad one is a usage error)."""
    from cora_ci.files.shard import parse_spec

    if not value:
        return None
    try:
        return parse_spec(value)
    except CoraError as e:
        raise click.BadParameter(e.message) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cora-ci")
def cli() -> None:
    """cora-ci: a portable code index bundle, built per commit, queried offline."""


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["json", "text"]), default=None,
              help="json for programs; text for people (the default on a terminal).")  # fmt: skip
@click.option("--config", "config_file", type=click.Path(path_type=Path), default=None,
              help="A pyproject.toml or .cora.toml (default: found at the repository root).")  # fmt: skip
def chunk(paths: tuple[Path, ...], fmt: str | None, config_file: Path | None) -> None:
    """Print the chunks of the given files and directories."""
    from cora_ci import config as config_mod
    from cora_ci.chunking import chunk_file
    from cora_ci.files.walk import git_toplevel, list_files
    from cora_ci.render.chunks import as_json, as_text

    if config_file is not None:
        cfg = config_mod.load_file(config_file)
    else:
        cfg = config_mod.discover(git_toplevel(Path.cwd()) or Path.cwd())
    files = list_files(list(paths), cfg)
    chunks = []
    for f in files:
        try:
            data = f.abspath.read_bytes()
        except OSError as e:
            raise CoraError("CORA-IO-002", f"cannot read {f.relpath}: {e.strerror}") from None
        result = chunk_file(f.relpath, data, cfg)
        if result.strategy is None:
            for d in result.diagnostics:
                click.echo(f"{f.relpath}: {d.code}: {d.message}", err=True)
        chunks.extend(result.chunks)
    fmt = fmt or ("text" if sys.stdout.isatty() else "json")
    if fmt == "json":
        click.echo(as_json(chunks))
    else:
        color = _use_color()
        for line in as_text(chunks):
            click.echo(line, color=color)


@cli.command()
@click.argument("repo", required=False, default=".", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Bundle directory (default: REPO/.cora/index).",
)
@click.option("--rev", default=None, help="Index this commit (default: HEAD in a git repository).")
@click.option("--staged", "kind", flag_value="staged", help="Index the staging area (the git index).")
@click.option("--worktree", "kind", flag_value="worktree", help="Index the working tree as it is on disk.")
@click.option(
    "--model",
    default=None,
    help='"default" (bundled all-MiniLM-L6-v2 int8), "none" (BM25 only) or an ONNX model directory.',
)
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of updating an existing bundle.")
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="A pyproject.toml or .cora.toml (default: the one in the indexed source).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress, only the summary.")
@click.option("--timings", is_flag=True, help="Also print the seconds spent in each stage.")
@click.option("--shard", metavar="I/N", default=None, callback=_shard_spec,
              help="Index only shard I of N of the files (by size); `cora-ci merge` joins them.")  # fmt: skip
def index(repo: Path, out: Path | None, rev: str | None, kind: str | None, model: str | None, full: bool,
          config_file: Path | None, quiet: bool, timings: bool, shard: ShardSpec | None) -> None:  # fmt: skip
    """Build the bundle of a git commit, the staging area, the working tree or a plain directory."""
    from cora_ci.build import build
    from cora_ci.render.progress import Reporter
    from cora_ci.render.summary import summary_lines

    if rev and kind:
        raise click.UsageError("--rev cannot be combined with --staged or --worktree")
    kind = "rev" if rev else kind
    s = build(repo, out, kind=kind, rev=rev, model=model, config_file=config_file, full=full,
              progress=(lambda *_: None) if quiet else Reporter(), shard=shard)  # fmt: skip
    for line in summary_lines(s, timings):
        click.echo(line)


@cli.command()
@click.argument("shards", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="SHARD_BUNDLE...")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="The merged bundle's directory.")
@click.option("--timings", is_flag=True, help="Also print the seconds spent in each stage.")
def merge(shards: tuple[Path, ...], out: Path, timings: bool) -> None:
    """Join the bundles of shards 1..N of one tree (directories or archives) into its full bundle."""
    from cora_ci.merge import merge as merge_shards

    s = merge_shards(list(shards), out)
    click.echo(
        f"merged {s.shards} shards of {s.source}: {s.files} files, {s.chunks} chunks, {s.seconds:.1f} s"
    )
    click.echo(f"bundle {s.out}")
    if timings:
        click.echo("stages: " + ", ".join(f"{k} {v:.3f}" for k, v in s.stages.items()))


@cli.command()
@click.argument("bundle", required=False, default=".cora/index", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["json", "text"]), default="text")
def info(bundle: Path, fmt: str) -> None:
    """What a bundle holds: source, model, config, files, chunks, sizes."""
    import json

    from cora_ci.bundle import open_bundle
    from cora_ci.bundle.report import describe, describe_text

    b = open_bundle(bundle)
    d = describe(b)
    if fmt == "json":
        click.echo(json.dumps(d, indent=2, sort_keys=True))
    else:
        for line in describe_text(d):
            click.echo(line)


@cli.command()
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


@cli.command()
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
    from cora_ci.hooks import run_hook

    out = run_hook(action, repo, strict=strict, checkout_type=checkout_type, rewrite_command=rewrite_command)
    if out.line:
        click.echo(out.line, err=out.to_stderr)
    if out.status:
        sys.exit(out.status)


@cli.command("install-hooks")
@click.argument("repo", required=False, default=".", type=click.Path(path_type=Path))
@click.option("--uninstall", is_flag=True, help="Remove our hooks and restore the ones they chained.")
def install_hooks(repo: Path, uninstall: bool) -> None:
    """Install plain git hooks that keep .cora/index current, chaining to existing hooks."""
    from cora_ci import hooks

    for line in hooks.uninstall_hooks(repo) if uninstall else hooks.install_hooks(repo):
        click.echo(line)


_BUNDLE_HELP = "A bundle directory or archive (default: <repository root>/.cora/index)."
_REPO_HELP = "Working tree to re-bind to (default: the current repository, if it is the bundle's source)."


@cli.command()
@click.argument("query_text", metavar="QUERY")
@click.option("--bundle", type=click.Path(path_type=Path), default=None, help=_BUNDLE_HELP)
@click.option("-k", "k", type=click.IntRange(1, 1000), default=10, show_default=True, help="Results.")
@click.option(
    "--budget",
    type=click.IntRange(1),
    default=None,
    metavar="TOKENS",
    help="Fit the code in TOKENS: the best results verbatim, the rest cut to signatures.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["cora", "json", "text"]),
    default=None,
    help="cora (<cora:chunk> blocks; the default in pipes), json, or text (the default on a terminal).",
)
@click.option(
    "--boost",
    "boosts",
    multiple=True,
    metavar="DIRECTIVE",
    help="path:FILE or symbol:NAME (include in full), dir:DIR (rank higher); repeatable.",
)
@click.option("--lang", "langs", multiple=True, help="Only chunks of this language (repeatable).")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KINDS), help="Only chunks of this kind.")
@click.option("--path", "paths", multiple=True, metavar="GLOB", help="Only files matching GLOB.")
@click.option("--exclude", "excludes", multiple=True, metavar="GLOB", help="Leave out files matching GLOB.")
@click.option("--explain", is_flag=True, help="Show why each result ranks where it does.")
@click.option("--repo", type=click.Path(path_type=Path), default=None, help=_REPO_HELP)
@click.option("--model", default=None, help='The bundle\'s model: "default", a model directory, or "none".')
def query(
    query_text: str,
    bundle: Path | None,
    k: int,
    budget: int | None,
    fmt: str | None,
    boosts: tuple[str, ...],
    langs: tuple[str, ...],
    kinds: tuple[str, ...],
    paths: tuple[str, ...],
    excludes: tuple[str, ...],
    explain: bool,
    repo: Path | None,
    model: str | None,
) -> None:
    """Search a bundle: hybrid ranking, graph expansion, boosts, within a token budget."""
    gc.disable()  # one short-lived answer: collections over the bundle's objects would only cost time
    from cora_ci.render.formats import as_cora, as_json, as_text
    from cora_ci.render.query import Where, run_query
    from cora_ci.retrieval.types import Filters

    where = Where.of(bundle, repo, Path.cwd())
    filters = Filters(langs, kinds, paths, excludes)
    ans = run_query(query_text, where, k=k, budget=budget, boosts=boosts, filters=filters, model=model)
    fmt = fmt or ("text" if sys.stdout.isatty() else "cora")
    if fmt == "json":
        click.echo(as_json(ans.query, ans.bundle, ans.results, explain, ans.bundle_id))
    elif fmt == "cora":
        if ans.results:
            click.echo(as_cora(ans.results, explain, ans.commit))
    else:
        color = _use_color()
        for line in as_text(ans.results, explain, ans.commit):
            click.echo(line, color=color)
    if not ans.results and fmt != "json":
        click.echo("no results", err=True)
    global _read_only_done
    _read_only_done = True  # main() ends the process once the answer is written


@cli.command()
@click.argument("anchor")
@click.option("--bundle", type=click.Path(path_type=Path), default=None, help=_BUNDLE_HELP)
@click.option("--repo", type=click.Path(path_type=Path), default=None, help=_REPO_HELP)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    help="text: the code itself; json: the code with its path, lines and anchor.",
)
def show(anchor: str, bundle: Path | None, repo: Path | None, fmt: str) -> None:
    """Print one symbol's current code, found by its anchor (path::Class.member)."""
    import json

    from cora_ci.render.formats import visible
    from cora_ci.render.query import Where, run_show

    global _read_only_done
    shown = run_show(anchor, Where.of(bundle, repo, Path.cwd()))
    _read_only_done = True  # main() ends the process once the answer is written
    v, c = shown.view, shown.chunk
    if fmt == "json":
        d = {
            "path": v.path,
            "start_line": v.start,
            "end_line": v.end,
            "symbol": c.symbol or None,
            "anchor": c.anchor,
            "kind": c.kind,
            "text": v.text(),
            "stale": shown.stale,
        }
        click.echo(json.dumps(d, indent=2, ensure_ascii=False))
        return
    if shown.stale:
        click.echo(f"{visible(v.path)}:{v.start}-{v.end} ({shown.stale} since indexing)", err=True)
    click.echo(v.text())


@cli.command("pack")
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


@cli.command("unpack")
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


@cli.group("ci")
def ci_group() -> None:
    """The GitHub Action's steps (action.yml): read GitHub's environment, write outputs and summary."""


def _blank_is_none(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    return value or None


@ci_group.command("prepare")
@click.option("--path", envvar="CORA_CI_PATH", default=".", help="Repository root, in the workspace.")
@click.option("--bundle-dir", envvar="CORA_CI_BUNDLE_DIR", default="", help="Default: PATH/.cora/index.")
@click.option("--artifact-name", envvar="CORA_CI_ARTIFACT_NAME", default="cora-index")
@click.option("--model", envvar="CORA_CI_MODEL", default="")
@click.option("--config", envvar="CORA_CI_CONFIG", default="")
@click.option("--shard", envvar="CORA_CI_SHARD", default="", help="I of a sharded build (with --shards).")
@click.option("--shards", envvar="CORA_CI_SHARDS", default="", help="N of a sharded build (with --shard).")
def ci_prepare(path: str, bundle_dir: str, artifact_name: str, model: str, config: str, shard: str,
               shards: str) -> None:  # fmt: skip
    """Where the bundle and archive go, and the cache keys (outputs for the cache step)."""
    from cora_ci import ci

    spec = ci.shard_input(shard, shards)
    p = ci.plan(os.environ, path, bundle_dir, artifact_name, model, config, spec)
    ci.publish(os.environ, p.outputs(), None, click.echo)


@ci_group.command("build")
@click.option("--repo", envvar="CORA_CI_REPO", required=True, type=click.Path(path_type=Path))
@click.option("--bundle-dir", envvar="CORA_CI_BUNDLE_DIR", required=True, type=click.Path(path_type=Path))
@click.option("--archive", envvar="CORA_CI_ARCHIVE", required=True, type=click.Path(path_type=Path))
@click.option("--model", envvar="CORA_CI_MODEL", default=None, callback=_blank_is_none)
@click.option("--config", envvar="CORA_CI_CONFIG", default=None, callback=_blank_is_none)
@click.option("--full", envvar="CORA_CI_FULL", type=bool, default=False,
              help="Rebuild from scratch even if a bundle was restored.")  # fmt: skip
@click.option("--shard", envvar="CORA_CI_SHARD", metavar="I/N", default=None, callback=_shard_spec,
              help="Index only shard I of N (cora-ci index --shard).")  # fmt: skip
def ci_build(repo: Path, bundle_dir: Path, archive: Path, model: str | None, config: str | None,
             full: bool, shard: ShardSpec | None) -> None:  # fmt: skip
    """Index (an update when a bundle was restored), pack, write outputs and the job summary."""
    from cora_ci import ci
    from cora_ci.render.progress import Reporter
    from cora_ci.render.summary import summary_lines

    config_file = repo / config if config else None
    o = ci.run_build(repo, bundle_dir, archive, model, config_file, full, Reporter(), shard)
    for line in summary_lines(o.summary):
        click.echo(line)
    click.echo(f"packed {o.packed.path}: {o.packed.files} files, {o.packed.bytes / 1e6:.2f} MB, "
               f"sha256 {o.packed.sha256}")  # fmt: skip
    ci.publish(os.environ, ci.outcome_outputs(o), ci.job_summary(o), click.echo)


_read_only_done = False  # set by `query` and `show` once their answer is written


def _exit_now() -> None:
    """End a read-only command without tearing the interpreter down: freeing the model's
    sessions, the indexes and the bundle's objects costs ~70 ms of a ~0.5 s query, and nothing
    is left to flush or clean (the BM25 shadow directory is removed once the index is open)."""
    sys.stdout.flush()  # a closed pipe raises here, handled like any other
    sys.stderr.flush()
    os._exit(0)


def main() -> None:
    """Entry point: expected failures print one line with a stable code, never a traceback."""
    try:
        cli.main(standalone_mode=False)
        if _read_only_done:
            _exit_now()
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except CoraError as e:
        click.echo(e.one_line(), err=True)
        sys.exit(e.exit_status)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except Exception as e:
        if os.environ.get("CORA_DEBUG"):
            raise
        code = CODES["CORA-INT-001"]
        click.echo(f"error: {code.code}: {type(e).__name__}: {e} (hint: {code.hint})", err=True)
        sys.exit(code.exit_status)
