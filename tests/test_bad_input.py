"""Bad input never crashes chunking: encodings, line ends, binary, broken, huge, nested, minified."""

from __future__ import annotations

import codecs
import tracemalloc
from pathlib import Path

import pytest
from conftest import init_repo, run_chunk, uncovered

from cora_ci.build import build
from cora_ci.bundle import open_bundle
from cora_ci.chunking import outline as outline_mod
from cora_ci.rebind.locator import locate
from cora_ci.render import nested

SRC = "def f(x):\n    return x + 1\n\n\nclass K:\n    def g(self):\n        return 'ü'\n"


def _shape(r):  # type: ignore[no-untyped-def]
    return [(c.kind, c.anchor, c.start_line, c.end_line, c.text) for c in r.chunks]


def test_encodings_and_line_endings_chunk_identically() -> None:
    base = run_chunk("m.py", SRC.encode())
    for data in (
        codecs.BOM_UTF8 + SRC.encode(),
        codecs.BOM_UTF16_LE + SRC.encode("utf-16-le"),
        codecs.BOM_UTF16_BE + SRC.encode("utf-16-be"),
        SRC.replace("\n", "\r\n").encode(),
        SRC.replace("\n", "\r").encode(),
    ):
        r = run_chunk("m.py", data)
        assert _shape(r) == _shape(base)
        assert not r.diagnostics


def test_undecodable_bytes_are_replaced_with_a_diagnostic() -> None:
    r = run_chunk("m.py", b"def f():\n    return '\xff\xfe broken'\n")
    assert any(d.code == "CORA-CHK-007" for d in r.diagnostics)
    assert "\ufffd" in r.chunks[-1].text


def test_binary_files_are_skipped() -> None:
    r = run_chunk("img.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    assert r.strategy is None and r.chunks == []
    assert [d.code for d in r.diagnostics] == ["CORA-CHK-003"]
    r = run_chunk("blob.dat", bytes([1, 2, 3, 4, 5, 6, 7, 8]) * 200)
    assert r.strategy is None


def test_a_document_with_a_text_head_and_binary_streams_is_binary() -> None:
    """An Illustrator `.ai` (a PDF) opens with ~20 KB of XMP text and goes on in compressed
    streams: it was chunked as text with 50,605 bytes replaced. FITS files (80-column text cards,
    then data) the same. A text file with a stray NUL stays text."""
    xmp = b"".join(b'<rdf:li xmpTPg:N="%d">Cyan Magenta Yellow Black</rdf:li>\n' % i for i in range(400))
    stream = bytes((i * 7919) % 256 for i in range(40_000))  # what deflate leaves: every byte value
    for head in (b"%PDF-1.6\n%\xe2\xe3\xcf\xd3\n", b"<?xpacket begin='' id='W5M0MpCehiHzreSzNTczkc9d'?>\n"):
        r = run_chunk("media/logo.ai", head + xmp + b"stream\n" + stream + b"\nendstream\n")
        assert r.chunks == [] and [d.code for d in r.diagnostics] == ["CORA-CHK-003"]
    card = b"SIMPLE  =                    T / conforms to FITS standard".ljust(80)
    r = run_chunk("data/test0.fits", card * 200 + bytes(2880) + stream)
    assert r.chunks == [] and [d.code for d in r.diagnostics] == ["CORA-CHK-003"]
    text = b"x = 1\n" * 3000 + b'NUL = "\x00"\n' + b"y = 2\n" * 10
    r = run_chunk("m.py", text)
    assert r.strategy == "structural" and "CORA-CHK-003" not in {d.code for d in r.diagnostics}


def test_a_parse_past_its_time_budget_is_stopped_and_the_file_cut_into_lines(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """tree-sitter-cpp's error recovery is quadratic on `FOO_BAR` lines that each open a `/*`
    (700 KB took 343 s): the parse stops at its budget (made tiny here), the file is cut into lines
    with CORA-CHK-015 and has no references, and the build goes on."""
    monkeypatch.setattr(outline_mod, "_BUDGET_S", 0.05)
    monkeypatch.setattr(outline_mod, "_BUDGET_S_PER_MB", 0.0)
    hostile = "FOO_BAR\n/* " * 6000 + "\n"
    r = run_chunk("src/hostile.cc", hostile)
    assert r.strategy == "lines" and [d.code for d in r.diagnostics] == ["CORA-CHK-015"]
    assert uncovered(r, hostile.encode()) == []
    repo = init_repo(
        tmp_path / "repo", {"src/hostile.cc": hostile, "src/ok.cc": "int add(int a) { return a; }\n"}
    )
    build(repo, model="none")
    b = open_bundle(repo / ".cora" / "index")
    strategies = dict(zip(b.manifest["files"]["path"], b.manifest["files"]["strategy"], strict=True))
    assert strategies == {"src/hostile.cc": "lines", "src/ok.cc": "structural"}
    assert locate("cpp", hostile.encode(), "FOO_BAR", "FOO_BAR") is None  # its full parse stops too
    assert nested._parse("src/hostile.cc", "cpp", hostile.split("\n"), None) == {}  # and `show`'s


def test_a_parse_holds_no_copies_of_the_source() -> None:
    """tree-sitter-perl's scanner reads the source again at nearly every token, and the binding
    keeps whatever a read returns: as slices of 64 KB, curl's 114 KB `runtests.pl` held 690 MB. The
    parse reads each block once and reads back in pieces of 256 bytes (`outline._reader`), the same
    tree."""
    src = b"sub f { my $x = shift; return $x + 1; }\n" * 300
    outline_mod.parser_for("perl").parse(b"1;")  # the grammar loaded before the count
    tracemalloc.start()
    try:
        tree = outline_mod.parse("perl", src)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 500 * len(src), peak  # 64 KB slices: ~2,600 times the source; now ~220
    assert str(tree.root_node) == str(outline_mod.parser_for("perl").parse(src).root_node)
    assert tree.root_node.child(0).text == src[: src.index(b"\n")]  # the binding reads it through too


def test_mostly_broken_source_falls_back_to_lines() -> None:
    junk = "def (((( ]]]] :::: class {{{{ \n" * 40
    r = run_chunk("broken.py", junk)
    assert r.strategy == "lines"
    assert any(d.code == "CORA-CHK-001" for d in r.diagnostics)
    assert uncovered(r, junk.encode()) == []


def test_partly_broken_source_keeps_structure_with_a_diagnostic() -> None:
    src = SRC + "\ndef broken(:\n    pass\n"
    r = run_chunk("m.py", src)
    assert r.strategy == "structural"
    assert any(d.code == "CORA-CHK-002" for d in r.diagnostics)
    assert uncovered(r, src.encode()) == []


def test_oversized_minified_and_generated_files_are_handled_by_rule() -> None:
    r = run_chunk("big.py", b"x = 1\n" * 1000, max_file_bytes=1000)
    assert r.strategy is None and r.diagnostics[0].code == "CORA-CHK-004"
    minified = ("function a(b){return b+1}var c=" + ",".join(str(i) for i in range(3000)) + ";\n").encode()
    r = run_chunk("app.min.js", minified, max_tokens=300)
    codes = {d.code for d in r.diagnostics}
    assert r.strategy == "lines" and {"CORA-CHK-005", "CORA-CHK-006"} <= codes
    assert uncovered(r, minified) == []
    gen = "// Code generated by protoc. DO NOT EDIT.\npackage pb\n\nfunc A() int { return 1 }\n"
    r = run_chunk("a.pb.go", gen)
    assert r.strategy == "structural" and any(d.code == "CORA-CHK-006" for d in r.diagnostics)
    dart = "// GENERATED CODE - DO NOT MODIFY BY HAND\n\npart of 'user.dart';\n\nUser _$UserFromJson(Map j) => User();\n"
    assert any(d.code == "CORA-CHK-006" for d in run_chunk("lib/user.g.dart", dart).diagnostics)
    for lock in ("mix.lock", "app/pubspec.lock", "uv.lock"):  # indexed only with `lock_files = true`
        assert any(d.code == "CORA-CHK-006" for d in run_chunk(lock, '%{"a": 1}\n').diagnostics), lock
    said = "# Helpers that read generated code and its sources.\n\ndef read(path):\n    return open(path).read()\n"
    assert not any(d.code == "CORA-CHK-006" for d in run_chunk("tools/read.py", said).diagnostics)


@pytest.mark.parametrize(
    ("head", "generated"),
    [
        ("# Generated by Django 4.2 on 2023-04-01 10:00", True),
        ("# generated by scripts/generate_identifier_pattern.py", True),
        ("/* Automatically generated from schema.json */", True),
        ("# This file was generated by the build. Edit gen.py instead.", True),
        ("# Auto generated by make_terminal_widths.py", True),
        ("# @generated", True),
        ("# Do not edit this file by hand: run gen.py", True),
        ("# Generated by the protocol buffer compiler.  DO NOT EDIT!", True),
        ('  "about": "Questions written by hand. Add questions, do not edit these.",', False),
        ('"""AST nodes generated by the parser for the compiler. Also provides', False),
        ("# Helpers for tokens generated by the lexer.", False),
        ("// Values generated by a call are cached here.", False),
        ("// <auto-generated>", True),  # C#'s tag
        ("# Autogenerated by Thrift Compiler (0.9.3)", True),
        ("# This file is auto-generated; edit schema.yml instead.", True),
        ("# AUTO-GENERATED FILE, CHANGES WILL BE LOST", True),
        ("// This may be replaced with something auto-generated from metadata in the future.", False),
    ],
)
def test_a_file_is_generated_by_what_its_head_says_not_by_a_sentence(head: str, generated: bool) -> None:
    """A head that says the file was generated flags it (CORA-CHK-006); "generated by" in a
    sentence about the code does not: a flag invites the user to exclude the file."""
    src = f"{head}\n\n\ndef parse(tokens):\n    return list(tokens)\n"
    codes = [d.code for d in run_chunk("pkg/nodes.py", src).diagnostics]
    assert ("CORA-CHK-006" in codes) is generated


def test_deeply_nested_code_does_not_hit_the_recursion_limit() -> None:
    depth = 5000
    src = "x = " + "[" * depth + "1" + "]" * depth + "\n"
    r = run_chunk("deep.py", src)
    assert uncovered(r, src.encode()) == []
    js = "const f = () => " + "(() => " * 2000 + "1" + ")" * 2000 + ";\n"
    r = run_chunk("deep.js", js)
    assert uncovered(r, js.encode()) == []
    nested_classes = "".join("    " * i + f"class C{i}:\n" for i in range(90)) + "    " * 90 + "pass\n"
    r = run_chunk("n.py", nested_classes, min_tokens=0)
    assert uncovered(r, nested_classes.encode()) == []


def test_empty_and_blank_files() -> None:
    assert run_chunk("e.py", b"").chunks == []
    assert run_chunk("b.py", b"\n\n   \n").chunks == []
