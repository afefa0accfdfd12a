"""A diff as text (for a terminal), JSON (for programs) or Markdown (for a job summary)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from cora_ci.diff import Changed, Diff, Symbol
from cora_ci.diff.impact import Impact
from cora_ci.render.formats import visible

Impacts = dict[str, list[Impact]]  # changed anchor -> what may feel it
_MARK = {"added": "+", "removed": "-", "modified": "~", "renamed": ">", "moved": ">"}


def _what(c: Changed) -> str:
    if c.change == "modified":
        return f"modified ({c.detail})"
    if c.change in ("renamed", "moved"):
        assert c.old is not None
        return f"{c.change} from {c.old.anchor}" + (f", {c.detail}" if c.detail else "")
    return c.change


def _where(s: Symbol | None) -> str:
    return f"{s.path}:{s.start_line}-{s.end_line}" if s is not None else ""


def as_text(d: Diff, impacts: Impacts) -> Iterator[str]:
    counts = ", ".join(f"{d.count(c)} {c}" for c in ("added", "modified", "removed", "renamed", "moved"))
    yield f"{len(d.files)} files changed; symbols: {counts}"
    for c in d.changes:
        s = c.new or c.old
        assert s is not None
        yield f"{_MARK[c.change]} {visible(c.anchor)}  {s.kind}  {_what(c)}  {visible(_where(s))}"
        for i in impacts.get(c.anchor, []):
            yield f"    {i.how}: {visible(i.anchor)} ({visible(i.path)}:{i.start_line}-{i.end_line})"


def _sym(s: Symbol | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {"anchor": s.anchor, "path": s.path, "kind": s.kind, "start_line": s.start_line,
            "end_line": s.end_line, "signature": s.signature}  # fmt: skip


def _impact(i: Impact) -> dict[str, Any]:
    return {
        "anchor": i.anchor,
        "path": i.path,
        "start_line": i.start_line,
        "end_line": i.end_line,
        "how": i.how,
    }


def as_json(d: Diff, impacts: Impacts, old: str, new: str) -> str:
    changes = []
    for c in d.changes:
        item: dict[str, Any] = {"change": c.change, "anchor": c.anchor, "detail": c.detail or None,
                                "old": _sym(c.old), "new": _sym(c.new)}  # fmt: skip
        if impacts:
            item["impact"] = [_impact(i) for i in impacts.get(c.anchor, [])]
        changes.append(item)
    doc = {"old": old, "new": new, "files": d.files, "changes": changes}
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _md(s: str) -> str:
    """Text for a Markdown table cell or code span: no pipe, backtick or line break breaks out."""
    return visible(s).replace("|", "\\|").replace("`", "'")


def as_markdown(d: Diff, impacts: Impacts, title: str = "Changed symbols") -> str:
    lines = [f"### {title}", ""]
    counts = ", ".join(f"{d.count(c)} {c}" for c in ("added", "modified", "removed", "renamed", "moved")
                       if d.count(c))  # fmt: skip
    lines.append(f"{len(d.files)} files changed; symbols: {counts or 'none'}.")
    if not d.changes:
        return "\n".join(lines) + "\n"
    lines += ["", "| change | symbol | kind | where |" + (" referenced by |" if impacts else ""),
              "| --- | --- | --- | --- |" + (" --- |" if impacts else "")]  # fmt: skip
    for c in d.changes:
        s = c.new or c.old
        assert s is not None
        row = f"| {_md(_what(c))} | `{_md(c.anchor)}` | {s.kind} | {_md(_where(s))} |"
        if impacts:
            refs = [f"`{_md(i.anchor)}`" + (" (old name)" if i.how.startswith("still") else "")
                    for i in impacts.get(c.anchor, [])]  # fmt: skip
            row += f" {'<br>'.join(refs)} |"
        lines.append(row)
    return "\n".join(lines) + "\n"
