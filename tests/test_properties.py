"""Invariants over generated files: nothing lost, budgets hold, ids and links are sound, determinism."""

from __future__ import annotations

import functools
import unicodedata
from importlib import resources
from typing import Any

from conftest import run_chunk, uncovered
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

# A token assembled at run time: redacted where it stands, every line stays covered.
FAKE_TOKEN = "gh" + "p_" + "Zq3" * 12
PY_BLOCKS = [
    "import os\n", "from a.b import (c,\n    d)\n", "# a comment line\n", "X = 1\n", "\n",
    "def f(a, b):\n    '''Doc. More.'''\n    return a + b\n",
    "@decorator(1)\ndef g():\n    pass\n",
    "class A(Base):\n    x: int = 0\n    def m(self):\n        return self.x\n    @property\n    def p(self):\n        return 2\n",
    "if __name__ == '__main__':\n    main()\n",
    "def broken(:\n", "    stray_indent = 1\n", "h = lambda q: q * 2\n",
    "s = '" + "long words " * 60 + "'\n",
    "class Outer:\n    class Inner:\n        def deep(self):\n            return [i for i in range(3)]\n",
    f"def leak():\n    return '{FAKE_TOKEN}'\n", f"TOKEN = '{FAKE_TOKEN}'\n",
]  # fmt: skip
TS_BLOCKS = [
    "import { a } from './a';\n", "/** Doc. */\nexport function f(x: number): number { return x; }\n",
    "export const g = (s: string) => {\n  return s.trim();\n};\n",
    "class C {\n  private n = 1;\n  get v(): number { return this.n; }\n  run(): void {\n    go();\n  }\n}\n",
    "const o = { a() { return 1; }, b: () => 2 };\n", "}\n", "let z = ((((1))));\n", "\n",
]  # fmt: skip
MD_BLOCKS = [
    f"## Key {FAKE_TOKEN}\n",
    f"token {FAKE_TOKEN} here\n",
    "# Title\n",
    "## Sub\n",
    "text line\n",
    "```\n# code\n```\n",
    "\n",
    "- item\n",
    "### Deep\n",
]


def _files(blocks: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(blocks), max_size=25).map("".join)


budgets = st.fixed_dictionaries({
    "max_tokens": st.integers(16, 400), "min_tokens": st.integers(0, 15),
    "overlap_lines": st.integers(0, 12), "lines_per_chunk": st.integers(1, 40),
})  # fmt: skip
cases = st.one_of(
    st.tuples(st.just("m.py"), _files(PY_BLOCKS)),
    st.tuples(st.just("m.ts"), _files(TS_BLOCKS)),
    st.tuples(st.just("m.md"), _files(MD_BLOCKS)),
    st.tuples(st.just("notes.txt"), st.text(st.characters(codec="utf-8"), max_size=600)),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases, cfg=budgets)
@example(  # two members of one line over budget were joined into one chunk of the line
    case=("m.ts", "const o = { a() { return 1; }, b: () => 2 };\n"),
    cfg={"max_tokens": 16, "min_tokens": 0, "overlap_lines": 0, "lines_per_chunk": 1},
)
@example(  # a skeleton's closing `. . .` once pushed it over budget
    case=("m.py", PY_BLOCKS[7]),
    cfg={"max_tokens": 17, "min_tokens": 0, "overlap_lines": 0, "lines_per_chunk": 1},
)
def test_chunking_invariants(case: tuple[str, str], cfg: dict[str, int]) -> None:
    path, text = case
    data = text.encode("utf-8", errors="surrogatepass")
    r = run_chunk(path, data, **cfg)
    if r.strategy is None:  # a generated text may look binary
        return
    # Every non-blank line is in some chunk (a secret is redacted, its line kept), except the lines of
    # chunks dropped for a secret in their context.
    dropped = {n for a, b in r.dropped for n in range(a, b + 1)}
    assert set(uncovered(r, data)) <= dropped
    assert (FAKE_TOKEN in text) == any(d.code == "CORA-SEC-002" for d in r.diagnostics)
    assert not any(
        FAKE_TOKEN in c.text + c.header + "".join(c.hierarchy + c.symbols + c.anchors) for c in r.chunks
    )
    ids = [c.id for c in r.chunks]
    assert len(ids) == len(set(ids))
    by_id = {c.id: c for c in r.chunks}
    for c in r.chunks:
        assert 1 <= c.start_line <= c.end_line
        assert c.tokens <= cfg["max_tokens"]
        assert c.text.strip()
        if c.parent is not None:
            assert c.id in by_id[c.parent].children
        for child in c.children:
            assert by_id[child].parent == c.id
    again = run_chunk(path, data, **cfg)
    assert [c.to_dict() for c in again.chunks] == [c.to_dict() for c in r.chunks]


_CODE_ALPHABET = st.sampled_from([
    *"abzAZ09_ \t.,;:()[]{}<>!?@#$%^&*~`'\"\\/|-+=", "[CLS]", "[MASK]", "[mask]", "[SEP]", "[UNK]", "[PAD]",
    "naïve", "变量", "\x00", "\x1c", "\x0b", "\u00a0", "\u200b", "\ufffd", "Ω", "#" * 120, "x" * 101,
])  # fmt: skip


@functools.cache
def _reference() -> Any:
    """The `tokenizers` library's BERT tokenizer on the same vocabulary: what `bert.py` reproduces."""
    from tokenizers import BertWordPieceTokenizer

    vocab = resources.files("cora_ci.embedding.minilm").joinpath("vocab.txt")
    with resources.as_file(vocab) as path:
        return BertWordPieceTokenizer(str(path), lowercase=True)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(_CODE_ALPHABET, max_size=30).map("".join), max_size=12))
def test_line_counts_equal_the_tokenizers_library(lines: list[str]) -> None:
    """The word cache, the direct WordPiece path and the whole plain-Python tokenizer count what
    the `tokenizers` library counts, and put each token where it does."""
    from cora_ci.chunking import bert
    from cora_ci.chunking.tokens import default_counter

    counter = default_counter()
    encoded = [_reference().encode(line, add_special_tokens=False) for line in lines]
    expected = [len(e.ids) for e in encoded]
    assert [counter.count(line) for line in lines] == expected
    assert counter.count_lines(lines) == expected
    assert counter.count_lines(lines) == expected  # again, now from the cache
    assert [bert.starts(line, counter.vocab) for line in lines] == [
        [o[0] for o in e.offsets] for e in encoded
    ]


def _stable(c: str) -> bool:
    """Assigned by Unicode 3.2 and in the same category since (U+166D was punctuation, is a symbol);
    not a lone surrogate, which the library's Python binding refuses (bert.py drops it)."""
    return unicodedata.ucd_3_2_0.category(c) == unicodedata.category(c) not in ("Cn", "Cs")


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters().filter(_stable), max_size=40))
def test_any_text_is_counted_as_the_tokenizers_library_counts_it(text: str) -> None:
    """Any text of characters both sides' tables know (controls, marks, ideographs, other
    scripts' punctuation and symbols) alike."""
    from cora_ci.chunking import bert
    from cora_ci.chunking.tokens import default_counter

    vocab = default_counter().vocab
    e = _reference().encode(text, add_special_tokens=False)
    assert bert.count(text, vocab) == len(e.ids)
    assert bert.starts(text, vocab) == [o[0] for o in e.offsets]


def test_a_line_longer_than_a_window_is_counted_and_cut_as_the_library_would() -> None:
    """Over 64 KB a line is taken window by window, ending each at a space or a mark."""
    from cora_ci.chunking.tokens import default_counter

    counter = default_counter()
    line = "".join(f"naïve_{i} 变量.value[CLS]{i}, " for i in range(12_000))  # ~300 KB
    assert len(line) > 4 * 65_536
    assert counter.count(line) == len(_reference().encode(line, add_special_tokens=False).ids)
    pieces = counter.slice(line, 500)
    assert "".join(pieces) == line and all(counter.count(p) <= 500 for p in pieces)
    assert len(pieces) == -(-counter.count(line) // 500)


def test_a_function_holding_an_object_of_methods_and_nested_functions_loses_no_line() -> None:
    """Nested functions get chunks of their own; an object literal in a function stays its code."""
    body = "".join(f"    const step{i} = compute({i}, value);\n" for i in range(30))
    src = (
        "export class Scheduler {\n  createDelegates(value: number) {\n"
        "    const delegate = {\n      set(handle: number) {\n        return handle + 1;\n      },\n"
        "      clear(handle: number) {\n        return handle - 1;\n      },\n    };\n"
        f"    const run = (x: number) => {{\n{body}      return x;\n    }};\n"
        "    return { delegate, run };\n  }\n}\n"
    )
    r = run_chunk("s.ts", src, max_tokens=120)
    assert uncovered(r, src.encode()) == []
    anchors = {a for c in r.chunks for a in c.anchors}
    assert "s.ts::Scheduler.createDelegates.run" in anchors
    assert not any(".delegate." in a for a in anchors)
