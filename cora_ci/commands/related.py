"""`cora-ci related`: what to read next about one symbol, each result with its relation."""

from __future__ import annotations

import json
from pathlib import Path

import click

from cora_ci.commands.common import BUNDLES_HELP, FORMAT_HELP, REPO_HELP, as_name, echo_answer, finished


@click.command()
@click.argument("anchor")
@click.option("-k", "k", type=click.IntRange(1, 1000), default=10, show_default=True, help="Results.")
@click.option("--full", is_flag=True, help="Each related symbol's whole code, not only its signature.")
@click.option("--format", "fmt", type=click.Choice(["cora", "json", "text"]), default=None, help=FORMAT_HELP)
@click.option("--bundle", "bundles", multiple=True, type=click.Path(path_type=Path), help=BUNDLES_HELP)
@click.option("--repo", type=click.Path(path_type=Path), default=None, help=REPO_HELP)
def related(
    anchor: str, k: int, full: bool, fmt: str | None, bundles: tuple[Path, ...], repo: Path | None
) -> None:
    """Callers, callees, parent type, overrides and tests of the symbol ANCHOR (path::Class.member)."""
    from cora_ci.render.formats import result_dict
    from cora_ci.render.many import run_related_many, wheres

    ws = wheres(bundles, repo, Path.cwd())
    anchor = as_name(anchor)
    rel, b, ref = run_related_many(anchor, ws, k, full)
    commit = (b.manifest.get("source") or {}).get("commit")
    doc: dict[str, object] = {
        "anchor": anchor,
        "bundle": ref.path if ref else str(ws[0].bundle),
        "bundle_id": b.id,
    }
    doc["results"] = [result_dict(r) for r in rel.results]
    as_json = json.dumps(doc, indent=2, ensure_ascii=False)
    echo_answer(fmt, rel.results, commit, as_json)
    finished()
