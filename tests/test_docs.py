"""Every shell example of README.md and docs/ runs, in a sandbox repository that has what they name.

A ```sh block is an example to run; a plain ``` block is a synopsis or needs what a test cannot
have (GitHub, a second machine, minutes). README's first block is CI's own (install and tests),
and lines that install packages (`pip install`) are left to it: the package is installed here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import dedent_files, git, init_repo

ROOT = Path(__file__).resolve().parent.parent
BIN = os.path.dirname(sys.executable)
CORA = shutil.which("cora-ci", path=BIN) or "cora-ci"


def _blocks() -> list[tuple[str, int, str]]:
    """(file, index, commands) of every ```sh block but README's first."""
    out = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        blocks = re.findall(r"^```sh\n(.*?)^```$", doc.read_text(), re.M | re.S)
        for i, block in enumerate(blocks):
            if doc.name == "README.md" and i == 0:
                continue
            lines = [line for line in block.splitlines() if "pip install" not in line]
            out.append((str(doc.relative_to(ROOT)), i, "\n".join(lines)))
    return out


APP = {
    "src/app/session.py": '''\
        """HTTP sessions."""

        MAX_RETRIES = 3  # where retries are configured: a failed request is tried this often


        class Session:
            """A connection pool with retries."""

            def send(self, request):
                """Send a request, retrying a failed one up to MAX_RETRIES times."""
                for attempt in range(MAX_RETRIES):
                    response = self.adapter.send(request)
                    if response.ok:
                        return response
                return response
        ''',
    "src/app/api.py": '''\
        from app.session import Session


        def get(url):
            """Fetch a URL with a fresh session."""
            return Session().send(url)
        ''',
}
LIB = {
    "authlib/tokens.py": '''\
        def verify_token(token, key):
            """Verify a token's signature with the key."""
            return token.endswith(key)
        ''',
}


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The app repository with a bundle, an older bundle packed as `old-index.tar.gz`, and a
    dependency's bundle as `deps/authlib-index.tar.gz`."""
    tmp = tmp_path_factory.mktemp("docs")
    env = {**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"], "XDG_CACHE_HOME": str(tmp / "cache"),
           "NO_COLOR": "1"}  # fmt: skip
    lib = init_repo(tmp / "authlib", dedent_files(LIB))
    app = init_repo(tmp / "app", dedent_files(APP))

    def run(*args: str, cwd: Path) -> None:
        subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True)

    run(CORA, "index", "-q", cwd=lib)
    run(CORA, "pack", str(lib / ".cora" / "index"), str(app / "deps" / "authlib-index.tar.gz"), cwd=app)
    run(CORA, "index", "-q", cwd=app)
    run(CORA, "pack", str(app / ".cora" / "index"), str(app / "old-index.tar.gz"), cwd=app)
    api = app / "src" / "app" / "api.py"
    api.write_text(api.read_text() + "\n\ndef post(url, body):\n    return Session().send((url, body))\n")
    git(app, "add", "src")
    git(app, "commit", "-qm", "post")
    run(CORA, "index", "-q", cwd=app)
    return app, env


@pytest.mark.parametrize(("doc", "index", "commands"), _blocks(), ids=lambda v: str(v)[:40])
def test_the_shell_examples_run(
    sandbox: tuple[Path, dict[str, str]], doc: str, index: int, commands: str
) -> None:
    app, env = sandbox
    p = subprocess.run(["bash", "-euo", "pipefail", "-c", commands], cwd=app, env=env, capture_output=True,
                       text=True, check=False, timeout=300)  # fmt: skip
    assert p.returncode == 0, f"{doc}, sh block {index}:\n{commands}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
    assert "Traceback" not in p.stderr


def test_there_are_examples_to_run() -> None:
    assert len(_blocks()) >= 6


def test_the_readme_example_query_answers_with_the_code_asked_for(tmp_path: Path) -> None:
    """README's first command indexes this repository and asks it one question: the first answer
    must be the code that verifies a bundle."""
    first = re.findall(r"^```sh\n(.*?)^```$", (ROOT / "README.md").read_text(), re.M | re.S)[0]
    question = re.search(r'cora-ci query "([^"]+)"', first)
    assert question is not None
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    out = tmp_path / "bundle"
    subprocess.run(
        [CORA, "index", str(ROOT), "--out", str(out), "-q"], env=env, check=True, capture_output=True
    )
    got = subprocess.run([CORA, "query", question.group(1), "--bundle", str(out), "--format", "json", "-k", "3"],
                         env=env, check=True, capture_output=True, text=True).stdout  # fmt: skip
    top = json.loads(got)["results"][0]["anchor"]
    assert top in {"cora_ci/commands/verify.py::verify", "cora_ci/bundle/store.py::verify_artifacts",
                   "cora_ci/bundle/report.py::check"}, top  # fmt: skip


def test_every_relative_link_leads_to_a_file() -> None:
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text()):
            if "://" not in target:
                assert (doc.parent / target).exists(), f"{doc.name}: {target}"
