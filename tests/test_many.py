"""Several bundles as one: a library and an app that imports it, indexed apart, queried together."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import dedent_files, init_repo

from cora_ci.bundle import open_bundle
from cora_ci.retrieval.many import Part, search_many

CORA = shutil.which("cora-ci", path=os.path.dirname(sys.executable)) or "cora-ci"

LIBRARY = {
    "authlib/auth.py": '''\
        """Authentication."""


        class Authenticator:
            """Checks a user's credentials against the store."""

            def verify_credentials(self, user, password):
                """True when the password matches the stored hash."""
                return hash_password(password) == self.stored(user)

            def stored(self, user):
                return "x"


        def hash_password(password):
            """A salted hash of the password."""
            return str(len(password))
        ''',
}
APP = {
    "views.py": '''\
        from authlib.auth import Authenticator


        def handle_sign_in(request):
            """The sign-in form's endpoint: checks the posted user and password."""
            auth = Authenticator()
            if auth.verify_credentials(request.user, request.password):
                return "welcome"
            return "denied"
        ''',
    ".cora.toml": 'bundles = ["../authlib/.cora/index"]\n',
}


def cora(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CORA, *args], cwd=cwd, capture_output=True, text=True, env=env, check=False)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}


@pytest.fixture
def app(tmp_path: Path, env: dict[str, str]) -> Path:
    lib = init_repo(tmp_path / "authlib", dedent_files(LIBRARY))
    app = init_repo(tmp_path / "app", dedent_files(APP))
    for repo in (lib, app):
        out = cora("index", "-q", cwd=repo, env=env)
        assert out.returncode == 0, out.stderr
    return app


def _query(app: Path, env: dict[str, str], *args: str) -> dict[str, object]:
    out = cora("query", *args, "--format", "json", cwd=app, env=env)
    assert out.returncode == 0, out.stderr
    doc: dict[str, object] = json.loads(out.stdout)
    return doc


def test_the_config_adds_dependency_bundles_to_every_query(app: Path, env: dict[str, str]) -> None:
    doc = _query(app, env, "salted password hash", "-k", "3")
    assert [b["name"] for b in doc["bundles"]] == ["app", "authlib"]  # type: ignore[index,union-attr]
    top = doc["results"][0]  # type: ignore[index]
    assert (top["bundle"]["name"], top["anchor"]) == ("authlib", "authlib/auth.py::hash_password")
    assert top["bundle"]["source"].startswith("authlib@")
    own = _query(app, env, "sign-in form endpoint", "-k", "3")["results"][0]  # type: ignore[index]
    assert (own["bundle"]["name"], own["anchor"]) == ("app", "views.py::handle_sign_in")


def test_references_into_a_dependency_are_followed(app: Path, env: dict[str, str]) -> None:
    """The app's hit calls `verify_credentials`, which only the library defines: expansion follows."""
    doc = _query(app, env, "sign-in form endpoint", "-k", "5", "--explain")
    linked = [r for r in doc["results"] if (r["explain"].get("graph") or 0) > 0]  # type: ignore[union-attr,attr-defined]
    # the method's own lines (7-9), reported alone or within the class it merges into
    assert any(r["path"] == "authlib/auth.py" and r["start_line"] <= 7 and r["end_line"] >= 9 for r in linked)
    lib = open_bundle(app.parent / "authlib" / ".cora" / "index")
    own = open_bundle(app / ".cora" / "index")
    alone = search_many([Part(own)], "sign-in form endpoint", k=5)
    joined = search_many([Part(own), Part(lib)], "sign-in form endpoint", k=5)
    assert all(h.origin == 0 for h in alone)
    assert any(h.origin == 1 and (h.explain.get("graph") or 0) > 0 for h in joined)


def test_k_budget_and_filters_apply_to_the_whole_list(app: Path, env: dict[str, str]) -> None:
    assert len(_query(app, env, "password", "-k", "1")["results"]) == 1  # type: ignore[arg-type]
    only = _query(app, env, "password", "--path", "authlib/*")["results"]
    assert only and {r["bundle"]["name"] for r in only} == {"authlib"}  # type: ignore[index,union-attr]
    tight = _query(app, env, "password", "--budget", "40")["results"]
    assert any(r["elided"] for r in tight)  # type: ignore[index,union-attr]


def test_explicit_bundles_replace_the_config_and_text_names_them(
    app: Path, env: dict[str, str], tmp_path: Path
) -> None:
    lib = str(tmp_path / "authlib" / ".cora" / "index")
    alone = _query(app, env, "password", "--bundle", lib)
    assert "bundles" not in alone and alone["results"]  # one bundle: the usual answer
    text = cora("query", "hash_password", "--bundle", str(app / ".cora" / "index"), "--bundle", lib,
                "--format", "text", "-k", "1", cwd=tmp_path, env=env).stdout  # fmt: skip
    assert text.startswith("── authlib:authlib/auth.py:")
    blocks = cora("query", "hash_password", "-k", "1", cwd=app, env=env).stdout
    assert 'bundle="authlib" file="authlib/auth.py"' in blocks


def test_show_related_and_outline_take_qualified_anchors(app: Path, env: dict[str, str]) -> None:
    shown = cora("show", "authlib/auth.py::hash_password", "--format", "json", cwd=app, env=env)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["bundle"]["name"] == "authlib"
    assert cora("show", "authlib:authlib/auth.py::hash_password", cwd=app, env=env).returncode == 0
    wrong = cora("show", "app:authlib/auth.py::hash_password", cwd=app, env=env)
    assert wrong.returncode == 4 and wrong.stderr.startswith("error: CORA-QRY-004: ")
    outline = json.loads(
        cora("outline", "authlib:authlib/auth.py", "--format", "json", cwd=app, env=env).stdout
    )
    assert outline["symbols"][0]["anchor"] == "authlib/auth.py::Authenticator"
    rel = cora("related", "authlib/auth.py::hash_password", "--format", "json", cwd=app, env=env)
    assert rel.returncode == 0 and json.loads(rel.stdout)["results"]


def test_a_missing_dependency_bundle_is_an_error_naming_the_entry(app: Path, env: dict[str, str]) -> None:
    (app / ".cora.toml").write_text('bundles = ["../authlib/.cora/index", "deps/nope.tar.gz"]\n')
    out = cora("query", "password", cwd=app, env=env)
    assert out.returncode == 5 and out.stderr.startswith(
        "error: CORA-BND-001: dependency bundle 'deps/nope.tar.gz'"
    )
    (app / "deps").mkdir()
    (app / "deps" / "broken.tar.gz").write_bytes(b"not an archive")
    (app / ".cora.toml").write_text('bundles = ["deps/broken.tar.gz"]\n')
    broken = cora("query", "password", cwd=app, env=env)
    assert broken.returncode == 5 and broken.stderr.startswith(
        "error: CORA-BND-009: dependency bundle 'deps/broken.tar.gz' in the config of "
    )
    (app / ".cora.toml").write_text("bundles = 3\n")
    bad = cora("query", "password", cwd=app, env=env)
    assert bad.returncode == 3 and bad.stderr.startswith("error: CORA-CFG-002: bundles: ")


def test_a_lexical_dependency_ranks_with_a_vector_bundle(tmp_path: Path, env: dict[str, str]) -> None:
    """A dependency indexed without vectors is searched by BM25 and still comes first where it matches."""
    lib = init_repo(tmp_path / "authlib", dedent_files(LIBRARY))
    app = init_repo(tmp_path / "app", dedent_files(APP))
    assert cora("index", "-q", "--model", "none", cwd=lib, env=env).returncode == 0
    assert cora("index", "-q", cwd=app, env=env).returncode == 0
    top = _query(app, env, "hash_password", "-k", "2")["results"][0]  # type: ignore[index]
    assert (top["bundle"]["name"], top["symbol"]) == ("authlib", "hash_password")


def test_a_bundle_of_another_model_is_searched_lexically_with_a_note(app: Path, tmp_path: Path) -> None:
    """Vectors of two models do not compare: the other model's bundle gets BM25 only, and a note."""
    from cora_ci.render.many import Where, _embedders, answer_many, open_many
    from cora_ci.render.query import embedder_for
    from cora_ci.retrieval.types import Filters

    lib = tmp_path / "authlib" / ".cora" / "index"
    many = open_many([Where(app / ".cora" / "index", None, None), Where(lib, None, None)])
    many.bundles[1].manifest["model"] = {**many.bundles[1].manifest["model"], "model_sha256": "0" * 64,
                                         "name": "another-model"}  # fmt: skip
    embedders = _embedders(many, None)
    assert embedders[0] is not None and embedders[1] is None
    assert many.notes == ["authlib: built with model another-model, not the query's: searched by BM25 only"]
    ans = answer_many(many, "salted password hash", embedders, 5, None, (), Filters())
    lib_hits = [r for r in ans.results if r.hit.origin == 1]
    assert lib_hits and all(r.hit.explain.get("vector_rank") is None for r in lib_hits)
    assert ans.notes == many.notes and embedder_for(many.bundles[0], None) is not None


def test_a_query_reads_only_the_bundles_of_the_config(app: Path, env: dict[str, str]) -> None:
    """A key this cora-ci does not know (a newer one's) stops a build, never a query."""
    (app / ".cora.toml").write_text('bundles = ["../authlib/.cora/index"]\nfuture_key = 1\n')
    out = cora("query", "hash_password", "--format", "json", "-k", "1", cwd=app, env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["results"][0]["bundle"]["name"] == "authlib"
    build = cora("index", "--worktree", "-q", cwd=app, env=env)  # the config on disk
    assert build.stderr.startswith("error: CORA-CFG-001: unknown key 'future_key'"), build.stderr
