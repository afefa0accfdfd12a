"""Readers of text that may be hostile (a pasted report, a doc comment, a signature, a line of a
bundle's chunk) read it in one pass: each replaces a regular expression that backtracked over long
runs of spaces or markers (seconds to minutes on a line of 10,000-100,000 characters; the times
are in bench/hostile.py and bench/RESULTS.md). Each is held to the pattern it replaced where that
pattern's reading was right."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from cora_ci.chunking import macros, secrets
from cora_ci.chunking.extractor import _without_tail
from cora_ci.chunking.markup import asciidoc
from cora_ci.chunking.sentences import first_sentence
from cora_ci.files.langs import _RST_TITLE
from cora_ci.rebind.view import _code_end
from cora_ci.retrieval import emitted, noise, query, quoted, related
from cora_ci.retrieval.frames import Clue, clues


@given(st.text(alphabet=" \t#/\"':ax", max_size=30))
def test_a_lines_code_ends_before_its_first_comment_after_the_last_quote(line: str) -> None:
    assert _code_end(line) == re.sub(r"\s+(#|//)[^\"']*$", "", line.rstrip(), count=1)


SIGNATURE_PARTS = ["a", " ", "\t", "=", ">", "-", "{", ":", ";", ",", "=>", "->", "(", ")"]


@given(st.lists(st.sampled_from(SIGNATURE_PARTS), max_size=14))
def test_a_signature_loses_the_markers_that_open_its_body(parts: list[str]) -> None:
    sig = "".join(parts)
    assert _without_tail(sig) == re.sub(r"(\s*(=>|->|[{:;=,]))+\s*$", "", sig)


_VERSION_LINE_BEFORE = re.compile(
    r"^\s*[-*]?\s*[A-Za-z][\w .\-]{0,40}?\s*(?::|==|>=|~=|\s)\s*v?\d+\.\d+(?:[.\w+\-]*)"
    r"(?:\s*\(.*\))?(?:\s*\[.*\])?\s*$"
    r"|^\s*(?:machine|executable|platform|os|lib_dirs|cblas_libs|macros|prefix|filepath|internal_api|"
    r"num_threads|threading_layer|architecture|user_api)\s*:.*$"
    r"|^\s*(?:system|blas|python\sdep(?:endencie)?s|built\swith\sopenmp|threadpoolctl\sinfo)\s*:\s*$",
    re.I,
)
VERSION_WORDS = [
    "numpy",
    "machine",
    "blas",
    "a",
    " ",
    "\t",
    "-",
    "*",
    ":",
    "==",
    "~=",
    "1",
    ".",
    "2",
    "v",
    "(",
    ")",
    "[",
]


@given(st.lists(st.sampled_from(VERSION_WORDS), max_size=12))
def test_a_version_line_is_what_it_was(parts: list[str]) -> None:
    line = "".join(parts)
    assert bool(noise._VERSION_LINE.match(line)) == bool(_VERSION_LINE_BEFORE.match(line))


def test_a_doc_comments_markers_tags_and_closing_are_not_its_sentence() -> None:
    assert (
        first_sentence("/** Returns the <code>Foo</code> of a bar. More. */") == "Returns the Foo of a bar."
    )
    assert (
        first_sentence('/// <summary>Reads a <see cref="Bar"/> from text.</summary>') == "Reads a from text."
    )
    assert first_sentence("/**\n * Parses a line. */") == "Parses a line."
    assert first_sentence("# Sums <a and b.\n") == "Sums <a and b."  # a `<` that opens no tag stays


@given(st.text(alphabet="a =-~\t\n.", max_size=40))
def test_a_rest_title_is_found_as_the_lazy_pattern_found_it(text: str) -> None:
    lazy = re.compile(r"^(\w[^\n]*?)[ \t]*\n([=\-~^\"'`#*+])\2{2,}[ \t]*$", re.MULTILINE)
    assert len(_RST_TITLE.findall(text)) == len(lazy.findall(text))


# the pattern before, its repetition possessive: a backslash read only as an escape, as now
_LITERAL_ONE_WAY = re.compile(r"""(["'`])((?:\\.|(?!\1)[^\n])*+)\1""")


@given(st.text(alphabet="\"'`\\ax\n", max_size=24))
def test_a_string_literal_is_read_with_each_backslash_an_escape(code: str) -> None:
    """An aeson trial: a quoted message's query hung on a JSON line of escapes that a string opened
    and never closed (`"This PR ...\\r\\n\\r\\n# Issues\\r\\n...`): the pattern read each backslash
    two ways, doubling its work for every one more. The same literals, each backslash an escape."""
    assert [m[2] for m in emitted._LITERAL.finditer(code)] == [m[2] for m in _LITERAL_ONE_WAY.finditer(code)]


def test_an_unclosed_string_of_escapes_is_read_in_one_pass() -> None:
    line = (
        '    "body": "' + "WIP yet.\\r\\n\\r\\n# Issues\\r\\n" * 400
    )  # 2,400 escapes: 2^2400 readings before
    assert [m[2] for m in emitted._LITERAL.finditer(line)] == ["body"]


# The patterns before a regex audit (helper session, 2026-11-30): each read some run of characters
# two ways and took cubic or quadratic time on hostile input (a line of 2,000 blanks after a macro
# name indexed in 29 s; a 100 KB report of CamelCase ~100 s). The rewrites read each run once and
# find the same on ordinary text.
_BEFORE = {
    "alone": re.compile(
        rb"^[ \t]*(?P<name>[A-Z_][A-Z0-9_]{2,})[ \t]*(?:\([^\n]*\))?[ \t]*(?://[^\n]*|/\*[^\n]*?\*/)?[ \t]*\r?$",
        re.M,
    ),
    "heading": re.compile(r"^\s*(?:#{1,6}\s+|\*\*)(?P<title>[^#*]+?)(?:\*\*)?:?\s*$"),
    # (a category's colon is not the first of `::`: `A::B` is a path, as the pattern says since then)
    "category": re.compile(
        r"(?:^[ \t>|]*|[ \t])(?P<category>[\w.]*[A-Z][a-z\d]+(?:[A-Z][a-z\d]*)+)[ \t]*:(?!:)[ \t]*(?P<msg>.+)$"
        r"|^[ \t]+(?P<invalid>[^\n\[]+?) \[type=\w+",
        re.M,
    ),
    "placeholder": re.compile(r"%[-#+ 0]*\d*(?:\.\d+)?[a-zA-Z]|%\(\w+\)[a-z]|[$#]?\{[^{}\n]*\}"),
    "adoc": re.compile(r"^(={1,6}|#{1,6})[ \t]+(\S.*?)[ \t]*(?:[ \t]\1)?$"),
    "apart": re.compile(rb"[ \t]*\r?\n(?:[ \t]*\r?\n)+\s*" + macros._DECL),
    # A comment as C reads it: `//` to its line's end, `/*` to the first `*/` (the pattern before
    # could end either sooner or later to make a field of what follows: `//a a;`).
    "field": re.compile(
        rb"\s*(?:(?://[^\n]*(?![^\n])|/\*(?:(?!\*/).)*\*/)\s*)*"
        rb"(?:(?:const|volatile|unsigned|signed|struct|enum|union)[ \t]+)*"
        rb"[A-Za-z_]\w*(?:[ \t]*\*+[ \t]*|[ \t]+)[A-Za-z_]\w*[ \t]*(?:\[[^\]\n]*\][ \t]*)*;",
        re.S,
    ),
}


@given(st.binary(max_size=30).map(lambda b: bytes(b"AB_ \t()/*x\n"[c % 11] for c in b)))
def test_a_macro_alone_on_its_line_is_found_as_before(src: bytes) -> None:
    assert [m.group() for m in macros._ALONE.finditer(src)] == [
        m.group() for m in _BEFORE["alone"].finditer(src)
    ]


@given(st.text(alphabet="#* :ab\t", max_size=20))
def test_a_reports_heading_is_read_as_before(line: str) -> None:
    old = _BEFORE["heading"].match(line)
    new = noise._HEADING.match(line)
    before = old.group("title").strip() if old else ""
    assert (noise._title(new) if new else "") == before


@given(st.text(alphabet="AaBb1.x: \t\n[]=type", max_size=40))
def test_a_messages_category_is_read_as_before(text: str) -> None:
    before = [(m["category"], m["msg"], m["invalid"]) for m in _BEFORE["category"].finditer(text)]
    assert [tuple(c) for c in quoted._categorized(text)] == before


def test_a_name_that_is_no_category_is_looked_past_on_its_line() -> None:
    """The audit's possessive pattern took a line's first `name:` with the rest of the line, so
    `ERROR: ValidationError: ...` lost its category (the property above found `A1A::`'s twin)."""
    assert [tuple(c) for c in quoted._categorized("ERROR: ValidationError: value is not a valid email")] == [
        ("ValidationError", "value is not a valid email", None)
    ]
    assert quoted._categorized("x\n" + "a: " * 30_000) == []  # each candidate read once


@given(st.text(alphabet="%-#+ 0123.dsq(x){}$", max_size=24))
def test_a_literals_placeholders_are_read_as_before(lit: str) -> None:
    assert emitted._PLACEHOLDER.split(lit) == _BEFORE["placeholder"].split(lit)


@given(st.text(alphabet="=# \tab", max_size=20).map(str.rstrip))  # (closing marks before blanks: cut now)
def test_an_asciidoc_title_is_read_as_before(line: str) -> None:
    old = _BEFORE["adoc"].match(line)
    new = asciidoc([line])
    assert [(s.name) for s in new] == ([old[2]] if old else [])


@given(st.binary(max_size=40).map(lambda b: bytes(b" \t\r\n/*ab;int x("[c % 15] for c in b)))
def test_a_macros_neighbours_are_read_as_before(src: bytes) -> None:
    for name in (
        ("apart", "field") if b"/" not in src else ("field",)
    ):  # comments after blank lines: apart now
        new = (macros._APART if name == "apart" else macros._FIELD).match(src)
        old = _BEFORE[name].match(src)
        assert (new.group() if new else None) == (old.group() if old else None), name


def test_hostile_runs_are_read_in_one_pass() -> None:
    """Each input took seconds to minutes before (the audit's times): a test that hangs is the
    failure."""
    assert macros._ALONE.search(b"FOO" + b" " * 20_000 + b"x\n") is None
    assert noise._HEADING.match("#" + " " * 20_000 + "#") is None
    assert quoted._categorized("x\n" + "AaA" * 30_000) == []
    assert quoted.messages(" " * 50_000 + "x") == [] and quoted._ABOVE.search(" " * 50_000 + "x") is None
    assert (
        related._CALL.findall("$" * 50_000) == [] and query._GO_METHOD.sub("", "." * 50_000) == "." * 50_000
    )
    assert secrets._KEY_BODY.match(" " * 100_000 + "x") is None  # a key block's line
    assert not any(c.frame for c in clues("1\n    at " + "<a>/" * 25_000 + "x.ts:1"))  # placeholders
    assert emitted._PLACEHOLDER.split("a %" + "0" * 50_000 + "!") == ["a %" + "0" * 50_000 + "!"]
    assert quoted.messages(" \u201c" * 50_000) == []
    assert quoted.messages("a" + " b" * 50_000) == []  # one line, no value: no message pasted alone
    assert asciidoc(["= x" + " " * 50_000 + "y"])[0].name.endswith("y")
    assert macros._APART.match(b"\n" * 50_000 + b"1") is None
    assert macros._FIELD.match(b"// " + b"a" * 50_000) is None
    assert clues("1\n#0 " + " " * 50_000) == [] and clues("1\n#1 c(" + ") (" * 20_000) == []
    assert clues("1\n   at " + "a." * 50_000) == [] and clues("1\n   at " + "<" * 50_000 + ".x()") == []
    assert (
        clues("1: a" + " " * 50_000 + "x") == [] and clues("1: " + "a<" * 20_000 + "b" + ">" * 20_000) == []
    )
    assert [c.frame for c in clues("1\n \u276f " + "a " * 30_000 + "x.ts:1")] == [False]  # a mention
    assert clues("1\nx.py in f(" + "a" * 50_000) == [
        Clue("x.py", None, None, False)
    ]  # IPython 7's header alone
    assert not any(c.frame for c in clues("1\n" + ("x.py in f()\n" + "  1 a\n" * 39) * 500))  # no arrow
    assert clues("1\n" + ("\u2502 " + "a" * 60 + " \u2502\n") * 1500) == []  # full panel lines, no header
    assert (
        clues("1\n" + "a" * 62 + " " * 50_000 + "x") == []
        and clues("1\n2024-05-01T10:00:00." + "1" * 50_000) == []
    )
    assert clues("1\n\u2502 " + " " * 100_000 + "x") == [] and clues("1\n" + "\u2502 \u2502" * 33_000) == []
