"""Ranking on real bundles of small real git repositories: each rule of `cora_ci.retrieval.search`."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conftest import git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cora_ci.build import build
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.bundle.lexical import terms
from cora_ci.errors import CoraError
from cora_ci.retrieval import (
    EXPLAIN_KEYS,
    PARAMS,
    Boost,
    Filters,
    Hit,
    bundle_boosts,
    merge,
    parse_boost,
    read_boosts,
    search,
)
from cora_ci.retrieval.catalog import catalog, path_class

FILES = {
    ".cora.toml": "min_tokens = 0\n",  # every symbol its own chunk, however small
    "README.md": """\
        # Shop

        A small shop. Its engine is described in the code.

        ## Install

        Run the installer.
        """,
    "src/resolvers.py": '''\
        class CompositeResolver:
            """Tries each resolver in turn."""

            def __init__(self, resolvers):
                self.resolvers = list(resolvers)

            def resolve(self, name):
                for r in self.resolvers:
                    found = r.resolve(name)
                    if found is not None:
                        return found
                return None

            def add_resolver(self, resolver, position=None, replace_existing=False, validate=True):
                self.resolvers.insert(len(self.resolvers) if position is None else position, resolver)

            def remove_resolver(self, resolver, missing_ok=True, cascade=False, notify=None):
                self.resolvers.remove(resolver)

            def clear_resolvers(self, keep_defaults=False, reason=None, notify=None, force=False):
                self.resolvers.clear()
        ''',
    # Mentions CompositeResolver far more often than its definition does.
    "src/app.py": '''\
        from src.resolvers import CompositeResolver


        def composite_resolver(parts):
            """A CompositeResolver over every part, backed by a CompositeResolver."""
            resolver = CompositeResolver(parts)  # CompositeResolver over every part
            backup = CompositeResolver([resolver])  # a CompositeResolver of a CompositeResolver
            return CompositeResolver([backup, CompositeResolver(parts)])
        ''',
    "src/auth.py": '''\
        from src.crypto import hash_secret_value


        class Auth:
            """Checks credentials."""

            def login(self, user, password):
                """Log a user in with a password."""
                digest = hash_secret_value(password)
                return user.password_digest == digest

            def logout(self, user):
                user.token = None
        ''',
    "src/session.py": '''\
        class Session:
            def login(self, token):
                """Resume a session from a token."""
                self.token = token
                return True
        ''',
    "src/crypto.py": """\
        import hashlib


        def hash_secret_value(value):
            return hashlib.sha256(value.encode()).hexdigest()
        """,
    "src/core/engine.py": """\
        def start_engine(config):
            return {"engine": config, "running": True}
        """,
    "src/other/engine_tools.py": '''\
        def stop_engine(engine):
            """Stop the engine; a stopped engine stays an engine."""
            engine["running"] = False
            return engine
        ''',
    "tests/test_auth.py": """\
        from src.auth import Auth


        def test_login_with_password():
            user = make_user(password="password")
            assert Auth().login(user, "password")


        def test_login_rejects_wrong_password():
            user = make_user(password="password")
            assert not Auth().login(user, "wrong password")
        """,
    "examples/demo_login.py": """\
        def demo_login_password(auth, user, password):
            return auth.login(user, password)
        """,
    "web/widget.ts": """\
        export function renderWidget(id: number): string {
          return "widget " + id;
        }
        """,
}


def _dedent(files: dict[str, str]) -> dict[str, str]:
    return {k: textwrap.dedent(v) for k, v in files.items()}


def _repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    for name, text in _dedent(files).items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    repo = _repo(tmp_path_factory.mktemp("shop") / "repo", FILES)
    build(repo, model="none")
    return open_bundle(repo / ".cora" / "index")


def anchor_of(b: Bundle, cid: int) -> str:
    c = b.chunks.chunk(b.chunks.row_of[cid])
    return c.anchor or c.path


def anchors(b: Bundle, hits: list[Hit]) -> list[str]:
    return [anchor_of(b, h.chunk_id) for h in hits]


def path_of(b: Bundle, cid: int) -> str:
    return b.chunks.chunk(b.chunks.row_of[cid]).path


def well_formed(hits: list[Hit]) -> None:
    ids = [h.chunk_id for h in hits]
    assert len(ids) == len(set(ids))
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    for h in hits:
        assert set(EXPLAIN_KEYS) <= set(h.explain)


# ----------------------------------------------------------------------------- identifiers


def test_bare_identifier_ranks_its_definition_first(shop: Bundle) -> None:
    hits = search(shop, "CompositeResolver")
    well_formed(hits)
    assert anchors(shop, hits)[0] == "src/resolvers.py::CompositeResolver"
    assert hits[0].explain["definition"] and hits[0].explain["query"] == "identifier"
    # Its callers and its members name it too, but do not define it.
    others = [h for h in hits[1:] if path_of(shop, h.chunk_id) in ("src/app.py", "src/resolvers.py")]
    assert others and not any(h.explain["definition"] for h in others)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Auth.login", "src/auth.py::Auth.login"),
        ("Session.login", "src/session.py::Session.login"),
        ("Session::login", "src/session.py::Session.login"),
        ("Auth#login()", "src/auth.py::Auth.login"),
        ("src.auth.Auth.login", "src/auth.py::Auth.login"),
        ("hash_secret_value", "src/crypto.py::hash_secret_value"),
        ("renderWidget", "web/widget.ts::renderWidget"),
    ],
)
def test_qualified_identifiers_match_anchor_suffixes(shop: Bundle, query: str, expected: str) -> None:
    assert anchors(shop, search(shop, query))[0] == expected


def test_identifier_named_in_a_sentence_lifts_its_definition(shop: Bundle) -> None:
    hits = search(shop, "where is hash_secret_value used to check a password")
    top = anchors(shop, hits)[:2]
    assert "src/crypto.py::hash_secret_value" in top


# ----------------------------------------------------------------------------- path classes


def test_path_classes() -> None:
    assert path_class("tests/test_auth.py") == "test"
    assert path_class("src/auth_test.go") == "test"
    assert path_class("web/app.spec.ts") == "test"
    assert path_class("examples/demo.py") == "example"
    assert path_class("third_party/zlib/inflate.c") == "vendored"
    assert path_class("api/service_pb2.py") == "generated"
    assert path_class("src/auth.py") is None
    assert path_class("src/testing_utils.py") is None
    assert path_class("src/contest.py") is None


def test_tests_and_examples_rank_lower_unless_asked_for(shop: Bundle) -> None:
    hits = search(shop, "login password", expand=False)
    paths = [path_of(shop, h.chunk_id) for h in hits]
    assert paths[0] == "src/auth.py"
    demoted = [h for h in hits if h.explain["demoted"]]
    assert {path_of(shop, h.chunk_id) for h in demoted} >= {"tests/test_auth.py", "examples/demo_login.py"}
    # Without the demotion a test would win: it says "login" and "password" more often.
    plain = search(shop, "login password", expand=False, params=_with(demote=1.0))
    assert path_of(shop, plain[0].chunk_id) in ("tests/test_auth.py", "examples/demo_login.py")
    assert not any(h.explain["demoted"] for h in plain)
    # Opt-outs: the query names tests, or a path filter selects them.
    asked = search(shop, "login password tests", expand=False)
    assert path_of(shop, asked[0].chunk_id) == "tests/test_auth.py"
    assert not any(h.explain["demoted"] == "test" for h in asked)
    filtered = search(shop, "login password", filters=Filters(paths=("tests/**",)), expand=False)
    assert filtered and all(path_of(shop, h.chunk_id) == "tests/test_auth.py" for h in filtered)
    assert not any(h.explain["demoted"] for h in filtered)


def _with(**kw: object) -> object:
    from dataclasses import replace

    return replace(PARAMS, **kw)


# ----------------------------------------------------------------------------- diversity


@pytest.fixture(scope="module")
def widgets(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    many = "\n\n".join(
        f"def frobnicate_widget_{i}(widget):\n    return frobnicate(widget, {i})  # frobnicate the widget\n"
        for i in range(8)
    )
    files = {
        ".cora.toml": "min_tokens = 20\n",
        "src/many.py": many,
        "src/small.py": "class Small:\n    def ping(self):\n        return 1\n\n\n"
        "def other_ping(small, times, verbose=False):\n    total = sum(small.ping() for _ in range(times))\n"
        "    if verbose:\n        print('pinged', total, 'times')\n    return total\n",
        "src/one.py": "def frobnicate_widget_alone(widget):\n    return frobnicate(widget)  # frobnicate the widget\n",
        "src/two.py": "def widget_frobnicate_helper(widget):\n    return widget  # frobnicate the widget\n",
        "src/three.py": "def frobnicate_widgets(widgets):\n    return [frobnicate(w) for w in widgets]  # widget\n",
    }
    repo = _repo(tmp_path_factory.mktemp("widgets") / "repo", files)
    build(repo, model="none")
    return open_bundle(repo / ".cora" / "index")


def test_top_ten_is_not_one_file_while_a_file_with_several_strong_chunks_rises(widgets: Bundle) -> None:
    flat = search(widgets, "frobnicate widget", k=10, expand=False, params=_with(diversity=1.0, file=0.0))
    flat5 = [path_of(widgets, h.chunk_id) for h in flat[:5]]
    assert flat5[0] == "src/one.py" and flat5.count("src/many.py") == 4  # one best chunk, then a flood
    hits = search(widgets, "frobnicate widget", k=10, expand=False)
    well_formed(hits)
    top5 = [path_of(widgets, h.chunk_id) for h in hits[:5]]
    assert top5[0] == "src/many.py"  # eight strong chunks: the file rises above one.py
    assert top5.count("src/many.py") <= 3 and len(set(top5)) >= 3
    assert hits[0].explain["file"]
    later = [h for h in hits if path_of(widgets, h.chunk_id) == "src/many.py"][1:]
    assert later and all(h.explain["diversity"] is not None for h in later)


# ----------------------------------------------------------------------------- graph


def test_pagerank_expansion_adds_a_callee(shop: Bundle) -> None:
    query = "Log a user in with a password"
    without = search(shop, query, k=10, expand=False)
    assert "src/crypto.py::hash_secret_value" not in anchors(shop, without)
    hits = search(shop, query, k=10)
    well_formed(hits)
    by_anchor = dict(zip(anchors(shop, hits), hits, strict=True))
    callee = by_anchor["src/crypto.py::hash_secret_value"]
    assert callee.source == "graph" and callee.explain["graph"]
    assert callee.explain["bm25_rank"] is None


# ----------------------------------------------------------------------------- boosts


def test_path_boost_includes_the_whole_file_in_full(shop: Bundle) -> None:
    hits = search(shop, "hash_secret_value", boosts=[parse_boost("path:README.md")])
    well_formed(hits)
    readme = [h for h in hits if path_of(shop, h.chunk_id) == "README.md"]
    rows = catalog(shop).file_rows("README.md")
    assert len(readme) == len(rows) > 1
    assert all(h.full and h.source == "boost" and h.explain["boost"] == "pinned" for h in readme)
    assert anchors(shop, [h for h in hits if not h.full])[0] == "src/crypto.py::hash_secret_value"


def test_symbol_boost_includes_the_definition_and_its_members(shop: Bundle) -> None:
    hits = search(shop, "engine", boosts=[Boost("symbol", "Auth")])
    full = {anchor_of(shop, h.chunk_id) for h in hits if h.full}
    assert {"src/auth.py::Auth", "src/auth.py::Auth.login", "src/auth.py::Auth.logout"} <= full
    assert not any(a.startswith("src/session.py") for a in full)
    by_anchor = search(shop, "engine", boosts=[Boost("symbol", "src/session.py::Session.login")])
    assert {anchor_of(shop, h.chunk_id) for h in by_anchor if h.full} == {"src/session.py::Session.login"}


def test_dir_boost_ranks_a_directory_higher(shop: Bundle) -> None:
    plain = search(shop, "engine", expand=False)
    assert abs(plain[0].score - plain[1].score) < 0.1 * plain[0].score  # two close matches
    for d, first in (("./src/core/", "src/core/engine.py::start_engine"),
                     ("src/other", "src/other/engine_tools.py::stop_engine")):  # fmt: skip
        hits = search(shop, "engine", expand=False, boosts=[parse_boost(f"dir:{d}")])
        assert anchors(shop, hits)[0] == first
        assert hits[0].explain["dir"] == PARAMS.dir_boost and hits[1].explain["dir"] is None


def test_unknown_boost_targets_add_nothing(shop: Bundle) -> None:
    hits = search(shop, "engine", boosts=[Boost("path", "nope.md"), Boost("symbol", "NoSuchThing")])
    assert not any(h.full for h in hits)


def test_parse_boost_and_read_boosts(tmp_path: Path) -> None:
    assert parse_boost(" symbol: Auth.login ") == Boost("symbol", "Auth.login")
    assert parse_boost("DIR:src\\core\\") == Boost("dir", "src/core")
    for bad in ("README.md", "file:README.md", "path:", "dir:../x", "path:/etc/passwd", ""):
        with pytest.raises(CoraError) as e:
            parse_boost(bad)
        assert e.value.code == "CORA-CFG-002"
    f = tmp_path / ".cora-boosts"
    f.write_text("# always give the agent the readme\npath:README.md\n\n  dir:src/core\nsymbol:Auth\n")
    assert read_boosts(f) == [Boost("path", "README.md"), Boost("dir", "src/core"), Boost("symbol", "Auth")]
    assert read_boosts(tmp_path / "missing") == []
    f.write_text("path:README.md\nbogus\n")
    with pytest.raises(CoraError) as e:
        read_boosts(f)
    assert e.value.code == "CORA-CFG-002" and ":2:" in e.value.message
    assert bundle_boosts({"boosts": ["path:README.md"]}) == [Boost("path", "README.md")]
    assert bundle_boosts({}) == []
    assert merge([Boost("dir", "a")], (Boost("dir", "a"), Boost("path", "b"))) == (
        Boost("dir", "a"),
        Boost("path", "b"),
    )


# ----------------------------------------------------------------------------- filters


@pytest.mark.parametrize(
    ("filters", "ok"),
    [
        (Filters(langs=("typescript",)), lambda p, k: p.endswith(".ts")),
        (Filters(kinds=("method",)), lambda p, k: k == "method"),
        (Filters(paths=("src/**",)), lambda p, k: p.startswith("src/")),
        (Filters(excludes=("src/", "*.md")), lambda p, k: not p.startswith("src/") and not p.endswith(".md")),
        (
            Filters(langs=("python",), excludes=("tests/",)),
            lambda p, k: p.endswith(".py") and "tests" not in p,
        ),
    ],
)
def test_filters(shop: Bundle, filters: Filters, ok: object) -> None:
    hits = search(shop, "login widget engine password resolver", k=20, filters=filters)
    assert hits
    for h in hits:
        c = shop.chunks.chunk(shop.chunks.row_of[h.chunk_id])
        assert ok(c.path, c.kind), (filters, c.path, c.kind)  # type: ignore[operator]


def test_bad_glob_is_a_clear_error(shop: Bundle) -> None:
    with pytest.raises(CoraError) as e:
        search(shop, "login", filters=Filters(paths=("",)))
    assert e.value.code == "CORA-CFG-002"


# ----------------------------------------------------------------------------- explain, user text


def test_explain_is_filled_for_every_hit(shop: Bundle) -> None:
    hits = search(shop, "login password", k=10)
    for h in hits:
        assert set(h.explain) == set(EXPLAIN_KEYS)
        if h.source == "search":
            assert h.explain["bm25_rank"] is not None and h.explain["bm25_score"] is not None
            assert h.explain["fused"] is not None
        assert h.explain["vector_rank"] is None  # a model-none bundle, no embedder


@pytest.mark.parametrize(
    "text", ['"foo(" AND OR :: [', "field:value", "NOT", "a" * 5000, "ünïcødé λ", "(((login"]
)
def test_user_text_never_breaks_the_query(shop: Bundle, text: str) -> None:
    well_formed(search(shop, text))


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "((( ))) :: ...", "*", "\\"])
def test_empty_query_is_a_clear_error(shop: Bundle, text: str) -> None:
    with pytest.raises(CoraError) as e:
        search(shop, text)
    assert e.value.code == "CORA-QRY-001"
    assert e.value.one_line().startswith("error: CORA-QRY-001: ")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=60), k=st.integers(min_value=0, max_value=15))
def test_any_query_gives_distinct_ids_sorted_by_score(shop: Bundle, text: str, k: int) -> None:
    try:
        hits = search(shop, text, k=k)
    except CoraError as e:
        assert e.code == "CORA-QRY-001" and not terms(text.strip()[:2000])
        return
    well_formed(hits)
    assert len(hits) <= k


def test_chunk_table_rows_are_grouped_by_file_in_path_order(shop: Bundle) -> None:
    """`catalog.file_rows` binary-searches on this order; a change in the bundle must show here."""
    paths = [shop.chunks.chunk(r).path for r in range(len(shop.chunks))]
    assert paths == sorted(paths)
    cat = catalog(shop)
    for p in set(paths):
        assert [shop.chunks.chunk(r).path for r in cat.file_rows(p)] == [p] * paths.count(p)
    assert not cat.file_rows("no/such/file.py")


# ----------------------------------------------------------------------------- vectors


@pytest.fixture(scope="module")
def shop_vectors(tmp_path_factory: pytest.TempPathFactory) -> tuple[Bundle, object]:
    from cora_ci.embedding import load_embedder

    repo = _repo(tmp_path_factory.mktemp("shopv") / "repo", FILES)
    build(repo)
    return open_bundle(repo / ".cora" / "index"), load_embedder("default")


def test_natural_language_finds_code_through_the_vectors(shop_vectors: tuple[Bundle, object]) -> None:
    b, emb = shop_vectors
    query = "compute a sha256 digest of a string"
    assert not {t for t in terms(query)} & set(terms("def hash_secret_value(value)"))
    hits = search(b, query, embedder=emb, expand=False)
    well_formed(hits)
    top = hits[0]
    assert anchor_of(b, top.chunk_id) == "src/crypto.py::hash_secret_value"
    assert top.explain["vector_rank"] == 1 and top.explain["vector_score"] is not None
    assert top.explain["query"] == "text"
    # Without the embedder the same bundle ranks lexically.
    assert all(h.explain["vector_rank"] is None for h in search(b, query, expand=False))


def test_qualified_member_of_a_type_kept_whole(widgets: Bundle) -> None:
    """A type under min_tokens is one chunk: `Small.ping` is defined in the chunk of `Small`."""
    c = [widgets.chunks.chunk(r) for r in range(len(widgets.chunks))]
    small = next(x for x in c if x.anchor == "src/small.py::Small")
    assert not small.children and "def ping" in small.text
    hits = search(widgets, "Small.ping")
    assert hits[0].chunk_id == small.id and hits[0].explain["definition"]
    assert not any(h.explain["definition"] for h in search(widgets, "Small.pong"))


def test_local_pagerank_equals_the_whole_graph_when_the_neighbourhood_is_whole(shop: Bundle) -> None:
    """The neighbourhood PageRank is the whole-graph one on the references plus weighted reverse edges."""
    from cora_ci.graph import Graph, personalized_pagerank
    from cora_ci.retrieval.expand import graph_scores

    g = shop.graph
    n = len(g.ids)
    edges: dict[tuple[int, int], float] = {}
    for i in range(n):
        for j, w in zip(
            g.indices[g.indptr[i] : g.indptr[i + 1]], g.weights[g.indptr[i] : g.indptr[i + 1]], strict=True
        ):
            edges[(i, j)] = edges.get((i, j), 0.0) + w
            edges[(j, i)] = edges.get((j, i), 0.0) + 0.5 * w
    indptr, indices, weights = [0], [], []
    for i in range(n):
        row = sorted((j, w) for (a, j), w in edges.items() if a == i)
        indices += [j for j, _ in row]
        weights += [w for _, w in row]
        indptr.append(len(indices))
    both = Graph(list(g.ids), indptr, indices, weights)
    login = next(
        shop.chunks.chunk(r).id
        for r in range(len(shop.chunks))
        if shop.chunks.chunk(r).anchor == "src/auth.py::Auth.login"
    )
    seeds = {login: 1.0}
    want = {k: v for k, v in personalized_pagerank(both, seeds, alpha=0.85).items() if k != login}
    got = graph_scores(catalog(shop).graph, seeds, reverse=0.5, hops=10)
    assert want and set(got) == set(want)
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-6)
