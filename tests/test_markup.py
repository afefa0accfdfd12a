"""Markup: Markdown sections with their heading path; YAML, JSON and TOML by top-level keys."""

from __future__ import annotations

from conftest import by_anchor, run_chunk, uncovered

MD = """
# Project

Intro paragraph.

## Install

Run the installer.

```sh
# not a heading
pip install project
```

### From source

Clone and build.

## Usage

Call it.
"""


def test_markdown_sections_keep_their_heading_path() -> None:
    r = run_chunk("README.md", MD, min_tokens=0)
    assert r.strategy == "markup"
    chunks = by_anchor(r)
    src = chunks["README.md::Project/Install/From source"]
    assert src.kind == "section"
    assert src.hierarchy == ["section:Project", "section:Install", "section:From source"]
    install = chunks["README.md::Project/Install"]
    assert "# not a heading" in install.text and "Clone and build." not in install.text
    assert src.parent == install.id and install.parent == chunks["README.md::Project"].id
    assert uncovered(r, MD.lstrip("\n").encode()) == []


RST = """\
Preface, before any title.

======
Models
======

A model is the source of information about your data.

Quick example
=============

.. code-block:: python

    class Person(models.Model):
        first_name = models.CharField(max_length=30)

Field options
-------------

Each field takes arguments.

Fields
======

More text.
"""


def test_a_headings_images_links_and_tags_are_its_text_in_the_anchor() -> None:
    """rack's README sections were anchored `README.md::![Rack](contrib/logo.webp)/Configuration`."""
    src = "# ![Rack](contrib/logo.webp)\n\nIntro.\n\n## Using [Puma](https://puma.io) <sup>1</sup>\n\nText.\n"
    anchors = set(by_anchor(run_chunk("README.md", src, min_tokens=0)))
    assert {"README.md::Rack", "README.md::Rack/Using Puma 1"} <= anchors, anchors


def test_restructuredtext_sections_by_the_order_of_their_adornments() -> None:
    """Levels as docutils reads them: each adornment style's first appearance; a section holds
    what follows its title up to the next title of its level or above."""
    for path in ("docs/models.rst", "docs/models.txt"):  # Django keeps its reST docs in `.txt`
        r = run_chunk(path, RST, min_tokens=0)
        assert (r.lang, r.strategy) == ("rst", "markup"), path
        chunks = by_anchor(r)
        quick = chunks[f"{path}::Models/Quick example"]
        assert (quick.start_line, quick.end_line) == (9, 15) and "class Person" in quick.text
        options = chunks[f"{path}::Models/Quick example/Field options"]
        assert options.hierarchy == ["section:Models", "section:Quick example", "section:Field options"]
        assert chunks[f"{path}::Models/Fields"].parent == chunks[f"{path}::Models"].id
        assert uncovered(r, RST.encode()) == []  # the preface too
    plain = "Notes\n=====\n\nOne underlined line is no reST document.\n"
    assert run_chunk("notes.txt", plain).lang == "text"


ADOC = """= OS-Lib
:toc:

OS-Lib is a simple Scala interface to common OS filesystem APIs.

== Getting Started

[source,scala]
----
// a listing's lines are no titles
== not a title
----

=== `os.read`

Reads the contents of a file.

....
= literal, no title either
....

== Cookbook

Recipes.
"""


def test_asciidoc_sections_by_their_titles_not_inside_blocks() -> None:
    """An os-lib trial: its 2,895-line Readme.adoc was read as reStructuredText, its sections the
    `[source,scala]` lines above its listings, one of them 1,728 lines; AsciiDoc's titles are
    its sections (no grammar of the pack reads it), none inside a delimited block."""
    r = run_chunk("Readme.adoc", ADOC, min_tokens=0)
    assert (r.lang, r.strategy) == ("asciidoc", "markup")
    chunks = by_anchor(r)
    read = chunks["Readme.adoc::OS-Lib/Getting Started/`os.read`"]
    assert (read.start_line, read.end_line) == (14, 20) and "literal, no title" in read.text
    started = chunks["Readme.adoc::OS-Lib/Getting Started"]
    assert started.start_line == 6 and started.hierarchy == ["section:OS-Lib", "section:Getting Started"]
    assert (
        chunks["Readme.adoc::OS-Lib/Cookbook"].start_line,
        chunks["Readme.adoc::OS-Lib/Cookbook"].end_line,
    ) == (22, 24)
    assert not [a for a in chunks if "not a title" in a or "literal" in a]
    assert uncovered(r, ADOC.encode()) == []
    assert run_chunk("build.mill", "object os extends Module {\n  def x = 1\n}\n").lang == "scala"


def test_yaml_json_toml_by_top_level_keys() -> None:
    yaml = "# CI settings\nname: build\non:\n  push:\n    branches: [main]\n---\nother: 1\n"
    r = run_chunk("ci.yml", yaml, min_tokens=0)
    assert [c.symbol for c in r.chunks] == ["name", "on", "other"]
    assert r.chunks[0].text.startswith("# CI settings")  # the comment goes with its key
    assert all(c.kind == "key" for c in r.chunks)
    assert uncovered(r, yaml.encode()) == []

    js = '{\n  "name": "pkg",\n  "scripts": {\n    "test": "jest"\n  }\n}\n'
    r = run_chunk("package.json", js, min_tokens=0)
    assert [c.symbol for c in r.chunks] == ["name", "scripts"]
    assert uncovered(r, js.encode()) == []

    toml = 'title = "x"\n\n[tool.cora-ci]\nmax_tokens = 500\n\n[[bin]]\nname = "a"\n\n[[bin]]\nname = "b"\n'
    r = run_chunk("Cargo.toml", toml, min_tokens=0)
    assert [c.symbol for c in r.chunks] == ["title", "tool.cora-ci", "bin", "bin"]
    assert len({c.anchor for c in r.chunks}) == 4  # repeated tables get distinct anchors
    assert uncovered(r, toml.encode()) == []


def test_keys_that_share_a_line_are_not_chunks_of_their_own() -> None:
    """A compact document would repeat its one line in every key's chunk: chunked by lines."""
    js = '{"version": 3, "name": "pkg", "files": ["a.js", "b.js"], "scripts": {"test": "jest"}}\n'
    r = run_chunk("package.json", js, min_tokens=0)
    assert [(c.kind, c.start_line, c.end_line) for c in r.chunks] == [("lines", 1, 1)]
    assert uncovered(r, js.encode()) == []
    half = '{"a": 1, "b": 2,\n "c": {\n   "d": 3\n }\n}\n'  # two keys on the first line
    assert [c.kind for c in run_chunk("x.json", half, min_tokens=0).chunks] == ["lines"]
    spread = '{"a": 1,\n "b": {"c": 2, "d": 3}}\n'  # one key a line: keys still
    assert [c.symbol for c in run_chunk("x.json", spread, min_tokens=0).chunks] == ["a", "b"]
    toml = "a = 1\nb = { c = 2, d = 3 }\n"
    assert [c.symbol for c in run_chunk("x.toml", toml, min_tokens=0).chunks] == ["a", "b"]


def test_plain_text_is_chunked_by_lines_with_overlap() -> None:
    text = "".join(f"line number {i} of the notes\n" for i in range(1, 131))
    r = run_chunk("notes.txt", text, lines_per_chunk=50, overlap_lines=5)
    assert r.strategy == "lines"
    assert [(c.start_line, c.end_line) for c in r.chunks] == [(1, 50), (46, 95), (91, 130)]
    assert all(c.kind == "lines" for c in r.chunks)
