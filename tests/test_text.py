"""Text as the chunker and the re-binding read it: lines split on CRLF, CR or LF."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from cora_ci.files.text import decode, split_lines


def _by_expression(text: str) -> list[str]:
    lines = re.split(r"\r\n|\r|\n", text)
    return lines[:-1] if lines and lines[-1] == "" else lines


@given(st.text(alphabet=st.sampled_from(["a", " ", "\n", "\r", "\x0b", "\x0c", "\u2028", "é"])))
@example("")
@example("\n")
@example("a\r\nb\rc\n")
@example("a\n\n")
@example("a\u2028b\x0cc")  # breaks for `str.splitlines`, not for a source file's lines
def test_lines_split_on_crlf_cr_and_lf_only(text: str) -> None:
    assert split_lines(text) == _by_expression(text)
    assert decode(text.encode()).lines == _by_expression(text)
