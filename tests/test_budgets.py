"""Budgets: real token counts, max/min tokens, merging, splitting with overlap, slicing, levels."""

from __future__ import annotations

import itertools

from conftest import by_anchor, run_chunk, uncovered

from cora_ci.chunking.tokens import default_counter


def _long_function(n: int) -> str:
    body = "\n".join(f"    total += compute_value(item_{i}, factor={i}) * weight_{i}" for i in range(n))
    return f"def accumulate(items):\n    total = 0\n{body}\n    return total\n"


def test_token_counts_come_from_the_model_tokenizer() -> None:
    r = run_chunk("a.py", _long_function(30) + "\nclass A:\n    x = 1\n    def f(self):\n        return 2\n")
    counter = default_counter()
    for c in r.chunks:
        assert c.tokens == counter.count(c.text), c.kind


def test_large_symbols_split_with_overlap_and_stay_in_budget() -> None:
    src = _long_function(400)
    r = run_chunk("a.py", src, max_tokens=1200, overlap_lines=6)  # six ~20-token lines fit an eighth
    parts = [c for c in r.chunks if c.kind == "method"]
    assert len(parts) > 5
    assert all(c.tokens <= 1200 for c in r.chunks)
    assert all(c.anchor == "a.py::accumulate" for c in parts)
    assert len({c.id for c in parts}) == len(parts)
    for a, b in itertools.pairwise(parts):
        assert b.start_line == a.end_line + 1 - 6  # six lines of overlap
    assert parts[1].header.endswith(f"Part 2 of {len(parts)}.")
    assert uncovered(r, src.encode()) == []


def test_overlap_holds_at_most_an_eighth_of_the_budget() -> None:
    """Long lines (a changelog's links, a minified bundle's) would repeat most of each piece in the
    next: the rows repeated are as many as `overlap_lines` allows within an eighth of the budget."""
    src = _long_function(400)  # ~20 tokens a line
    counter = default_counter()
    for budget, lines in ((200, 1), (400, 2), (1200, 6)):
        r = run_chunk("a.py", src, max_tokens=budget, overlap_lines=6)
        parts = [c for c in r.chunks if c.kind == "method"]
        assert len(parts) > 1
        for a, b in itertools.pairwise(parts):
            repeated = a.end_line + 1 - b.start_line
            assert repeated == lines, (budget, a.start_line, a.end_line, b.start_line)
            held = src.splitlines()[b.start_line - 1 : a.end_line]
            assert sum(counter.count(x) for x in held) <= budget // 8
        assert uncovered(r, src.encode()) == []
    text = "".join(f"- entry {i}: " + "see https://example.com/a/long/link " * 12 + "\n" for i in range(60))
    r = run_chunk("CHANGES.txt", text, overlap_lines=6)
    assert sum(len(c.text) for c in r.chunks) <= 1.15 * len(text)  # was 1.7x with six lines repeated


def test_forward_progress_with_extreme_settings() -> None:
    src = _long_function(40)
    r = run_chunk("a.py", src, max_tokens=16, min_tokens=0, overlap_lines=10_000)
    assert uncovered(r, src.encode()) == []
    assert all(c.tokens <= 16 for c in r.chunks)
    starts = [c.start_line for c in r.chunks if c.kind == "method"]
    assert starts == sorted(starts)


def test_a_single_line_over_budget_is_sliced() -> None:
    long_line = "x = [" + ", ".join(f"'value_{i}'" for i in range(400)) + "]"
    r = run_chunk("a.py", f"import os\n{long_line}\n", max_tokens=100)
    slices = [c for c in r.chunks if c.start_line == c.end_line == 2]
    assert len(slices) > 3
    assert "".join(c.text for c in slices) == long_line
    assert all(c.tokens <= 100 for c in slices)
    assert all(any(d.code == "CORA-CHK-008" for d in c.diagnostics) for c in slices)


def test_small_adjacent_siblings_merge_into_one_chunk() -> None:
    r = run_chunk("P.cs", """
        public class Person
        {
            public string First { get; set; }
            public string Last { get; set; }
            public int Age { get; set; }

            public string Describe()
            {
                var parts = new List<string> { First, Last, Age.ToString(CultureInfo.InvariantCulture) };
                return string.Join(" ", parts.Where(p => !string.IsNullOrWhiteSpace(p)));
            }
        }
    """, min_tokens=30)  # fmt: skip
    props = [c for c in r.chunks if c.kind == "property"]
    assert len(props) == 1
    assert props[0].symbols == ["First", "Last", "Age"]
    assert props[0].anchors == ["P.cs::Person.First", "P.cs::Person.Last", "P.cs::Person.Age"]
    assert props[0].header.startswith("Properties First, Last, Age of class Person. Signatures: string First")
    assert by_anchor(r)["P.cs::Person.Describe"].kind == "method"


def test_min_tokens_zero_keeps_siblings_apart() -> None:
    r = run_chunk("P.py", "class P:\n    a = 1\n    b = 2\n    c = 3\n    def f(self):\n        return 1\n",
                  min_tokens=0)  # fmt: skip
    assert [c.symbol for c in r.chunks if c.kind == "field"] == ["a", "b", "c"]


def test_chunk_level_class_keeps_small_types_whole() -> None:
    src = "class Small:\n" + "".join(f"    def m{i}(self):\n        return {i} * {i}\n" for i in range(8))
    whole = run_chunk("s.py", src, min_tokens=4, languages={"python": {"chunk_level": "class"}})
    assert [c.kind for c in whole.chunks] == ["type"]
    split = run_chunk("s.py", src, min_tokens=4)
    assert [c.kind for c in split.chunks].count("method") == 8


def test_chunk_level_block_cuts_methods_at_statements() -> None:
    src = _long_function(60)
    r = run_chunk("a.py", src, max_tokens=800, languages={"python": {"chunk_level": "block"}})
    parts = [c for c in r.chunks if c.kind == "method"]
    assert len(parts) >= 4 and all(c.tokens <= 200 for c in parts)
    assert uncovered(r, src.encode()) == []
