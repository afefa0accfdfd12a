"""An answer as `<cora:chunk>` blocks (for LLM tools), JSON (for programs) or text (for people).

`cora` follows the Cora spec's block layout. Metadata values and commentary are XML-escaped (a
control character, which git allows in a file name, as a character reference: `&#10;`); content
is the code verbatim, except that a `<` starting `<cora:` or `</cora:` is written `&lt;`,
so no source text can open or close a block (decode by replacing `&lt;cora:` and `&lt;/cora:`).
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import click

from cora_ci.chunking.model import PART, Chunk
from cora_ci.chunking.sentences import first_sentence
from cora_ci.rebind.view import commented, declaring
from cora_ci.render.answer import Overhead, Parent, Result, left_out
from cora_ci.render.bundles import BundleRef
from cora_ci.render.source import Shown

_TAG = re.compile(r"<(/?cora:)")
_DOCSTRING = re.compile(r"^\s*[rRuUbB]{0,2}(\"\"\"|''')")


_CONTROLS = (*range(0x20), 0x7F, *range(0x80, 0xA0))
# Control characters in a file name (git allows a newline, an escape) or in code: as character
# references in a metadata value, so it stays one line; as visible escapes in text for a terminal,
# so no name or line can move the cursor, recolour or clear it (a tab in code stays a tab).
_ATTR_CONTROLS = {c: f"&#{c};" for c in _CONTROLS}
_NAME_CONTROLS = {c: f"\\x{c:02x}" for c in _CONTROLS} | {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}
_CODE_CONTROLS = {c: e for c, e in _NAME_CONTROLS.items() if c != 0x09}


def attr(value: object) -> str:
    return escape_text(str(value)).replace(">", "&gt;").replace('"', "&quot;")


def guard(code: str) -> str:
    """Code as block content: a `<` that would open or close a `cora:` tag written `&lt;`."""
    return _TAG.sub(r"&lt;\1", code)


def visible(s: str, table: dict[int, str] = _NAME_CONTROLS) -> str:
    """`s` with its control characters written as escapes (`\\n`, `\\x1b`), safe for a terminal."""
    return s.translate(table)


def escape_text(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").translate(_ATTR_CONTROLS)


def _score(x: float) -> str:
    return f"{x:.4f}".rstrip("0").rstrip(".") if x else "0"


def doc_sentence(chunk: Chunk, symbol: str | None = None) -> str:
    """The first sentence of the symbol's doc comment or docstring (of `symbol`, one of the chunk's,
    else its first), if its code has one."""
    lines = chunk.text.split("\n")
    if chunk.kind in ("file", "module"):
        return _head_doc(lines, chunk.lang)
    symbol = symbol or chunk.symbol
    at = declaring(lines, symbol, chunk.lang) if symbol else None
    if at is None:
        return ""
    above: list[str] = []
    i = at - 1
    while i >= 0 and (commented(lines[i], chunk.lang) or lines[i].lstrip().startswith(("@", "[", "#["))):
        if commented(lines[i], chunk.lang) and not lines[i].lstrip().startswith(("#[", "[")):
            above.append(lines[i])
        i -= 1
    if above:
        return first_sentence("\n".join(reversed(above)))
    for j in range(at + 1, min(at + 12, len(lines))):
        if _DOCSTRING.match(lines[j]):
            return first_sentence("\n".join(lines[j : j + 12]))
    return ""


def _head_doc(lines: list[str], lang: str) -> str:
    """The first sentence of a file's own docstring or leading comment (after a shebang, and in
    Rust after its inner attributes: `#![allow(...)]` is no shebang)."""
    i = 0
    while i < len(lines) and (not lines[i].strip() or lines[i].startswith("#!") or "coding" in lines[i][:30]):
        i += 1
    if i < len(lines) and _DOCSTRING.match(lines[i]):
        return first_sentence("\n".join(lines[i : i + 12]))
    j = i
    while j < len(lines) and commented(lines[j], lang):
        j += 1
    return first_sentence("\n".join(lines[i:j])) if j > i else ""


def commentary(r: Result, explain: bool, commit: str | None) -> list[str]:
    """Header, doc sentence, parent, staleness and (with --explain) the ranking's reasons."""
    out: list[str] = []
    header = r.chunk.header.strip()
    part = PART.search(header)  # a split symbol's "Part 1 of 2.", after its doc sentence
    head, tail = (header[: part.start()].rstrip(), part.group()) if part else (header, "")
    if r.parts and part:  # "Part 38 of 38." of a result holding parts 1, 19 and 38
        spans = ", ".join(f"{a}-{b}" for a, b in r.view.spans)
        tail = f"Parts {_listed(r.parts)} of {part.group(2)}, lines {spans}."
    doc = doc_sentence(r.chunk, r.symbol)
    if doc and (head == doc or head.endswith(" " + doc)):  # said once, on its own line
        head = head[: -len(doc)].rstrip()
    header = " ".join(x for x in (head, tail) if x)
    if header:
        out.append(header)
    if doc:
        out.append(doc)
    if r.hit.relation is not None:
        out.append(f"Related as {_RELATED[r.hit.relation]}.")
    if r.parent is not None:
        p = r.parent
        decl = " ".join(line.strip() for line in p.text.splitlines())
        out.append(f"Parent: {p.label} ({p.anchor}, lines {p.start}-{p.end}): {decl}")
    elif len(r.chunk.hierarchy) > 1:
        out.append("Parent: " + " > ".join(h.replace(":", " ", 1) for h in r.chunk.hierarchy[:-1]) + ".")
    if r.elided and r.hit.relation is not None:  # `related` shows signatures unless asked `--full`
        out.append("Shown as its signature (`--full` for its code).")
    elif r.elided:
        out.append("Elided to its signature to fit the budget.")
    if r.stale == "moved":
        out.append("Changed since indexing: lines and text are the working tree's, found by anchor.")
    elif r.stale == "missing":
        at = f" {commit[:12]}" if commit else ""
        out.append(f"Gone from the working tree: lines and text are those indexed (commit{at}).")
    if explain:
        out.append("Explain: " + explain_text(r.hit.explain))
    return out


_RELATED = {
    "parent": "parent: the type or scope it belongs to",
    "overrides": "overrides: the base type's member it overrides",
    "overridden-by": "overridden-by: a subclass's member overriding it",
    "base": "base: a type it extends or implements",
    "subclass": "subclass: a type extending or implementing it",
    "callee": "callee: something it references or calls",
    "caller": "caller: code that references or calls it",
    "test": "test: a test that exercises it",
    "mention": "mention: a page of documentation or history that names it",
    "indirect": "indirect: two references away in the reference graph",
}


def explain_text(ex: dict[str, Any]) -> str:
    parts = []
    for k, v in ex.items():
        if v is None:
            continue
        parts.append(f"{k}={_score(v) if isinstance(v, float) else v}")
    return ", ".join(parts) or "(none)"


def _listed(numbers: Sequence[int]) -> str:
    *before, last = numbers
    return f"{', '.join(map(str, before))} and {last}" if before else str(last)


def _lines(r: Result) -> str:
    return f"{r.view.start}-{r.view.end}"


def _origin(r: Result, commit: str | None, bundles: Sequence[BundleRef]) -> tuple[str | None, str | None]:
    """The result's bundle name (only when an answer has several) and its indexed commit."""
    if len(bundles) > 1:
        ref = bundles[r.hit.origin]
        return ref.name, ref.commit
    return None, commit


def as_cora(results: Iterable[Result], explain: bool = False, commit: str | None = None,
            bundles: Sequence[BundleRef] = ()) -> str:  # fmt: skip
    """`<cora:chunk>` blocks, one per result; with several `bundles`, each names its bundle."""
    blocks: list[str] = []
    for r in results:
        name, at = _origin(r, commit, bundles)
        meta = [("bundle", name)] if name else []
        meta += [("file", r.view.path), ("lines", _lines(r))]
        if r.symbol:
            meta.append(("symbol", r.symbol))
        meta += [("kind", r.chunk.kind)]
        if r.anchor:
            meta.append(("anchor", r.anchor))
        meta.append(("score", _score(r.hit.score)))
        if r.hit.relation is not None:
            meta.append(("relation", r.hit.relation))
        if r.elided:
            meta.append(("elided", "true"))
        if r.stale:
            meta.append(("stale", r.stale))
        attrs = " ".join(f'{k}="{attr(v)}"' for k, v in meta)
        notes = "".join(f"    {escape_text(c)}\n" for c in commentary(r, explain, at))
        content = guard(r.text)
        blocks.append(
            "<cora:chunk>\n"
            f"  <cora:metadata>\n    {attrs}\n  </cora:metadata>\n"
            f"  <cora:commentary>\n{notes}  </cora:commentary>\n"
            f"  <cora:content>\n{content}\n  </cora:content>\n"
            "</cora:chunk>"
        )
    return "\n".join(blocks)


def result_dict(r: Result, explain: bool = False, bundles: Sequence[BundleRef] = ()) -> dict[str, Any]:
    """A result in the issue's JSON schema (plus `explain` when asked for, and its bundle when
    `bundles` holds the several an answer came from)."""
    d: dict[str, Any] = {} if not bundles else {"bundle": _ref_dict(bundles[r.hit.origin])}
    d |= {
        "path": r.view.path,
        "start_line": r.view.start,
        "end_line": r.view.end,
        "symbol": r.symbol or None,
        "anchor": r.anchor,
        "kind": r.chunk.kind,
        "score": round(r.hit.score, 6),
        "text": r.text,
        "elided": r.elided,
        "stale": r.stale,
        "parent": _parent_dict(r.parent) if r.parent is not None else None,
    }
    if r.hit.relation is not None:
        d["relation"] = r.hit.relation
    if explain:
        d["explain"] = r.hit.explain
    return d


def _parent_dict(p: Parent) -> dict[str, Any]:
    return {"path": p.path, "start_line": p.start, "end_line": p.end, "symbol": p.symbol or None,
            "anchor": p.anchor, "kind": p.kind, "text": p.text}  # fmt: skip


def _ref_dict(b: BundleRef) -> dict[str, str]:
    return {"name": b.name, "source": b.source}


def shown_dict(shown: Shown, anchor: str) -> dict[str, Any]:
    """`show`'s answer as JSON: the symbol's current code with its path, lines and staleness."""
    v = shown.view
    return {"path": v.path, "start_line": v.start, "end_line": v.end, "symbol": shown.symbol or None,
            "anchor": shown.anchor or anchor, "kind": shown.kind, "text": v.text(),
            "stale": shown.stale}  # fmt: skip


def as_json(query: str, bundle: str, results: Iterable[Result], explain: bool = False,
            bundle_id: str | None = None, bundles: Sequence[BundleRef] = (),
            notes: Sequence[str] = ()) -> str:  # fmt: skip
    """The answer as JSON; `bundle_id` (the manifest's sha256) says which version of the bundle
    answered. With several `bundles`, each result names its own (`bundle`: name and source), and
    `bundles` lists them all; `notes` say what was searched otherwise than asked (lexically)."""
    out: dict[str, object] = {"query": query, "bundle": bundle}
    if bundle_id is not None:
        out["bundle_id"] = bundle_id
    several = len(bundles) > 1
    if several:
        out["bundles"] = [{"name": b.name, "source": b.source, "path": b.path, "bundle_id": b.bundle_id}
                          for b in bundles]  # fmt: skip
    if notes:
        out["notes"] = list(notes)
    out["results"] = [result_dict(r, explain, bundles if several else ()) for r in results]
    return json.dumps(out, indent=2, ensure_ascii=False)


def as_text(results: Iterable[Result], explain: bool = False, commit: str | None = None,
            bundles: Sequence[BundleRef] = ()) -> Iterator[str]:  # fmt: skip
    """Readable results; styles are stripped by click when colour is off."""
    for r in results:
        name, at = _origin(r, commit, bundles)
        title = f"{visible(name)}:" if name else ""
        title += f"{visible(r.view.path)}:{r.view.start}:"  # `path:line:`, which editors open
        tags = [click.style(f"lines {_lines(r)}", dim=True), click.style(r.chunk.kind, fg="cyan")]
        if r.symbol:
            tags.append(click.style(visible(r.symbol), fg="yellow"))
        tags.append(click.style(_score(r.hit.score), dim=True))
        if r.hit.relation is not None:
            tags.append(click.style(r.hit.relation, fg="blue", bold=True))
        if r.elided:
            tags.append(click.style("[elided]", fg="magenta"))
        if r.stale:
            tags.append(
                click.style(f"[{r.stale}]", fg="red" if r.stale == "missing" else "yellow", bold=True)
            )
        yield click.style("── ", dim=True) + click.style(title, bold=True) + "  " + "  ".join(tags)
        if r.anchor:
            yield click.style(f"   {visible(r.anchor)}", dim=True)
        for c in commentary(r, explain, at):
            yield click.style(f"   {visible(c)}", fg="green")
        width = len(str(r.view.end))
        for n, t in r.view.rendered():
            number = click.style(f"{n if n is not None else '':>{width}} │ ", dim=True)
            yield number + visible(t, _CODE_CONTROLS)
        yield ""


class _Printed:
    """What a result prints in `fmt` besides its code, in tokens, for the budget to count: its
    metadata, commentary and, in text, line numbers (the printed block less its code); and the
    note on results left out, which JSON prints among them (the other formats on stderr)."""

    def __init__(self, fmt: str, explain: bool, k: int) -> None:
        from cora_ci.chunking.tokens import default_counter

        self._fmt, self._explain, self._counter = fmt, explain, default_counter()
        self._seen: dict[tuple[object, ...], int] = {}
        self.note = self._tokens(_noted(left_out(k))) - self._tokens(_noted(None)) if fmt == "json" else 0

    def _tokens(self, text: str) -> int:
        return sum(self._counter.count_lines(text.split("\n")))

    def _printed(self, r: Result) -> str:
        if self._fmt == "json":  # as it is printed: in the list of results, indented, a comma after
            dumped = json.dumps(result_dict(r, self._explain), indent=2, ensure_ascii=False)
            return textwrap.indent(dumped, "    ") + ","
        if self._fmt == "cora":
            return as_cora([r], self._explain)
        return "\n".join(click.unstyle(line) for line in as_text([r], self._explain))

    def __call__(self, r: Result) -> int:
        key = (r.hit.origin, r.chunk.id, r.elided, r.view.start, r.view.end, r.named, r.stale, r.parent)
        if key not in self._seen:
            self._seen[key] = max(0, self._tokens(self._printed(r)) - r.tokens)
        return self._seen[key]


def _noted(note: str | None) -> str:
    return as_json("", "", [], notes=[note] if note else ())


def overhead(fmt: str, explain: bool = False, k: int = 10) -> Overhead:
    """What the answer prints besides the code, for the budget (`_Printed`); `k` sizes the note."""
    return _Printed(fmt, explain, k)


def code_budget(fmt: str, budget: int, query: str, bundle: str) -> int:
    """The budget left for the results once the answer's own frame is counted: JSON's `query`,
    `bundle` and `bundle_id` (the other formats print nothing around their results)."""
    if fmt != "json":
        return budget
    from cora_ci.chunking.tokens import default_counter

    frame = as_json(query, bundle, [], bundle_id="0a" * 32)  # as many tokens as any sha256 takes, or more
    return max(1, budget - sum(default_counter().count_lines(frame.split("\n"))))
