"""Round trips through a bundle, over generated repositories: what goes in comes out, deterministically."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_properties import MD_BLOCKS, PY_BLOCKS, TS_BLOCKS

from cora_ci.build import build
from cora_ci.bundle import manifest as mf
from cora_ci.bundle import open_bundle
from cora_ci.chunking import chunk_file
from cora_ci.config import Config

_NAMES = st.sampled_from(["a.py", "pkg/b.py", "c.ts", "docs/d.md", "e.txt", "f.yaml", "deep/er/g.py"])
_CONTENT = {
    ".py": st.lists(st.sampled_from(PY_BLOCKS), max_size=8).map("".join),
    ".ts": st.lists(st.sampled_from(TS_BLOCKS), max_size=8).map("".join),
    ".md": st.lists(st.sampled_from(MD_BLOCKS), max_size=8).map("".join),
    ".txt": st.text(st.characters(codec="utf-8"), max_size=300),
    ".yaml": st.sampled_from(["a: 1\nb:\n  c: 2\n", "- x\n- y\n", "k: [1, 2\n", ""]),
}


@st.composite
def repos(draw: st.DrawFn) -> dict[str, str]:
    names = draw(st.sets(_NAMES, min_size=1, max_size=5))
    return {n: draw(_CONTENT["." + n.rsplit(".", 1)[1]]) for n in sorted(names)}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(repos())
def test_every_chunk_round_trips_and_is_findable(files: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        for name, text in files.items():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_text(text, encoding="utf-8")
        build(src, Path(tmp) / "a", model="none")
        build(src, Path(tmp) / "b", model="none")
        a, b = (Path(tmp) / "a" / mf.MANIFEST).read_bytes(), (Path(tmp) / "b" / mf.MANIFEST).read_bytes()
        assert a == b
        bundle = open_bundle(Path(tmp) / "a")
        expected = {}
        for name in files:
            for c in chunk_file(name, (src / name).read_bytes(), Config()).chunks:
                expected[c.id] = c.to_dict()
        got = {bundle.chunks.ids[r]: bundle.chunks.chunk(r).to_dict() for r in range(len(bundle.chunks))}
        assert got == expected
        assert bundle.lexical.num_docs == len(expected)
        for cid, c in expected.items():
            words = [w for w in c["text"].split() if w.isidentifier()]
            if words:
                hits = {h for h, _ in bundle.lexical.search(words[0], len(expected))}
                assert cid in hits


@given(st.lists(st.text(max_size=50), max_size=20))
def test_text_blobs_round_trip(texts: list[str]) -> None:
    assert mf.unpack_blob(mf.pack_blob(texts)) == texts


_WORDS = st.sampled_from(
    ["parseHeaderLinks", "parse_header_links", "HTTPServer", "x2y", "getURL", "naïveCafé", "Σίσυφος", "_private",
     "__init__", "links", "header", "value", "v2", "ÆRØ", "snake_case_NAME", "a", "URL", "İstanbul", "straße"]
)  # fmt: skip
# Characters unassigned in Python's Unicode tables are left out: tantivy's tables may be newer.
_CHARS = st.characters(exclude_categories=["Cn", "Cs"])
_TEXTS = st.lists(st.one_of(_WORDS, st.text(_CHARS, max_size=12)), max_size=30).map(" ".join)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(_TEXTS, _TEXTS), min_size=1, max_size=12), st.sampled_from([2, 4, 8]))
def test_bm25_buckets_score_exactly_like_one_index_of_the_python_terms(
    docs: list[tuple[str, str]], buckets: int
) -> None:
    """Spreading documents over bucket segments changes no score (statistics sum over segments),
    and the terms given to tantivy are what its word tokenizer made of each text and its compound
    words' parts, as bundles were indexed before: the same scores, so both read alike."""
    import tantivy

    from cora_ci.bundle.lexical import FIELDS, LexicalDoc, write_index
    from cora_ci.bundle.lexical_reader import LexicalIndex
    from cora_ci.bundle.terms import _PART, _WORD, _words, terms

    def before(text: str) -> str:  # the text, then the parts of its compound words, as written
        parts = [p for w in _WORD.findall(text) for sub in _words(w) for p in _PART.findall(sub)
                 if len(_PART.findall(sub)) > 1]  # fmt: skip
        return f"{text}\n{' '.join(parts)}"

    lex = [LexicalDoc(i + 1, name, f"src/f{i}.py", body) for i, (name, body) in enumerate(docs)]
    with tempfile.TemporaryDirectory() as tmp:
        one, many, ref = Path(tmp) / "one", Path(tmp) / "many", Path(tmp) / "ref"
        write_index(one, {0: len(lex)}, lambda b: lex, 1)
        parts = {b: [d for d in lex if d.id % buckets == b] for b in range(buckets)}
        write_index(many, {b: len(ds) for b, ds in parts.items()}, parts.__getitem__, buckets)
        sb = tantivy.SchemaBuilder()  # the reference: tantivy's own word tokenizer and lower case
        for f in FIELDS:
            sb.add_text_field(f, stored=False, tokenizer_name="words", index_option="freq")
        ref.mkdir()
        index = tantivy.Index(sb.build(), path=str(ref))
        words = tantivy.Tokenizer.regex(r"[\p{L}\p{N}_]+")
        index.register_tokenizer(
            "words", tantivy.TextAnalyzerBuilder(words).filter(tantivy.Filter.lowercase()).build()
        )
        writer = index.writer(heap_size=15_000_000, num_threads=1)
        for d in lex:
            doc = tantivy.Document()
            for f, text in (("name", d.name), ("path", d.path), ("body", d.body)):
                doc.add_text(f, before(text))
            writer.add_document(doc)
        writer.commit()
        writer.wait_merging_threads()
        del writer, index
        in_buckets = [[d.id for d in lex if d.id % buckets == b] for b in range(buckets)]
        in_order = [d.id for d in lex]
        a, c = LexicalIndex(one, [in_order].__getitem__), LexicalIndex(ref, [in_order].__getitem__)
        b = LexicalIndex(many, [ids for ids in in_buckets if ids].__getitem__)
        queries = {t for name, body in docs for t in terms(name + " " + body)}
        for q in sorted(queries)[:25]:
            want = [(i, round(s, 4)) for i, s in c.search(q, 50)]
            assert [(i, round(s, 4)) for i, s in a.search(q, 50)] == want, q
            assert [(i, round(s, 4)) for i, s in b.search(q, 50)] == want, q


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_WORDS, st.text(max_size=12), st.sampled_from(["—", "é_x", "\x00", "\ud800", "__"])),
                max_size=30).map(" ".join))  # fmt: skip
def test_field_text_is_the_terms_joined_by_spaces(text: str) -> None:
    """What tantivy is handed (cut on the text's bytes, terms looked up a run at a time) is the
    terms a query is split into, in order, whatever the characters."""
    from cora_ci.bundle.terms import field_text, terms

    assert field_text(text) == " ".join(terms(text))
    assert field_text(text) == " ".join(terms(text))  # again, from the cache
