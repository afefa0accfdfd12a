"""`cora-ci mcp` driven by the MCP SDK's own client, over stdio and streamable HTTP, on real bundles."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, get_args

import anyio
import pytest
from conftest import dedent_files, git
from mcp import Client, StdioServerParameters
from test_related import SHOP

from cora_ci.chunking.model import KINDS
from cora_ci.serve.mcp import Kind

CORA = shutil.which("cora-ci", path=os.path.dirname(sys.executable)) or "cora-ci"
TOOLS = {"search", "show", "related", "outline"}


def cora(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CORA, *args], cwd=cwd, capture_output=True, text=True, env=env, check=False)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}


@pytest.fixture
def shop(make_repo: Callable[[dict[str, str]], Path], env: dict[str, str]) -> Path:
    repo = make_repo(dedent_files(SHOP))
    out = cora("index", "-q", cwd=repo, env=env)  # the bundled model: search embeds the query
    assert out.returncode == 0, out.stderr
    return repo


@asynccontextmanager
async def stdio(cwd: Path, env: dict[str, str], *args: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=CORA, args=["mcp", *args], cwd=str(cwd), env=env)
    async with Client(params) as client:
        yield client


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    r = await client.call_tool(tool, args)
    assert not r.is_error, r.content
    assert isinstance(r.structured_content, dict)
    assert json.loads(r.content[0].text) == r.structured_content  # type: ignore[union-attr]
    return r.structured_content


async def error(client: Client, tool: str, **args: Any) -> str:
    r = await client.call_tool(tool, args)
    assert r.is_error
    text: str = r.content[0].text  # type: ignore[union-attr]
    return text


def test_the_kind_schema_is_the_chunk_kinds() -> None:
    assert get_args(Kind) == KINDS


def test_stdio_lists_the_four_tools_and_each_answers(shop: Path, env: dict[str, str]) -> None:
    async def run() -> None:
        async with stdio(shop, env) as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
            assert set(listed) == TOOLS
            for t in listed.values():
                assert t.description is not None and len(t.description) > 200  # written for a model
                assert t.input_schema["type"] == "object" and t.annotations is not None
                assert t.annotations.read_only_hint is True
            assert listed["search"].input_schema["required"] == ["query"]
            props = listed["search"].input_schema["properties"]
            assert {"query", "k", "path", "lang", "kind", "budget"} <= set(props)

            found = await call(c, "search", query="normalize", k=3)
            top = found["results"][0]
            assert (top["anchor"], top["start_line"], top["end_line"]) == (
                "shop/memory.py::normalize",
                15,
                18,
            )
            assert {"path", "symbol", "kind", "score", "text", "stale"} <= set(top)
            words = await call(c, "search", query="strip the item into a string", k=2, path="shop/*")
            assert words["results"] and all(r["path"].startswith("shop/") for r in words["results"])
            only = await call(c, "search", query="save", kind="type")
            assert {r["kind"] for r in only["results"]} == {"type"}

            shown = await call(c, "show", anchor="shop/base.py::Store.load")
            assert shown["text"].startswith("    def load(self, key):") and shown["stale"] is None
            assert (shown["start_line"], shown["end_line"], shown["symbol"]) == (11, 13, "load")

            rel = await call(c, "related", anchor="shop/memory.py::MemoryStore.save")
            got = {(r["relation"], r["anchor"]) for r in rel["results"]}
            assert ("overrides", "shop/base.py::Store.save") in got
            assert ("test", "tests/test_shop.py::test_save_keeps_the_stripped_item") in got

            o = await call(c, "outline", path="shop/base.py")
            assert [s["anchor"] for s in o["symbols"]] == [
                "shop/base.py::Store", "shop/base.py::Store.save", "shop/base.py::Store.load",
            ]  # fmt: skip

    anyio.run(run)


def test_answers_are_compact_and_a_long_query_is_not_sent_back(shop: Path, env: dict[str, str]) -> None:
    """A starlette trial: the SDK's indented JSON made an outline cost more than the file it
    outlines, and every search sent a pasted traceback back whole. Results a budget leaves out
    are said."""

    async def run() -> None:
        async with stdio(shop, env) as c:
            report = (
                "save fails for a stripped item\n" + '  File "shop/memory.py", line 16, in normalize\n' * 40
            )
            r = await c.call_tool("search", {"query": report, "k": 2})
            text: str = r.content[0].text  # type: ignore[union-attr]
            assert "\n" not in text  # indented JSON has line breaks; a string's are escaped
            assert json.loads(text) == r.structured_content
            echoed = r.structured_content["query"] if r.structured_content else ""
            assert echoed.startswith("save fails for a stripped item") and len(echoed) < 220 < len(report)
            o = await c.call_tool("outline", {"path": "shop/base.py"})
            assert "\n" not in o.content[0].text  # type: ignore[union-attr]
            tight = await call(c, "search", query="store an item", k=3, budget=1)  # the best is kept
            assert len(tight["results"]) == 1 and tight["notes"] == [
                "2 more results did not fit the token budget: a larger budget shows them"
            ]

    anyio.run(run)


def test_bad_calls_are_tool_errors_with_codes_and_the_server_goes_on(shop: Path, env: dict[str, str]) -> None:
    async def run() -> None:
        async with stdio(shop, env) as c:
            unknown = await error(c, "show", anchor="shop/base.py::Store.loads")
            assert unknown.startswith("CORA-QRY-002: ") and "did you mean" in unknown
            assert (await error(c, "related", anchor="nope")).startswith("CORA-QRY-002: ")
            assert (await error(c, "outline", path="shop/none.py")).startswith("CORA-QRY-004: ")
            assert (await error(c, "search", query="   ")).startswith("CORA-QRY-001: ")
            for bad in (
                {"query": "x", "k": 0},
                {"query": "x", "k": "many"},
                {"k": 3},
                {"query": "x", "kind": "?"},
            ):
                text = await error(c, "search", **bad)
                assert text.startswith("CORA-MCP-002: invalid arguments: "), text
            assert (await call(c, "search", query="normalize"))["results"]  # still serving

    anyio.run(run)


def test_a_bundle_swapped_under_the_running_server_is_picked_up(shop: Path, env: dict[str, str]) -> None:
    """The hook's update replaces the bundle directory; the server answers from the new one on its
    next call, and no call in between fails."""

    async def run() -> None:
        async with stdio(shop, env) as c:
            assert (await call(c, "search", query="audit_trail", k=1))["results"][0]["anchor"] != (
                "shop/audit.py::audit_trail"
            )
            (shop / "shop" / "audit.py").write_text("def audit_trail(entries):\n    return list(entries)\n")
            git(shop, "add", "-A")
            git(shop, "commit", "-qm", "audit")
            out = cora("index", "-q", cwd=shop, env=env)
            assert out.returncode == 0, out.stderr
            top = (await call(c, "search", query="audit_trail", k=1))["results"][0]
            assert top["anchor"] == "shop/audit.py::audit_trail"
            assert (await call(c, "show", anchor="shop/audit.py::audit_trail"))["start_line"] == 1
            assert (await call(c, "outline", path="shop/audit.py"))["symbols"]

    anyio.run(run)


def test_an_archive_downloaded_over_the_served_one_is_picked_up(
    shop: Path, env: dict[str, str], tmp_path: Path
) -> None:
    archive = tmp_path / "dl" / "bundle.tar.gz"
    assert cora("pack", str(shop / ".cora" / "index"), str(archive), cwd=shop, env=env).returncode == 0

    async def run() -> None:
        async with stdio(tmp_path, env, "--bundle", str(archive)) as c:
            first = await call(c, "outline", path="shop/memory.py")
            assert (await error(c, "outline", path="shop/extra.py")).startswith("CORA-QRY-004: ")
            (shop / "shop" / "extra.py").write_text("def extra():\n    return 1\n")
            git(shop, "add", "-A")
            git(shop, "commit", "-qm", "extra")
            assert cora("index", "-q", cwd=shop, env=env).returncode == 0
            new = tmp_path / "dl" / "new.tar.gz"
            assert cora("pack", str(shop / ".cora" / "index"), str(new), cwd=shop, env=env).returncode == 0
            new.replace(archive)  # a download moved into place
            assert (await call(c, "outline", path="shop/extra.py"))["symbols"][0]["symbol"] == "extra"
            assert await call(c, "outline", path="shop/memory.py") == first

    anyio.run(run)


def test_several_bundles_are_served_as_one(
    shop: Path, make_repo: Callable[[dict[str, str]], Path], env: dict[str, str], tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "geo.py").write_text("def haversine(a, b):\n    return abs(a - b)\n")
    assert cora("index", str(other), "--model", "none", "-q", cwd=tmp_path, env=env).returncode == 0

    async def run() -> None:
        args = ("--bundle", str(shop / ".cora" / "index"), "--bundle", str(other / ".cora" / "index"))
        async with stdio(tmp_path, env, *args) as c:
            hits = (await call(c, "search", query="haversine", k=3))["results"]
            assert hits[0]["anchor"] == "geo.py::haversine" and hits[0]["bundle"]["name"] == "other"
            assert (await call(c, "show", anchor="geo.py::haversine"))["text"].startswith("def haversine")
            mine = await call(c, "show", anchor="shop/memory.py::normalize")
            assert mine["symbol"] == "normalize" and mine["bundle"]["name"] == "repo"
            assert mine["bundle"]["source"].startswith("repo@")
            assert (await call(c, "outline", path="other:geo.py"))["symbols"][0]["symbol"] == "haversine"
            wrong = await error(c, "show", anchor="other:shop/memory.py::normalize")  # not in that one
            assert wrong.startswith("CORA-QRY-004: ")

    anyio.run(run)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def http_server(shop: Path, env: dict[str, str]) -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen([CORA, "mcp", "--http", str(port)], cwd=shop, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def test_streamable_http_serves_the_same_tools_on_localhost(http_server: str) -> None:
    async def run() -> None:
        async with Client(http_server) as c:
            assert {t.name for t in (await c.list_tools()).tools} == TOOLS
            top = (await call(c, "search", query="normalize", k=1))["results"][0]
            assert top["anchor"] == "shop/memory.py::normalize"
            assert (await error(c, "show", anchor="x::y")).startswith("CORA-QRY-002: ")
            assert (await call(c, "outline", path="shop/memory.py"))["symbols"]

    anyio.run(run)


def test_command_line_errors_are_one_line(tmp_path: Path, env: dict[str, str]) -> None:
    bad = cora("mcp", "--http", "nowhere", cwd=tmp_path, env=env)
    assert bad.returncode == 2 and "HOST:PORT" in bad.stderr
    missing = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['mcp'] = None; sys.argv = ['cora-ci', 'mcp'];"
         "from cora_ci.cli import main; main()"],
        cwd=tmp_path, capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert missing.returncode == 3
    assert missing.stderr.startswith("error: CORA-MCP-001: ") and "cora-ci[mcp]" in missing.stderr
    assert missing.stderr.count("\n") == 1


def test_a_server_started_before_the_first_index_serves_it_once_built(
    make_repo: Callable[[dict[str, str]], Path], env: dict[str, str]
) -> None:
    repo = make_repo(dedent_files(SHOP))

    async def run() -> None:
        async with stdio(repo, env, "--model", "none") as c:
            assert (await error(c, "search", query="normalize")).startswith("CORA-BND-001: ")
            assert cora("index", "--model", "none", "-q", cwd=repo, env=env).returncode == 0
            assert (await call(c, "search", query="normalize"))["results"][0]["symbol"] == "normalize"

    anyio.run(run)


def test_a_session_answers_one_question_while_it_warms(shop: Path) -> None:
    """`cora-ci mcp` warms each session before serving: the indexes are opened and one question
    is answered, so the first call finds what a search opens on first use (tantivy's segments,
    the answer's code, its caches) as the later ones do (141 -> 63 ms at 50k chunks)."""
    from cora_ci.render.many import wheres
    from cora_ci.retrieval.catalog import catalog
    from cora_ci.serve.session import Session

    s = Session(wheres([], shop, shop)[0])
    s.warm()
    b = s.bundle()
    assert {"lexical", "graph_csr"} <= vars(b).keys() and catalog(b).last_ranked is not None
    assert s.search("apply a discount to the cart total").results  # and it answers as before
