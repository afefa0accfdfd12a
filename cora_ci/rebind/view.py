"""What a result shows of a file: numbered verbatim lines, and `. . .` where lines are left out.

A `View` is the common currency of re-binding, budget packing and rendering. Keeping lines by
number (not as one text) is what lets overlapping results merge without printing a line twice,
and a type's skeleton take in the full body of a member that is a hit.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from cora_ci.chunking.model import ELISION, Chunk


@dataclass
class View:
    """Lines `start..end` (1-based, inclusive) of `path`; those not in `shown` are hidden.

    A hidden run is printed as one `. . .` line if any of its lines is in `marked` (whose value is
    the marker text, indented like the code it stands for), and left out silently otherwise (a
    skeleton leaves its members' doc comments out without a marker).
    """

    path: str
    start: int
    end: int
    shown: dict[int, str]
    marked: dict[int, str] = field(default_factory=dict)
    parts: tuple[tuple[int, int], ...] = ()  # merged views' ranges, when they do not meet

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """The line ranges this view is made of: its own, or those of the views merged into it
        that do not meet (a split function's first and last parts: 103-142 and 875-882, not
        103-882)."""
        return self.parts or ((self.start, self.end),)

    def rendered(self) -> list[tuple[int | None, str]]:
        """(line number, text) in order; markers have no number."""
        out: list[tuple[int | None, str]] = []
        n = self.start
        while n <= self.end:
            if n in self.shown:
                out.append((n, self.shown[n]))
                n += 1
                continue
            run_end = n
            while run_end + 1 <= self.end and run_end + 1 not in self.shown:
                run_end += 1
            marker = next((self.marked[i] for i in range(n, run_end + 1) if i in self.marked), None)
            if marker is not None:
                out.append((None, marker))
            n = run_end + 1
        return out

    def text(self) -> str:
        return "\n".join(t for _, t in self.rendered())


def from_chunk(chunk: Chunk) -> View:
    """The view a chunk's stored text gives: its verbatim ranges, and its `. . .` lines as markers."""
    lines = chunk.text.split("\n")
    ranges = chunk.verbatim_ranges()
    if sum(b - a + 1 for a, b in ranges) > len(lines) or not ranges:
        # a slice of one over-long line, or a text that does not match its ranges: show it as is
        return View(chunk.path, chunk.start_line, chunk.start_line + len(lines) - 1,
                    {chunk.start_line + i: t for i, t in enumerate(lines)})  # fmt: skip
    shown: dict[int, str] = {}
    marked: dict[int, str] = {}
    markers_left = len(lines) - sum(b - a + 1 for a, b in ranges)
    pos = 0
    cursor = chunk.start_line
    for a, b in [*ranges, (chunk.end_line + 1, chunk.end_line)]:
        marker = markers_left > 0 and pos < len(lines) and lines[pos].strip() == ELISION
        if a > cursor and marker:  # hidden lines cursor..a-1, shown as one `. . .` line
            for i in range(cursor, a):
                marked[i] = lines[pos]
            pos += 1
            markers_left -= 1
        for n in range(a, b + 1):
            shown[n] = lines[pos]
            pos += 1
        cursor = b + 1
    return View(chunk.path, chunk.start_line, chunk.end_line, shown, marked)


def from_rows(
    path: str,
    lines: list[str],
    rows: Iterable[int],
    quiet: Mapping[int, int] | None = None,
    tail_to: int | None = None,
) -> View:
    """A view of the current file as the chunker renders rows (0-based): gaps of blank lines are
    shown, leading and trailing blank rows dropped, a gap is marked unless `quiet` (a member's
    first shown row -> its doc's first row) says it only hides a doc comment, and `tail_to`
    extends the view over left-out trailing rows (a skeleton's closing lines)."""
    quiet = quiet or {}
    rs = [r for r in sorted(set(rows)) if 0 <= r < len(lines)]
    filled: list[int] = []
    for r in rs:
        if filled and r > filled[-1] + 1 and all(not lines[g].strip() for g in range(filled[-1] + 1, r)):
            filled.extend(range(filled[-1] + 1, r))
        filled.append(r)
    while filled and not lines[filled[0]].strip():
        filled.pop(0)
    while filled and not lines[filled[-1]].strip():
        filled.pop()
    if not filled:
        return View(path, (rs or [0])[0] + 1, (rs or [0])[0] + 1, {})
    shown = {r + 1: lines[r] for r in filled}
    marked: dict[int, str] = {}
    for prev, r in itertools.pairwise(filled):
        if r > prev + 1 and prev + 1 < quiet.get(r, r):
            _mark(lines, prev + 1, r, marked)
    end = filled[-1]
    if tail_to is not None and tail_to > end and any(lines[g].strip() for g in range(end + 1, tail_to + 1)):
        _mark(lines, end + 1, tail_to + 1, marked)
        end = tail_to
    return View(path, filled[0] + 1, end + 1, shown, marked)


def _mark(lines: list[str], a: int, b: int, marked: dict[int, str]) -> None:
    """Mark rows a..b-1 with a `. . .` indented like their first non-blank row."""
    first = next((g for g in range(a, b) if lines[g].strip()), a)
    line = lines[first]
    marker = line[: len(line) - len(line.lstrip())] + ELISION
    for g in range(a, b):
        marked[g + 1] = marker


def merge(views: list[View]) -> View:
    """One view of views of a file: a line shown by any is shown once; a hidden run is marked if
    any view marked it, and so are the lines between views that do not meet (the parts of a
    split function, their gap a `. . .` indented like the line after it)."""
    start = min(v.start for v in views)
    end = max(v.end for v in views)
    shown: dict[int, str] = {}
    marked: dict[int, str] = {}
    for v in views:
        for n, t in v.shown.items():
            shown.setdefault(n, t)
        for n, t in v.marked.items():
            marked.setdefault(n, t)
    spans = sorted(s for v in views for s in v.spans)
    joined = [list(spans[0])]
    for a, b in spans[1:]:
        reach = joined[-1][1]
        if a > reach + 1:  # lines reach+1..a-1: in no view
            after = shown.get(a, "")
            for n in range(reach + 1, a):
                marked.setdefault(n, after[: len(after) - len(after.lstrip())] + ELISION)
            joined.append([a, b])
        else:
            joined[-1][1] = max(reach, b)
    parts = tuple((a, b) for a, b in joined) if len(joined) > 1 else ()
    return View(views[0].path, start, end, shown, {n: t for n, t in marked.items() if n not in shown}, parts)


_OPENERS = (":", "{", "=>", "=", "(", ",")


_MARKER = re.compile(r"(?<=\s)(?:#|//)")  # a comment's start, after a space


def _code_end(line: str) -> str:
    """The line without a trailing comment (`def f(x):  # fmt: skip` ends with its `:`): from the
    first marker after a space that no quote follows. Found in one pass (a regular expression
    reading to the end from each space took 4.5 s on a line of 20,000 spaces)."""
    line = line.rstrip()
    after = max(line.rfind('"'), line.rfind("'")) + 1
    m = _MARKER.search(line, after)
    return line[: m.start()].rstrip() if m else line


def signature(view: View, name: str, lang: str) -> View:
    """The view cut to its signature: the line declaring the symbol (`declaring`; with attributes and
    decorators just above it) through the end of its declaration, then one `. . .` line.

    Used for results below the budget's verbatim share; for anonymous code the first line stands in.
    """
    rows = view.rendered()
    numbered = [(n, t) for n, t in rows if n is not None]
    if len(numbered) <= 1:
        return view
    idx = 0
    if name:
        idx = declaring([t for _, t in numbered], name, lang) or 0
    first = idx
    while first > 0 and numbered[first - 1][1].lstrip().startswith(("@", "[", "#[")):
        first -= 1
    last = idx
    if not _code_end(numbered[idx][1]).endswith(_OPENERS[:2]):
        for j in range(idx, min(idx + 8, len(numbered))):
            if _code_end(numbered[j][1]).endswith(_OPENERS[:3]):
                last = j
                break
    keep = numbered[first : last + 1]
    if len(keep) == len(numbered):
        return view
    shown = dict(keep)
    rest = [t for _, t in numbered[last + 1 :] if t.strip()] or [numbered[last][1]]
    indent = rest[0][: len(rest[0]) - len(rest[0].lstrip())]
    marker = indent + ELISION
    start, end = keep[0][0], view.end
    assert start is not None
    marked = {n: marker for n in range(start, end + 1) if n not in shown}
    return View(view.path, start, end, shown, marked)


def mentions(line: str, name: str) -> bool:
    """`name` occurs in `line` as a whole word."""
    i = line.find(name)
    while i >= 0:
        before = line[i - 1] if i > 0 else " "
        after = line[i + len(name)] if i + len(name) < len(line) else " "
        if not (before.isalnum() or before in "_$") and not (after.isalnum() or after in "_$"):
            return True
        i = line.find(name, i + 1)
    return False


# A line of a comment. A doc comment above a declaration often names what it documents (googletest's
# `// Don't inherit from TestPartResult as ...`, Scaladoc's `* ... [[os.makeDir.all]]`), so the line
# declaring a symbol is the first naming it outside one. `#` starts a comment only where the
# language says so: it is C's preprocessor (`# define`), a JavaScript private field, a Rust or
# PHP attribute, a Swift directive; and in a document nothing is a comment (`# Title` is a heading).
_COMMENTED = re.compile(r"\s*(?://|/\*|\*(?:\s|/|$)|--(?:\s|$)|;;|\(\*|\{-|<!--)")
_HASH_COMMENT = re.compile(r"\s*#(?!\[)")
_HASH_LANGS = frozenset({
    "python", "ruby", "perl", "bash", "fish", "r", "elixir", "julia", "powershell", "nim", "make",
    "cmake", "dockerfile", "starlark", "hcl", "terraform", "nix", "php", "yaml", "toml", "ini", "graphql",
})  # fmt: skip
_PROSE = frozenset({"markdown", "rst", "asciidoc", "text"})


def commented(line: str, lang: str) -> bool:
    """`line` of a `lang` file is a comment or inside one."""
    if lang in _PROSE:
        return False
    return bool(_COMMENTED.match(line)) or (lang in _HASH_LANGS and bool(_HASH_COMMENT.match(line)))


def indentation(line: str) -> int:
    return len(line) - len(line.lstrip())


_IMPL = re.compile(r"<(.+) as (.+)>")  # a Rust impl's or a Haskell instance's name: `<Text as FromJSON>`


def _impl_words(name: str) -> list[str]:
    """The words a line declaring an impl or instance holds (`impl Priced for Cart`, `instance
    FromJSON Text where`): its name is in no line as written (aeson's merged instances were each
    shown from the first one's line, 84 lines for a 2-line `instance FromJSON Text`)."""
    m = _IMPL.fullmatch(name)
    return re.findall(r"[\w']+", m[1]) + re.findall(r"[\w']+", m[2]) if m else []


def declaring(
    lines: Sequence[str], name: str, lang: str, start: int = 0, indent: int | None = None
) -> int | None:
    """The index of the line that declares `name` among `lines` (from `start`, indented by
    `indent` if given): the first naming it outside a comment, else the first naming it (None:
    none does)."""
    first = None
    said = _impl_words(name)
    for i in range(start, len(lines)):
        if indent is not None and indentation(lines[i]) != indent:
            continue
        if all(mentions(lines[i], w) for w in said) if said else mentions(lines[i], name):
            if not commented(lines[i], lang):
                return i
            if first is None:
                first = i
    return first
