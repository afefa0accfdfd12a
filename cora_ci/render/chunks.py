"""`cora-ci chunk` output: JSON for programs, numbered text for people."""

from __future__ import annotations

import json
from collections.abc import Iterable

import click

from cora_ci.chunking.model import Chunk


def as_json(chunks: Iterable[Chunk]) -> str:
    return json.dumps([c.to_dict() for c in chunks], indent=2, ensure_ascii=False)


def as_text(chunks: Iterable[Chunk]) -> Iterable[str]:
    """Readable chunks; styles are stripped by click when colour is off."""
    for c in chunks:
        title = f"{c.path}:{c.start_line}-{c.end_line}"
        sym = " / ".join(c.symbols) if c.symbols else ""
        yield (
            click.style("── ", dim=True) + click.style(title, bold=True) + "  "
            + click.style(c.kind, fg="cyan") + (f"  {click.style(sym, fg='yellow')}" if sym else "")
            + click.style(f"  ({c.tokens} tokens, {c.strategy})", dim=True)
        )  # fmt: skip
        if c.anchor:
            yield click.style(f"   anchor: {c.anchor}", dim=True)
        if c.header:
            yield click.style(f"   {c.header}", fg="green")
        for d in c.diagnostics:
            yield click.style(f"   {d.code}: {d.message}", fg="red")
        line_no = c.start_line
        elided = dict(c.elided)
        width = len(str(c.end_line))
        for text in c.text.split("\n"):
            if text.strip() == ". . ." and line_no in elided:
                yield click.style(f"{'':>{width}} │ ", dim=True) + text
                line_no = elided[line_no] + 1
                continue
            yield click.style(f"{line_no:>{width}} │ ", dim=True) + text
            line_no += 1
        yield ""
