"""Packing rows into pieces within a token budget.

One routine serves every strategy: a piece is a sorted set of rows (gaps become a `. . .` line),
cut where the budget runs out, preferably at a statement or member boundary, with `overlap` rows
repeated for continuity, always moving forward, and slicing a single line that alone is over
budget so nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple

from cora_ci.chunking.model import ELISION
from cora_ci.chunking.tokens import TokenCounter

_NO_QUIET: Mapping[int, int] = MappingProxyType({})
_SLICE_MARGIN = 4  # re-tokenizing a cut segment can add a token or two at its edges
_OVERLAP_SHARE = 8  # the rows a piece repeats from the one before hold at most 1/8 of its budget


class Piece(NamedTuple):
    start: int  # 0-based row
    end: int
    text: str
    tokens: int
    elided: list[tuple[int, int]]  # 1-based inclusive line ranges
    slice_no: int = 0  # 1.. for segments of one over-long line


@dataclass
class Rows:
    """The lines of one file with their token counts, shared by all packing calls."""

    lines: list[str]
    tokens: list[int]
    counter: TokenCounter
    marker_tokens: int
    # blank rows that stand for what is not chunked (a notebook's outputs): never bridged
    excluded: frozenset[int] = frozenset()

    @classmethod
    def of(cls, lines: list[str], counter: TokenCounter, excluded: frozenset[int] = frozenset()) -> Rows:
        return cls(lines, counter.count_lines(lines), counter, counter.count(ELISION), excluded)

    def blank(self, row: int) -> bool:
        return not self.lines[row].strip()

    def fill_blank_gaps(self, rows: list[int]) -> list[int]:
        """Add the rows of gaps that hold only blank lines, so they are not shown as elided; a gap
        over excluded rows stays a gap."""
        out: list[int] = []
        for r in rows:
            if (
                out
                and r > out[-1] + 1
                and all(self.blank(g) and g not in self.excluded for g in range(out[-1] + 1, r))
            ):
                out.extend(range(out[-1] + 1, r))
            out.append(r)
        return out

    def render(self, rows: list[int], quiet: Mapping[int, int] = _NO_QUIET) -> Piece:
        """Text of `rows`; a gap becomes a `. . .` line unless it lies within `quiet[r]..r-1`.

        `quiet` maps a member's first shown row to the first row of its doc comment: a skeleton
        leaves member docs out without a marker, but still marks an elided body before them.
        """
        parts: list[str] = []
        elided: list[tuple[int, int]] = []
        tokens = 0
        prev = None
        for r in rows:
            if prev is not None and r > prev + 1:
                elided.append((prev + 2, r))
                if prev + 1 < quiet.get(r, r):
                    parts.append(self._marker(prev + 1, r))
                    tokens += self.marker_tokens
            parts.append(self.lines[r])
            tokens += self.tokens[r]
            prev = r
        return Piece(rows[0], rows[-1], "\n".join(parts), tokens, elided)

    def _marker(self, a: int, b: int) -> str:
        """A `. . .` line indented like the first non-blank row it stands for (rows a..b-1)."""
        first = next((g for g in range(a, b) if not self.blank(g)), a)
        line = self.lines[first]
        return line[: len(line) - len(line.lstrip())] + ELISION

    def with_tail(self, piece: Piece, end: int) -> Piece:
        """Extend a piece to row `end` with one `. . .` line for the rows it leaves out."""
        if end <= piece.end or all(self.blank(r) for r in range(piece.end + 1, end + 1)):
            return piece
        text = piece.text + "\n" + self._marker(piece.end + 1, end + 1)
        elided = [*piece.elided, (piece.end + 2, end + 1)]
        return piece._replace(end=end, text=text, tokens=piece.tokens + self.marker_tokens, elided=elided)

    def pack(
        self,
        rows: list[int],
        budget: int,
        overlap: int = 0,
        cuts: frozenset[int] = frozenset(),
        max_rows: int = 0,
        quiet: Mapping[int, int] = _NO_QUIET,
    ) -> list[Piece]:
        """Split sorted `rows` into pieces of at most `budget` tokens (and `max_rows` rows)."""
        rows = _trim(self.fill_blank_gaps(rows), self)
        tok = self.tokens
        pieces: list[Piece] = []
        i, n, done = 0, len(rows), -1  # done: index of the last row already in a piece
        while i < n:
            if self.blank(rows[i]):
                i += 1
                continue
            if tok[rows[i]] > budget:
                pieces.extend(self._slice(rows[i], budget))
                done, i = i, i + 1
                continue
            j, total = i, tok[rows[i]]
            while j + 1 < n:
                nxt = rows[j + 1]
                add = tok[nxt] + (self.marker_tokens if nxt > rows[j] + 1 else 0)
                if tok[nxt] > budget or total + add > budget or (max_rows and j + 1 - i >= max_rows):
                    break
                total, j = total + add, j + 1
            if j + 1 < n and cuts:
                lo = max(i + (j - i) // 2, done + 1) + 1
                best = max((k for k in range(lo, j + 1) if rows[k] in cuts), default=0)
                if best:
                    j = best - 1
            while j > i and self.blank(rows[j]):
                j -= 1
            if j <= done:  # the overlap left no room for a new row: continue without it
                i = max(done + 1, i + 1)
                continue
            pieces.append(self.render(rows[i : j + 1], quiet))
            done = j
            if j + 1 >= n:
                break
            i = self._overlap_start(rows, i, j, overlap, budget)
        return pieces

    def _overlap_start(self, rows: list[int], i: int, j: int, overlap: int, budget: int) -> int:
        """Where the next piece starts: `overlap` rows back, fewer if they would crowd it out or
        hold more than an eighth of the budget: six long lines (a minified bundle's, a changelog's
        links) would otherwise repeat most of each piece in the next (rxjs's CHANGELOG.md: text
        1.44x its bytes)."""
        nxt = j + 1
        if self.tokens[rows[nxt]] > budget or overlap <= 0:
            return nxt
        k = max(nxt - overlap, i + 1)
        held = sum(self.tokens[r] for r in rows[k:nxt])
        while k < nxt and (held > budget // _OVERLAP_SHARE or held + self.tokens[rows[nxt]] > budget):
            held -= self.tokens[rows[k]]
            k += 1
        return k

    def _slice(self, row: int, budget: int) -> list[Piece]:
        segments = self.counter.slice(self.lines[row], max(1, budget - _SLICE_MARGIN))
        return [
            Piece(row, row, seg, self.counter.count(seg), [], k) for k, seg in enumerate(segments, start=1)
        ]


def _trim(rows: list[int], r: Rows) -> list[int]:
    a, b = 0, len(rows)
    while a < b and r.blank(rows[a]):
        a += 1
    while b > a and r.blank(rows[b - 1]):
        b -= 1
    return rows[a:b]
