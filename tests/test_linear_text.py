"""Readers of text that may be hostile (a pasted report, a doc comment, a signature, a line of a
bundle's chunk) read it in one pass: each replaces a regular expression that backtracked over long
runs of spaces or markers (seconds to minutes on a line of 10,000-100,000 characters; the times
are in bench/hostile.py and bench/RESULTS.md). Each is held to the pattern it replaced where that
pattern's reading was right."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from cora_ci.chunking.extractor import _without_tail
from cora_ci.chunking.sentences import first_sentence
from cora_ci.files.langs import _RST_TITLE
from cora_ci.rebind.view import _code_end
from cora_ci.retrieval import emitted, noise


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
