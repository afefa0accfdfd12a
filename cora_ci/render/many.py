"""Several bundles answering as one: a repository and the bundles of its dependencies.

Which bundles: those given with `--bundle` (repeatable), else the repository's own and the ones its
config lists (`bundles = [...]` in `.cora.toml` or `[tool.cora-ci]`, paths relative to the
repository root). The query is embedded once, with the first bundle's model; a bundle built with
another model is searched lexically, and the answer says so in a note. `show`, `related` and
`outline` ask each bundle in turn, or the one a qualified anchor names (`name:path::symbol`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from cora_ci.bundle import Bundle, open_bundle
from cora_ci.config import dependency_bundles
from cora_ci.errors import CoraError
from cora_ci.render.answer import Overhead, Packed, filled, left_out, packed
from cora_ci.render.bundles import BundleRef, first_answer, refs_of
from cora_ci.render.members import asked_by
from cora_ci.render.outline import Outline, outline
from cora_ci.render.query import (
    Answer,
    Where,
    boosts_for,
    check_names,
    embedder_for,
    run_outline,
    run_query,
    run_related,
    run_show,
)
from cora_ci.render.related import Related, related_results
from cora_ci.render.source import BundleChunks, Shown, show, work_tree
from cora_ci.retrieval.types import Filters, Hit

T = TypeVar("T")


def wheres(bundles: tuple[Path, ...], repo: Path | None, cwd: Path) -> list[Where]:
    """The bundles a command reads: `--bundle`s as given, else the repository's own bundle and
    the dependency bundles its config lists (each an error naming the entry when it is absent)."""
    if bundles:
        return [Where.of(b, repo, cwd) for b in bundles]
    own = Where.of(None, repo, cwd)
    root = repo if repo is not None else own.default_repo
    if root is None:
        return [own]
    out = [own]
    for entry in dependency_bundles(root):
        path = (root / entry).resolve() if not Path(entry).is_absolute() else Path(entry)
        if not path.exists():
            where = f"dependency bundle {entry!r} in the config of {root}"
            raise CoraError("CORA-BND-001", f"{where}: no bundle at {path}",
                            "fix the entry in `bundles`, or download that bundle there")  # fmt: skip
        out.append(Where(path, None, None, f"dependency bundle {entry!r} in the config of {root}"))
    return out


def open_where(w: Where) -> Bundle:
    """The bundle of `w`; an error names the config entry it comes from, if it does."""
    try:
        return open_bundle(w.bundle)
    except CoraError as e:
        if w.entry is None:
            raise
        raise CoraError(e.code, f"{w.entry}: {e.message}", e.hint) from None


@dataclass
class Many:
    """Open bundles with their names."""

    bundles: list[Bundle]
    refs: list[BundleRef]
    wheres: list[Where]
    notes: list[str] = field(default_factory=list)


def open_many(ws: list[Where]) -> Many:
    bundles = [open_where(w) for w in ws]
    refs = refs_of([b.manifest for b in bundles], [str(w.bundle) for w in ws], [b.id for b in bundles])
    return Many(bundles, refs, ws)


def run_query_many(text: str, ws: list[Where], *, k: int = 10, budget: int | None = None,
                   boosts: tuple[str, ...] = (), filters: Filters = Filters(),  # noqa: B008
                   model: str | None = None, overhead: Overhead | None = None,
                   ) -> tuple[Answer, Many | None]:  # fmt: skip
    """`run_query` over several bundles: one ranking (`retrieval.many`), one budget."""
    if len(ws) == 1:
        one = run_query(text, ws[0], k=k, budget=budget, boosts=boosts, filters=filters, model=model,
                        overhead=overhead)  # fmt: skip
        return one, None
    many = open_many(ws)
    embedders = _embedders(many, model)
    return answer_many(many, text, embedders, k, budget, boosts, filters, overhead), many


def answer_many(many: Many, text: str, embedders: list[Any], k: int, budget: int | None,
                boosts: tuple[str, ...], filters: Filters,
                overhead: Overhead | None = None) -> Answer:  # fmt: skip
    """Rank and pack over the open bundles (the command line's and the MCP server's)."""
    from cora_ci.retrieval.many import Part, search_many

    check_names(many.bundles, filters, boosts)
    trees = [work_tree(b, w.repo, w.default_repo) for b, w in zip(many.bundles, many.wheres, strict=True)]
    parts = [Part(b, e, boosts_for(b, boosts, t.root if t is not None else None))
             for b, e, t in zip(many.bundles, embedders, trees, strict=True)]  # fmt: skip
    from cora_ci.retrieval.query import analyse

    sources = [BundleChunks(b, t) for b, t in zip(many.bundles, trees, strict=True)]
    q = analyse(text)
    words, wanted = sorted(q.words), asked_by(q, text)

    def attempt(n: int) -> tuple[list[Hit], Packed]:
        hits = search_many(parts, text, k=n, filters=filters, depth=k)
        return hits, packed(hits, sources, budget, k, overhead, words, wanted)

    got = filled(k, attempt)
    first = many.refs[0]
    notes = [*many.notes, left_out(got.left)] if got.left else list(many.notes)
    return Answer(text, first.path, got.results, first.commit, first.bundle_id, many.refs, notes)


def _embedders(many: Many, model: str | None) -> list[Any]:
    """The query's model for each bundle: the first bundle's (or `model`'s), shared by every bundle
    built with it; None for the others, each with a note."""
    lead = next((b for b in many.bundles if b.model is not None), None)
    if lead is None or model == "none":
        return [None] * len(many.bundles)
    return share_embedder(many, lead, embedder_for(lead, model))


def share_embedder(many: Many, lead: Bundle, embedder: Any) -> list[Any]:
    """`embedder` (the model of bundle `lead`) for every bundle built with the same model; None
    for the others, each with a note: vectors of two models do not compare."""
    want = (lead.model or {}).get("model_sha256")
    out: list[Any] = []
    for b, ref in zip(many.bundles, many.refs, strict=True):
        have = (b.model or {}).get("model_sha256")
        if b.model is not None and have != want:
            many.notes.append(f"{ref.name}: built with model {b.model.get('name')}, not the query's: "
                              "searched by BM25 only")  # fmt: skip
        out.append(embedder if have == want else None)
    return out


def first_holding(many: Many, target: str, run: Callable[[BundleChunks, str], T]) -> tuple[T, int]:
    """`run` on the bundle a qualified anchor or path names, else on the first that knows it."""

    def on(i: int, plain: str) -> T:
        b, w = many.bundles[i], many.wheres[i]
        return run(BundleChunks(b, work_tree(b, w.repo, w.default_repo)), plain)

    return first_answer(many.refs, target, on)


def run_show_many(anchor: str, ws: list[Where]) -> tuple[Shown, BundleRef | None]:
    """`show` over several bundles (and the bundle that answered; None for one bundle)."""
    if len(ws) == 1:
        return run_show(anchor, ws[0]), None
    many = open_many(ws)
    shown, i = first_holding(many, anchor, show)
    return shown, many.refs[i]


def run_related_many(anchor: str, ws: list[Where], k: int,
                     full: bool) -> tuple[Related, Bundle, BundleRef | None]:  # fmt: skip
    if len(ws) == 1:
        rel, b = run_related(anchor, ws[0], k, full)
        return rel, b, None
    many = open_many(ws)
    rel, i = first_holding(many, anchor, lambda src, a: related_results(src, a, k, full))
    return rel, many.bundles[i], many.refs[i]


def run_outline_many(path: str, ws: list[Where]) -> tuple[Outline, Bundle, BundleRef | None]:
    if len(ws) == 1:
        o, b = run_outline(path, ws[0])
        return o, b, None
    many = open_many(ws)
    o, i = first_holding(many, path, outline)
    return o, many.bundles[i], many.refs[i]
