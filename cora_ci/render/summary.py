"""The lines `cora-ci index` ends with, shared by the GitHub Action's step so its log reads the same."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cora_ci.build import Summary
    from cora_ci.build.common import Note


def change_line(s: Summary) -> str | None:
    """What kind of build this was: a full rebuild and why, nothing changed, or an update."""
    if s.rebuilt:
        return f"full rebuild: {s.rebuilt}"
    if not s.rechunked and not s.removed:
        return "up to date: no indexed file changed"
    if s.rechunked < s.files + s.skipped or s.removed:
        return f"updated: {s.rechunked} file(s) re-chunked, {s.removed} removed, the rest reused"
    return None


def languages(s: Summary) -> str:
    """`python 3, markdown 1`: most files first."""
    return ", ".join(f"{lang} {n}" for lang, n in sorted(s.languages.items(), key=lambda t: (-t[1], t[0])))


SHOWN = 5  # diagnostics named in the summary; `cora-ci info --diagnostics` lists them all


def note_line(path: str, line: int | None, code: str, message: str) -> str:
    """`path:line: CODE message`, the form editors and terminals make clickable."""
    from cora_ci.render.formats import visible

    at = f"{visible(path)}:{line}:" if line else f"{visible(path)}:"
    return f"{at} {code} {visible(message)}"


def notes_lines(notes: list[Note]) -> list[str]:
    """The first few diagnostics of a build, then how many more and where to see them."""
    out = [f"  {note_line(*n)}" for n in notes[:SHOWN]]
    if len(notes) > SHOWN:
        out.append(f"  +{len(notes) - SHOWN} more: cora-ci info --diagnostics")
    return out


def summary_lines(s: Summary, timings: bool = False) -> list[str]:
    lines = [line] if (line := change_line(s)) else []
    counts = f"{s.files} files ({s.skipped} skipped), {s.chunks} chunks, {s.embedded} embedded with {s.model}"
    lines.append(f"indexed {s.source}: {counts}, {s.diagnostics} diagnostics, {s.seconds:.1f} s")
    if langs := languages(s):
        lines.append(f"languages: {langs}")
    ratio = s.bundle_bytes / s.source_bytes if s.source_bytes else 0.0
    size = f"{s.bundle_bytes / 1e6:.2f} MB ({ratio:.2f}x the {s.source_bytes / 1e6:.2f} MB of source)"
    lines.append(f"bundle {s.out}: {size}")
    lines += notes_lines(s.notes)
    if timings:
        stages = ", ".join(f"{k} {v:.3f}" for k, v in s.stages.items())
        lines.append(f"stages: {stages}; total {s.seconds:.3f}")
    return lines
