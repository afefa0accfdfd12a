"""A question about a flow or a concept is often answered in a central module: for a question
(how, what, where, which, why), a chunk gains a share of how much of the other files' code refers
to its file (`Catalog.file_popularity`, `central` in `Params`); a description does not."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conftest import dedent_files, init_repo

from cora_ci.build import build
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.retrieval import Hit, search
from cora_ci.retrieval.catalog import catalog
from cora_ci.retrieval.params import PARAMS

# Two dispatchers, the old one's words a little closer to the question; the app's modules
# all use `router.py`'s.
ROUTES = {
    "app/router.py": """\
        def dispatch(routes, path):
            for prefix, handler in routes:
                if path.startswith(prefix):
                    return handler(path)
            return None
        """,
    "app/legacy_router.py": """\
        def dispatch_request(routes, path):
            # path routes handler
            for prefix, handler in routes:
                if path.startswith(prefix):
                    return handler(path)
            return None
        """,
    **{
        f"app/views_{n}.py": f"""\
            from app.router import dispatch


            def serve_{n}(routes, path):
                return dispatch(routes, path)
            """
        for n in range(4)
    },
}


def _bundle(tmp_path: Path) -> Bundle:
    repo = init_repo(tmp_path / "r", dedent_files(ROUTES))
    build(repo, model="none")
    return open_bundle(repo / ".cora" / "index")


def _paths(b: Bundle, hits: list[Hit]) -> list[str]:
    t = b.chunks
    return [t.chunk(t.row_of[h.chunk_id]).path for h in hits]


def test_a_question_prefers_the_module_the_code_refers_to(tmp_path: Path) -> None:
    b = _bundle(tmp_path)
    pop = catalog(b).file_popularity(["app/router.py", "app/legacy_router.py", "app/views_0.py"])
    assert pop == {"app/router.py": 1.0}  # referenced from four other files; the others from none
    question = "how are routes matched against the path to find the handler"
    assert _paths(b, search(b, question, expand=False))[0] == "app/router.py"
    flat = search(b, question, expand=False, params=replace(PARAMS, central=0.0))
    assert _paths(b, flat)[0] == "app/legacy_router.py"  # without the prior: the tie goes the other way


def test_a_description_is_not_a_question(tmp_path: Path) -> None:
    b = _bundle(tmp_path)
    for h in search(b, "Routes are matched against the path to find the handler.", expand=False):
        assert h.explain["popular"] is None or h.explain["popular"] < PARAMS.central
