"""`cora-ci mcp`: the bundle as Model Context Protocol tools, over stdio or streamable HTTP.

Built on the official `mcp` SDK (its `MCPServer`): it owns the protocol, the JSON schemas (from
the tools' annotated signatures) and both transports, so this module is only the four tools and
their descriptions, which are written for the model that reads them. A tool's failure is an MCP
tool error carrying the CORA code (`is_error`, the message for the model); the server itself
never stops on a bad call. Several bundles are served as one: search ranks across them, the other
tools ask each bundle in turn.
"""

import json
import logging
import re
import traceback
from collections.abc import Callable
from contextlib import nullcontext
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from cora_ci import __version__
from cora_ci.bundle.panics import is_panic
from cora_ci.errors import CODES, CoraError
from cora_ci.render.bundles import first_answer, refs_of
from cora_ci.render.formats import result_dict, shown_dict
from cora_ci.render.outline import as_indexed, outline_dict
from cora_ci.retrieval.types import Filters
from cora_ci.serve.collector import Collector
from cora_ci.serve.session import Session, search_all

T = TypeVar("T")
Kind = Literal["file", "type", "method", "property", "field", "event", "module", "section", "key", "lines"]
_CODED = re.compile(r"CORA-[A-Z]+-\d{3}:")
_PYDANTIC_URL = re.compile(r"\s*For further information visit https://errors\.pydantic\.dev")
_SDK_PREFIX = re.compile(r"^Error executing tool \w+: ")
_log = logging.getLogger("cora_ci.mcp")

INSTRUCTIONS = """\
cora-ci serves a code index of this repository (symbol-aware chunks, a reference graph, BM25 and
vectors). Use `search` first to find code by an identifier, a sentence or a pasted error; each result
has an `anchor` (`path::Class.method`), a stable name for the symbol that survives edits. Then
`show(anchor)` for a symbol's whole current code, `related(anchor)` for what to read next (callers,
callees, its type, overrides, tests), and `outline(path)` for a file's table of contents. Line numbers
and code are the working tree's; `stale: "moved"` means the code changed since indexing and was found by
its anchor, `"missing"` that it is gone (the indexed text is shown)."""

SEARCH = """\
Search the codebase and get back the code itself: the best-matching functions, classes, methods,
config keys or doc sections, best first. The query can be an identifier (`parse_header`,
`Session.send`), a question in words ("where are retries configured"; "what calls `parse_header`"
answers its definition, then its callers), a pasted error message or traceback, or a whole issue,
its title as the first line. Each result gives the file path, the result's own start and end
lines, symbol, anchor, kind, score, the code text and `stale`. Use `path` (a glob like
`src/**/*.py`), `lang` or `kind` to narrow it, and `budget` (tokens) to cap the total code
returned: lower-ranked results are then cut to their signatures (`elided: true`); `show` gives
any of them whole."""

SHOW = """\
The whole current code of one symbol, by its anchor (`path::Qualified.name`, as `search`, `related`
and `outline` return it): a function, a class with all its members, a config key, a doc section.
Read from the working tree, so it reflects edits made since indexing: `stale` is null when unchanged
since indexing, "moved" when it changed or moved (found by its anchor). A name without its path
(`Router.url_path_for`) works when one symbol ends with it. Fails with CORA-QRY-002 for an unknown
or ambiguous anchor (the message lists near or matching ones), CORA-QRY-004 for a file not indexed
and CORA-QRY-003 when the symbol was deleted."""

RELATED = """\
What to read next about one symbol: up to k chunks related to it through the code's reference
graph, each with its `relation`: `parent` (the class or scope it belongs to), `callee` (what it calls
or uses), `caller` (what calls or uses it), `test` (tests that exercise it), `overrides` /
`overridden-by` (the same member in a base class / in a subclass), `base` / `subclass` (for a type),
`mention` (a doc page or changelog entry naming it) and `indirect` (two references away, ranked by
personalized PageRank). Each result is the related
symbol's signature (its lines, anchor and path) unless `full` is true; pass its anchor to `show`
for the whole code. Use it to understand the impact of a change or to find where a behaviour is tested."""

OUTLINE = """\
The table of contents of one file: every symbol it defines (classes, functions, methods, fields,
sections), in line order, each with its kind, the language's declaration word (`declared`), depth
(0 = top level), current start and end lines, the declaration line (`signature`) and its anchor for
`show` and `related`. `path` is relative to the repository root, as `search` returns it. Cheaper
than reading the file when you only need its shape."""

_K = (
    "How many results (at most 100; fewer when fewer match); asked again with a larger k, it begins "
    "with the same ones (up to k 33 on one bundle)."
)
_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def build_server(sessions: list[Session], collector: Collector | None = None) -> MCPServer:
    """The MCP server over `sessions` (one per bundle, in the order given); `collector`, when
    given, collects garbage around each call (`serve`'s)."""
    server = MCPServer("cora-ci", instructions=INSTRUCTIONS, version=__version__, middleware=[_coded])
    several = len(sessions) > 1

    def _call(run: Callable[[], T]) -> T:
        with collector.call() if collector is not None else nullcontext():
            return _answer(run)

    def search(
        query: Annotated[str, Field(description="An identifier, a question in words, or an error text.")],
        k: Annotated[int, Field(ge=1, le=100, description=_K)] = 10,
        path: Annotated[str | None, Field(description="Only files matching this glob.")] = None,
        lang: Annotated[
            str | None, Field(description="Only this language (python, typescript, ...).")
        ] = None,
        kind: Annotated[
            Kind | None,
            Field(
                description="Only chunks of this kind: `method` (functions and methods), `type` (classes, "
                "structs, interfaces, enums), `field` (fields, constants, variables), `section` (docs)."
            ),
        ] = None,
        budget: Annotated[int | None, Field(ge=1, description="Cap on the code's tokens.")] = None,
    ) -> dict[str, Any]:
        filters = Filters(_one(lang), _one(kind), _one(path))

        def run() -> dict[str, Any]:
            ans = search_all(sessions, query, k, budget, filters)
            out: dict[str, Any] = {"query": _echo(query)}
            if ans.notes:
                out["notes"] = ans.notes
            out["results"] = [result_dict(r, bundles=ans.bundles if several else ()) for r in ans.results]
            return out

        return _call(run)

    def show(
        anchor: Annotated[str, Field(description="`path::Qualified.name`, as results give it.")],
    ) -> dict[str, Any]:
        return _call(lambda: _first(sessions, anchor, lambda s, a: shown_dict(s.show(a), a)))

    def related(
        anchor: Annotated[str, Field(description="`path::Qualified.name` of the symbol.")],
        k: Annotated[int, Field(ge=1, le=100, description="How many related symbols.")] = 10,
        full: Annotated[bool, Field(description="Whole code of each instead of its signature.")] = False,
    ) -> dict[str, Any]:
        def run(s: Session, a: str) -> dict[str, Any]:
            rel, _ = s.related(a, k, full)
            return {"anchor": a, "results": [result_dict(r) for r in rel.results]}

        return _call(lambda: _first(sessions, anchor, run))

    def outline(
        path: Annotated[str, Field(description="A file path relative to the repository root.")],
    ) -> dict[str, Any]:
        return _call(lambda: _first(sessions, as_indexed(path), lambda s, p: outline_dict(s.outline(p)[0])))

    for fn, text in ((search, SEARCH), (show, SHOW), (related, RELATED), (outline, OUTLINE)):
        server.add_tool(fn, description=text, annotations=_READ_ONLY, structured_output=True)
    return server


_ECHOED = 200  # characters of the query an answer repeats: a pasted traceback is not sent back


def _echo(query: str) -> str:
    return query if len(query) <= _ECHOED else query[:_ECHOED].rstrip() + " ..."


def _one(value: str | None) -> tuple[str, ...]:
    return (value,) if value else ()


def _first(
    sessions: list[Session], target: str, run: Callable[[Session, str], dict[str, Any]]
) -> dict[str, Any]:
    """`run` on the bundle a qualified anchor or path names (`name:...`), else on the first bundle
    that knows it; with several bundles, the answer names its bundle."""
    if len(sessions) == 1:
        return run(sessions[0], target)
    bundles = [s.bundle() for s in sessions]
    refs = refs_of([b.manifest for b in bundles], [s.name for s in sessions], [b.id for b in bundles])
    got, i = first_answer(refs, target, lambda i, plain: run(sessions[i], plain))
    return {"bundle": {"name": refs[i].name, "source": refs[i].source}, **got}


def _answer(run: Callable[[], T]) -> T:
    """`run`, its failures as MCP tool errors with the CORA code in the message."""
    try:
        return run()
    except CoraError as e:
        raise ToolError(e.one_line().removeprefix("error: ")) from None
    except BaseException as e:  # a bug or a Rust panic: reported to the model and logged, the server goes on
        if not (isinstance(e, Exception) or is_panic(e)):
            raise
        _log.error("cora-ci tool failed:\n%s", traceback.format_exc())
        code = CODES["CORA-INT-001"]
        raise ToolError(f"{code.code}: {type(e).__name__}: {e} (hint: {code.hint})") from None


async def _coded(ctx: Any, call_next: Any) -> Any:
    """Tool errors the SDK raises itself (arguments that fail the schema) get a CORA code too,
    and an answer's text is its structured content as compact JSON (the SDK indents it: a
    starlette trial's outline of `routing.py` took 26 KB, more than most of the file, 19 KB so).
    The result reaches middleware in its wire form (a dict, `isError` and `content` parts)."""
    result = await call_next(ctx)
    if (
        ctx.method == "tools/call"
        and isinstance(result, dict)
        and isinstance(result.get("structuredContent"), dict)
    ):
        compact = json.dumps(result["structuredContent"], ensure_ascii=False, separators=(",", ":"))
        result["content"] = [{"type": "text", "text": compact}]
    if ctx.method == "tools/call" and isinstance(result, dict) and result.get("isError"):
        for part in result.get("content") or []:
            text = part.get("text") if isinstance(part, dict) else None
            if not isinstance(text, str):
                continue
            text = "\n".join(t for t in _SDK_PREFIX.sub("", text).split("\n") if not _PYDANTIC_URL.match(t))
            if not _CODED.match(text):
                text = f"CORA-MCP-002: invalid arguments: {text} (hint: {CODES['CORA-MCP-002'].hint})"
            part["text"] = text
    return result


def serve(sessions: list[Session], http: tuple[str, int] | None = None) -> None:
    """Serve until the client closes stdin (stdio) or the process is stopped (HTTP, at /mcp),
    collecting garbage between answers (`Collector`)."""
    collector = Collector()
    collector.start()
    server = build_server(sessions, collector)
    if http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host=http[0], port=http[1], streamable_http_path="/mcp")
