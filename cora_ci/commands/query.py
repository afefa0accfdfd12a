"""`cora-ci query`: search a bundle and print the answer."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import click

from cora_ci.chunking.model import KINDS
from cora_ci.commands.common import (
    BUNDLES_HELP,
    FORMAT_HELP,
    REPO_HELP,
    as_text,
    default_format,
    echo_answer,
    finished,
)


@click.command()
@click.argument("query_text", metavar="QUERY")
@click.option("--bundle", "bundles", multiple=True, type=click.Path(path_type=Path), help=BUNDLES_HELP)
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
    help=FORMAT_HELP,
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
@click.option("--repo", type=click.Path(path_type=Path), default=None, help=REPO_HELP)
@click.option(
    "--model",
    default=None,
    help='The bundle\'s model (by default its own): "static", "minilm", a directory, or "none".',
)
def query(
    query_text: str,
    bundles: tuple[Path, ...],
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
    """Search a bundle: hybrid ranking, graph expansion, boosts, within a token budget.

    QUERY is a name, a question or a whole bug report; `-` reads it from standard input (a report
    in a file: `cora-ci query - < report.txt`), and `--` before it passes a text that begins with
    `-` (`cora-ci query -- "--max-columns is off by one"`)."""
    gc.disable()  # one short-lived answer: collections over the bundle's objects would only cost time
    from cora_ci.render.formats import as_json, code_budget, overhead
    from cora_ci.render.many import run_query_many, wheres
    from cora_ci.retrieval.types import Filters

    ws = wheres(bundles, repo, Path.cwd())
    filters = Filters(langs, kinds, paths, excludes)
    query_text = as_text(sys.stdin.read().strip() if query_text == "-" else query_text)
    fmt = fmt or default_format()
    printed = overhead(fmt, explain, k) if budget is not None else None  # the budget is what is printed
    if budget is not None:
        budget = code_budget(fmt, budget, query_text, str(ws[0].bundle))
    ans, _ = run_query_many(query_text, ws, k=k, budget=budget, boosts=boosts, filters=filters, model=model,
                            overhead=printed)  # fmt: skip
    doc = (as_json(ans.query, ans.bundle, ans.results, explain, ans.bundle_id, ans.bundles, ans.notes)
           if fmt == "json" else "")  # fmt: skip
    echo_answer(fmt, ans.results, ans.commit, doc, explain, ans.bundles, ans.notes)
    finished()  # main() ends the process once the answer is written
