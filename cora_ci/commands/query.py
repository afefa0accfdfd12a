"""`cora-ci query`: search a bundle and print the answer."""

from __future__ import annotations

import gc
from pathlib import Path

import click

from cora_ci.chunking.model import KINDS
from cora_ci.commands.common import BUNDLE_HELP, FORMAT_HELP, REPO_HELP, echo_answer, read_only_done


@click.command()
@click.argument("query_text", metavar="QUERY")
@click.option("--bundle", type=click.Path(path_type=Path), default=None, help=BUNDLE_HELP)
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
    from cora_ci.render.formats import as_json
    from cora_ci.render.query import Where, run_query
    from cora_ci.retrieval.types import Filters

    where = Where.of(bundle, repo, Path.cwd())
    filters = Filters(langs, kinds, paths, excludes)
    ans = run_query(query_text, where, k=k, budget=budget, boosts=boosts, filters=filters, model=model)
    doc = as_json(ans.query, ans.bundle, ans.results, explain, ans.bundle_id) if fmt == "json" else ""
    echo_answer(fmt, ans.results, ans.commit, doc, explain)
    read_only_done()  # main() ends the process once the answer is written
