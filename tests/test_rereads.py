"""Readings of valid code a grammar misreads as written (`chunking/rereads.py`): the symbols are
the file's, the lines and text those of the file as written."""

from __future__ import annotations

import re
import textwrap

from conftest import run_chunk
from hypothesis import given, settings
from hypothesis import strategies as st

from cora_ci.chunking import rereads

_OKIO = """
    package okio

    /**
     * A source that inflates.
     */
    expect class InflaterSource
    /**
     * This internal constructor shares a buffer with its trusted caller.
     */
    internal constructor(
      source: BufferedSource,
      inflater: Inflater,
    ) : Source {
      constructor(source: Source, inflater: Inflater)

      override fun read(sink: Buffer, byteCount: Long): Long
      override fun close()
    }

    class Repository
    // Dagger builds it.
    @Inject constructor(private val api: Api, private val cache: Cache) {
      fun load(id: String): Item {
        return cache.get(id) ?: api.fetch(id)
      }
    }

    actual open class RealBufferedSink actual constructor(
      @JvmField actual val sink: Sink,
    ) : BufferedSink {
      override fun flush() {
        sink.flush()
      }
    }

    fun Source.inflate(inflater: Inflater = Inflater()): InflaterSource =
      InflaterSource(this, inflater)
"""


def test_kotlin_constructor_on_its_own_line_and_platform_properties() -> None:
    """An okio trial: a class whose primary constructor stands on the next line (`expect class
    InflaterSource` then `internal constructor(`, 22 of okio's files with such a class or the
    next case) was one line and its members top-level functions; a class parameter `@JvmField
    actual val sink` made the class an error."""
    data = textwrap.dedent(_OKIO).lstrip("\n").encode()
    r = run_chunk("okio/InflaterSource.kt", data, min_tokens=0)
    lines = data.decode().split("\n")
    got = {a.split("::")[1]: c for c in r.chunks for a in c.anchors}
    assert (got["InflaterSource"].start_line, got["InflaterSource"].end_line) == (3, 18)  # its KDoc too
    assert {"InflaterSource.read", "InflaterSource.close", "Repository.load",
            "RealBufferedSink.flush"} <= got.keys(), sorted(got)  # fmt: skip
    assert "read" not in got and "load" not in got
    assert (got["Repository"].start_line, got["Repository"].end_line) == (20, 26)
    assert (got["Repository.load"].start_line, got["Repository.load"].end_line) == (23, 25)
    assert (got["RealBufferedSink"].start_line, got["RealBufferedSink"].end_line) == (28, 34)
    assert (got["inflate"].start_line, got["inflate"].end_line) == (36, 37)
    assert not [d for d in r.diagnostics if d.code in ("CORA-CHK-001", "CORA-CHK-002")]
    for c in r.chunks:  # each chunk's text is the file's own lines
        if not c.elided:
            assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line]), c.anchors


def test_a_class_header_inside_a_comment_joins_no_constructor() -> None:
    """`class A// a commentexpect open class B<T>` ends with a class header inside its comment: the
    constructor below was joined into the comment (the property below drew it)."""
    src = b"class A// a commentexpect open class B<T>\n  constructor( "
    assert rereads.reread("kotlin", src) == src


def test_a_constructor_after_a_declaration_is_left_as_written() -> None:
    """A secondary constructor after a member is no class's primary one: nothing is rewritten."""
    src = b"class A {\n  val x: Int\n  internal constructor(x: Int) {\n    this.x = x\n  }\n}\n"
    assert rereads.reread("kotlin", src) == src


_COMMENT = re.compile(rb"/\*.*?\*/|//[^\n]*", re.S)


def _tokens(src: bytes) -> list[bytes]:
    """The code's words and marks, without comments and without `actual`/`expect`."""
    words = re.findall(rb"\w+|[^\w\s]", _COMMENT.sub(b" ", src))
    return [t for t in words if t not in (b"actual", b"expect")]


_PARTS = st.sampled_from([
    "class A", "expect open class B<T>", "object C", "\n", "\n\n", " ", "// a comment", "// c",
    "/** doc\n * more */", "internal ", "@Inject ", "private ", "constructor(", "x: Int", ", ",
    "\n  ", "y: String = \"a b\"", ")", " : Base {", "}", "actual val z: Z", "fun f() = 1",
    "@JvmField actual val s: S", "expect val e: E",
])  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_PARTS, max_size=30))
def test_a_rewrite_keeps_every_byte_and_row_and_changes_no_code(parts: list[str]) -> None:
    """Whatever is rewritten, the bytes keep their offsets and the file its line count, and only
    blanks, comments and a property's `actual`/`expect` change."""
    src = "".join(parts).encode()
    out = rereads.reread("kotlin", src)
    assert len(out) == len(src) and out.count(b"\n") == src.count(b"\n")
    assert _tokens(out) == _tokens(src)
