"""A chunk's references stored as places among its text's words (format 12.0): they come back as
the names the linker found, the stored form is small integers, and places that do not fit the text
are a damaged bundle. Real builds of real git repositories."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cora_ci.build import build
from cora_ci.bundle import blobs, open_bundle, ref_words
from cora_ci.bundle import manifest as mf
from cora_ci.errors import CoraError
from cora_ci.graph.build import file_links
from cora_ci.graph.extract import FileRefs

_NAME = st.text(st.sampled_from("abcXY_é1?!-"), min_size=1, max_size=6)


@given(st.lists(_NAME, max_size=30), st.lists(_NAME, max_size=12))
def test_decode_gives_back_the_sorted_names_whatever_the_text(words: list[str], names: list[str]) -> None:
    text = " ".join(words) + "\n" + "(".join(words[::2])
    stored = ref_words.encode(sorted(set(names)), text)
    assert ref_words.decode(stored, text) == sorted(set(names))
    places = [v for v in stored if isinstance(v, int)]
    assert all(v > 0 for v in places) and stored == places + [v for v in stored if isinstance(v, str)]
    # a name that is one of the text's words is never stored as its string
    words_of = set(re.findall(r"\w+", text))
    assert not any(isinstance(v, str) and v in words_of for v in stored)


@given(st.text(st.characters(max_codepoint=0x1FF), max_size=60))
def test_a_texts_words_are_those_of_the_pattern_in_the_order_they_first_occur(text: str) -> None:
    assert ref_words.words_of(text) == list(dict.fromkeys(re.findall(r"\w+", text)))


def test_places_beyond_the_text_are_refused() -> None:
    assert ref_words.decode([1, 1], "b a") == ["a", "b"]
    for bad in ([3], [1, 0], [-1], [True]):
        with pytest.raises(ValueError):
            ref_words.decode(bad, "a b")


SOURCE = {
    "src/shapes.py": "class Circle:\n    def area(self):\n        return 3.14 * self.r ** 2\n\n\n"
    "def describe(shape):\n    return shape.area()\n",
    "src/use.py": "from shapes import Circle, describe\n\n\ndef report():\n    c = Circle()\n"
    "    return describe(c)\n\n\ndef total():\n    return report() + report()\n",
    "lib/tidy.rb": "class Box\n  def empty?\n    true\n  end\n\n  def check\n    empty?\n  end\nend\n",
}


def _rows(repo: Path) -> dict[str, dict[str, object]]:
    b = open_bundle(repo / ".cora" / "index")
    paths = b.shards.top_column("path")
    return {p: b.shards.row(fi) for fi, p in enumerate(paths)}


def test_a_bundle_stores_places_and_reads_back_the_linkers_names(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    repo = make_repo(SOURCE)
    build(repo, model="none")
    for path, row in _rows(repo).items():
        data = msgpack.unpackb(blobs.decompress(row["data"]), raw=False, strict_map_key=False)  # type: ignore[arg-type]
        stored = data["links"][1]
        texts = mf.chunk_texts(row["texts"])  # type: ignore[arg-type]
        links = mf.links_of_row(row)
        ids = mf.ids_of(row["ids"]).tolist()  # type: ignore[arg-type]
        assert {cid: names for cid, names in links.refs.items()} == {
            ids[i]: ref_words.decode(s, texts[i]) for i, s in enumerate(stored) if s
        }
        if path == "src/use.py":
            used = {n for names in links.refs.values() for n in names}
            assert {"Circle", "describe"} <= used
            assert all(type(v) is int for s in stored for v in s)  # every name is a word of its code


def test_a_name_that_is_no_word_is_kept_as_its_string() -> None:
    from cora_ci.chunking.chunker import chunk_file
    from cora_ci.config import Config

    text = SOURCE["lib/tidy.rb"]
    chunks = chunk_file("lib/tidy.rb", text.encode(), Config()).chunks
    refs = FileRefs([], {c.id: ["empty?", "true"] for c in chunks if "empty?\n    true" not in c.text})
    links = file_links(chunks, refs)
    for c in chunks:
        names = links.refs.get(c.id, [])
        stored = ref_words.encode(names, c.text)
        assert ref_words.decode(stored, c.text) == names
        if names:
            assert "empty?" in stored and "true" not in stored


def test_places_that_do_not_fit_the_text_are_a_damaged_bundle(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    repo = make_repo(SOURCE)
    build(repo, model="none")
    row = _rows(repo)["src/use.py"]
    data = msgpack.unpackb(blobs.decompress(row["data"]), raw=False, strict_map_key=False)  # type: ignore[arg-type]
    data["links"][1] = [[999] if s else s for s in data["links"][1]]
    links = mf.links_of_row({**row, "data": blobs.compress(msgpack.packb(data, use_bin_type=True))})
    assert links.defs  # what needs no text is read as before
    with pytest.raises(CoraError) as e:
        dict(links.refs)
    assert e.value.code == "CORA-BND-004" and "src/use.py" in e.value.message
