"""`cora-ci query` and `show` without the command line: bundle, model, boosts, ranking, answer.

Read-only by construction: the bundle is opened with `open_bundle` (which never writes into it;
an archive is extracted into the user's cache), the working tree is only read, and nothing here
opens a socket.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from cora_ci.bundle import Bundle, open_bundle
from cora_ci.errors import CoraError
from cora_ci.files.walk import git_toplevel
from cora_ci.rebind.bind import WorkTree
from cora_ci.render.answer import Overhead, Packed, Result, filled, left_out, packed
from cora_ci.render.bundles import BundleRef
from cora_ci.render.members import asked_by
from cora_ci.render.outline import Outline, outline
from cora_ci.render.related import Related, related_results
from cora_ci.render.source import BundleChunks, Shown, show, work_tree
from cora_ci.retrieval.types import Boost, Filters, Hit

T = TypeVar("T")


@dataclass
class Answer:
    query: str
    bundle: str  # as the user named it (a directory or an archive)
    results: list[Result]
    commit: str | None  # the indexed commit, for `missing` results
    bundle_id: str | None = None  # the sha256 of the manifest of the bundle that answered
    bundles: list[BundleRef] = field(default_factory=list)  # when several answered (`render.many`)
    notes: list[str] = field(default_factory=list)  # what was searched otherwise than asked


@dataclass(frozen=True)
class Where:
    """Which bundle and working tree a command uses."""

    bundle: Path
    repo: Path | None  # --repo as given
    default_repo: Path | None  # the current repository (or directory, outside git)
    entry: str | None = None  # the config's `bundles` entry it comes from, to name in an error

    @classmethod
    def of(cls, bundle: Path | None, repo: Path | None, cwd: Path) -> Where:
        if repo is not None and not repo.is_dir():
            raise CoraError("CORA-IO-001", f"--repo {repo}: no such directory")
        here = git_toplevel(cwd) or cwd
        root = repo if repo is not None else here
        return cls(bundle if bundle is not None else root / ".cora" / "index", repo, here)


def embedder_for(bundle: Bundle, model: str | None) -> Any:
    """The model to embed the query with: the bundle's own (with no `--model` or "default", the
    bundled model it was built with, whichever that is; else the model `--model` names, which must
    be the same), or None for BM25 only (a bundle built with `--model none`, or `--model none` given)."""
    recorded = bundle.model
    if recorded is None or model == "none":
        return None
    from cora_ci.embedding import deferred_embedder, load_embedder
    from cora_ci.embedding.loading import bundled_named

    want = str(recorded.get("model_sha256"))
    name, sha = recorded.get("name"), want[:12]
    if model in (None, "default"):
        own = bundled_named(want)
        if own is None:
            raise CoraError(
                "CORA-BND-005",
                f"{bundle.root} was built with model {name} ({sha}...), not a bundled one",
                "pass that model's directory with --model DIR, or --model none for BM25 only",
            )
        return deferred_embedder(own)  # read when first used: an identifier found by name needs none
    embedder = load_embedder(model)
    if embedder is None or embedder.info.model_sha256 != want:
        raise CoraError(
            "CORA-BND-005",
            f"{bundle.root} was built with model {name} ({sha}...), not {model}",
            "leave out --model to use the bundle's own, or --model none for BM25 only",
        )
    return embedder


def check_names(bundles: list[Bundle], filters: Filters, boosts: tuple[str, ...]) -> None:
    """`--lang` and `--boost` name things of the bundles, or fail naming what there is: a typo
    would otherwise give an empty or an unboosted answer without a word."""
    from cora_ci.retrieval import parse_boost
    from cora_ci.retrieval.catalog import catalog
    from cora_ci.retrieval.select import definitions

    if filters.langs:  # (read only when asked: a query's path is hot)
        langs = sorted({lang for b in bundles for lang in b.manifest["files"]["lang"]})
        for lang in filters.langs:
            if lang not in langs:
                raise CoraError("CORA-CFG-002", f"--lang {lang!r}: no file of that language in the bundle",
                                f"it has: {', '.join(langs) or 'no files'}")  # fmt: skip
    for text in boosts:
        b = parse_boost(text)
        if b.kind == "path" and all(bundle.chunks.file_index(b.value) is None for bundle in bundles):
            raise CoraError("CORA-CFG-002", f"--boost {text!r}: no file {b.value!r} in the bundle",
                            "paths are relative to the repository root, as results print them")  # fmt: skip
        under = b.value + "/"
        if b.kind == "dir" and not any(p.startswith(under) for bundle in bundles
                                       for p in bundle.manifest["files"]["path"]):  # fmt: skip
            raise CoraError("CORA-CFG-002", f"--boost {text!r}: no file under {b.value!r} in the bundle",
                            "directories are relative to the repository root")  # fmt: skip
        if b.kind == "symbol" and not any(definitions(catalog(bundle), b.value) for bundle in bundles):
            raise CoraError("CORA-CFG-002", f"--boost {text!r}: nothing in the bundle defines {b.value!r}",
                            "name a class or function (Class.method), or give an anchor")  # fmt: skip


def boosts_for(bundle: Bundle, given: tuple[str, ...], repo: Path | None) -> tuple[Boost, ...]:
    """`--boost` directives, then the working tree's `.cora-boosts`, then those the bundle records."""
    from cora_ci.retrieval import bundle_boosts, merge, parse_boost, read_boosts

    cli = [parse_boost(b) for b in given]
    local = read_boosts(repo / ".cora-boosts") if repo is not None else []
    return merge(cli, local, bundle_boosts(bundle.manifest))


def run_query(
    text: str,
    where: Where,
    *,
    k: int = 10,
    budget: int | None = None,
    boosts: tuple[str, ...] = (),
    filters: Filters = Filters(),  # noqa: B008 - frozen
    model: str | None = None,
    overhead: Overhead | None = None,
) -> Answer:
    """Rank the bundle's chunks for `text` and pack the answer, re-bound to the working tree;
    `overhead` counts what each result prints besides its code against the budget."""

    def answer(bundle: Bundle) -> Answer:
        return _answer(bundle, text, where, k, budget, boosts, filters, model, overhead)

    return _once_more_if_replaced(where, answer)


def _once_more_if_replaced(where: Where, run: Callable[[Bundle], T]) -> T:
    """`run` on the bundle; once more on the new one if an update replaced it meanwhile and this
    reader met the old one's files gone (a reader never mixes the two: `Bundle`)."""
    bundle = open_bundle(where.bundle)
    try:
        return run(bundle)
    except CoraError as e:
        if e.code not in ("CORA-BND-003", "CORA-BND-004") or not bundle.replaced():
            raise
    return run(open_bundle(where.bundle))


def _answer(bundle: Bundle, text: str, where: Where, k: int, budget: int | None, boosts: tuple[str, ...],
            filters: Filters, model: str | None, overhead: Overhead | None) -> Answer:  # fmt: skip
    from cora_ci.retrieval.catalog import catalog
    from cora_ci.retrieval.search import prefetch

    check_names([bundle], filters, boosts)
    with ThreadPoolExecutor(2, thread_name_prefix="cora-ahead") as pool:
        ahead = pool.submit(_embedder_ahead, bundle, model, text)
        found = pool.submit(work_tree, bundle, where.repo, where.default_repo)  # may wait for git
        bundle.lexical, bundle.vectors, catalog(bundle).graph  # opened while the model loads
        prefetch(bundle, text, k, filters)
        tree = found.result()
        all_boosts = boosts_for(bundle, boosts, tree.root if tree is not None else None)
        embedder = ahead.result()
    return answer_with(
        bundle, text, tree, embedder, str(where.bundle), k, budget, all_boosts, filters, overhead
    )


def answer_with(bundle: Bundle, text: str, tree: WorkTree | None, embedder: Any, name: str, k: int,
                budget: int | None, boosts: tuple[Boost, ...], filters: Filters,
                overhead: Overhead | None = None) -> Answer:  # fmt: skip
    """Rank and pack with everything at hand: a one-shot query and the MCP server's warm one."""
    from cora_ci.retrieval import search
    from cora_ci.retrieval.query import analyse

    source = BundleChunks(bundle, tree)
    q = analyse(text)
    words, wanted = sorted(q.words), asked_by(q, text)

    def attempt(n: int) -> tuple[list[Hit], Packed]:
        hits = search(bundle, text, k=n, embedder=embedder, filters=filters, boosts=boosts, depth=k)
        return hits, packed(hits, source, budget, k, overhead, words, wanted)

    got = filled(k, attempt)
    commit = (bundle.manifest.get("source") or {}).get("commit")
    return Answer(text, name, got.results, commit, bundle.id, notes=[left_out(got.left)] if got.left else [])


class _Ahead:
    """The query's embedder with the query's vector computed beforehand (same text, same vector)."""

    def __init__(self, embedder: Any, text: str, vector: Any) -> None:
        self.embedder, self.text, self.vector = embedder, text, vector

    def embed_query(self, text: str) -> Any:
        return self.vector if text == self.text else self.embedder.embed_query(text)


def _embedder_ahead(bundle: Bundle, model: str | None, text: str) -> Any:
    """Load the model and embed a natural-language query, in a thread: onnxruntime releases the
    GIL while it builds its session (~0.1 s), so that overlaps opening the indexes and the graph.
    An identifier query weighs the vectors at nothing, so its embedding is left to `search`, as a
    static table's is: it weighs the query's words by the BM25 index (`query.rarity`), and takes
    microseconds."""
    from cora_ci.retrieval.query import analyse

    embedder = embedder_for(bundle, model)
    q = analyse(text)
    if embedder is None or q.identifier is not None or not q.text or hasattr(embedder, "embed_weighted"):
        return embedder
    return _Ahead(embedder, q.text, embedder.embed_query(q.text))


def run_show(anchor: str, where: Where) -> Shown:
    """One symbol's current code (`cora-ci show`)."""
    return _once_more_if_replaced(where, lambda bundle: show(_source(bundle, where), anchor))


def run_related(anchor: str, where: Where, k: int, full: bool = False) -> tuple[Related, Bundle]:
    """What to read next about one symbol (`cora-ci related`), and the bundle that answered."""
    return _once_more_if_replaced(where, lambda b: (related_results(_source(b, where), anchor, k, full), b))


def run_outline(path: str, where: Where) -> tuple[Outline, Bundle]:
    """One file's symbols (`cora-ci outline`), and the bundle that answered."""
    return _once_more_if_replaced(where, lambda b: (outline(_source(b, where), path), b))


def _source(bundle: Bundle, where: Where) -> BundleChunks:
    return BundleChunks(bundle, work_tree(bundle, where.repo, where.default_repo))
