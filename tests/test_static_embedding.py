"""The static embedding tier: its tokeniser, its vectors, the bundled table and bundles built with it."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from conftest import dedent_files, init_repo
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cora_ci.build import build
from cora_ci.bundle import open_bundle
from cora_ci.embedding import load_embedder, loading
from cora_ci.embedding.static import StaticEmbedder, parse_table, wordpiece, words
from cora_ci.errors import CoraError

CORA = str(Path(sys.executable).with_name("cora-ci"))
STATIC = Path(str(resources.files("cora_ci.embedding.minilm_static")))
FILES = {
    "src/links.py": '''\
        def parse_header_links(value: str) -> list[str]:
            """Split a Link header into its URLs."""
            return [part.strip("<> ") for part in value.split(",")]
        ''',
    "src/store.py": '''\
        class SessionStore:
            """Keeps user sessions in memory until they expire."""

            def expire_old_sessions(self, now: float) -> int:
                return 0
        ''',
    "web/retry.ts": """\
        export function retryWithBackoff(attempts: number): number {
          return attempts * 2;
        }
        """,
    "conf/empty.json": "{}\n",  # no word to embed
    "conf/empty.yaml": "---\n",
}


def cora(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cwd / "cache"), "NO_COLOR": "1"}
    return subprocess.run([CORA, *args], cwd=cwd, capture_output=True, text=True, env=env, check=False)


@pytest.fixture(scope="module")
def emb() -> StaticEmbedder:
    e = load_embedder("static")
    assert isinstance(e, StaticEmbedder)
    return e


def test_words_split_identifiers_at_case_and_underscores() -> None:
    assert words("parseHTTPResponse") == ["parse", "http", "response"]
    assert words("expire_old_sessions(now=1.5)") == ["expire", "old", "sessions", "now", "1", "5"]
    assert words("XMLHttpRequest utf8 __init__") == ["xml", "http", "request", "utf", "8", "init"]
    assert words("grüße Straße naïveCafé") == ["gruße", "straße", "naive", "cafe"]


def test_wordpiece_is_greedy_longest_match() -> None:
    vocab = {"un": 0, "##aff": 1, "##able": 2, "unaff": 3, "x": 4}
    assert wordpiece("unaffable", vocab) == [3, 2]
    assert wordpiece("x", vocab) == [4]
    assert wordpiece("unq", vocab) == []  # an unknown piece makes the whole word unknown, as in BERT


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(codec="utf-8"), max_size=80) | st.from_regex(r"[A-Za-z_0-9 .()ßéİ]{0,60}"))
@example("parseHTTPResponse grüße naïveCafé x" + "y" * 60 + " İstanbul __init__")
@example("a\x00b \x00 c\ud800d caf\u00e9_Na\u00efve \u2014x\u2014 __ 12\u201319")
def test_ids_are_the_wordpieces_of_the_words(emb: StaticEmbedder, text: str) -> None:
    """The embedder's cached tokenising of byte tokens gives what `words` then `wordpiece` give."""
    vocab = emb._tokens.vocab
    assert emb.ids(text) == [i for w in words(text) for i in wordpiece(w, vocab)]


TEXTS = st.lists(st.text(st.characters(codec="utf-8") | st.sampled_from("\x00\ud800_ aZ9"), max_size=40)
                 | st.from_regex(r"[A-Za-z_0-9 .()\x00]{0,40}"), max_size=12)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(texts=TEXTS, limit=st.sampled_from([0, 3, 1 << 19]))
def test_a_batch_is_its_texts_one_by_one(emb: StaticEmbedder, texts: list[str], limit: int) -> None:
    """Texts embedded together (one token string, a separator between texts, new tokens learnt
    at once, the cache forgotten when full) get the vectors each gets alone."""

    def fresh() -> StaticEmbedder:
        return StaticEmbedder(emb.info, list(emb._tokens.vocab), emb._table, emb._scales)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("cora_ci.embedding.static._CACHE_LIMIT", limit)
        together, one = fresh().embed_documents(texts), fresh()
        alone = [one.embed_documents([t])[0] for t in texts]
    assert [row.tobytes() for row in together] == [row.tobytes() for row in alone]


def test_vectors_are_unit_length_and_depend_only_on_their_text(emb: StaticEmbedder) -> None:
    texts = ["def read_file(path): return open(path).read()", "class RetryPolicy: pass", "x = 1"]
    together = emb.embed_documents(texts)
    assert together.dtype == np.float32 and together.shape == (3, emb.info.dim)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    for i, t in enumerate(texts):
        assert emb.embed_documents([t])[0].tobytes() == together[i].tobytes()
    assert emb.embed_query(texts[1]).tobytes() == together[1].tobytes()
    marks = emb.embed_documents(["", "(){};", "---", "{}"])  # no word: the marks, else [UNK]
    assert np.allclose(np.linalg.norm(marks, axis=1), 1.0, atol=1e-5)
    assert len({row.tobytes() for row in marks}) == 4
    assert emb.embed_documents([]).shape == (0, emb.info.dim)


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.characters(codec="utf-8"), max_size=60) | st.from_regex(r"[A-Za-z_0-9 .()é]{0,60}"),
       scale=st.floats(0.01, 100))  # fmt: skip
@example("how does rich wrap long lines of text", 1.0)
def test_weighted_words_are_the_query_vector_weighed(emb: StaticEmbedder, text: str, scale: float) -> None:
    """Every word weighed alike is the unweighed vector; a word weighed 0 is as if not written;
    a text with no word weighed above 0 is embedded unweighed (never a zero vector)."""
    plain = emb.embed_query(text)
    assert np.allclose(emb.embed_weighted(text, lambda w: scale), plain, atol=1e-5)
    assert emb.embed_weighted(text, lambda w: 0.0).tobytes() == plain.tobytes()
    ws = words(text)
    kept = " ".join(w for w in ws[1:] if w != ws[0])
    if emb.ids(kept):  # another word than the first has rows
        got = emb.embed_weighted(text, lambda w: 0.0 if w == ws[0] else 1.0)
        assert np.allclose(got, emb.embed_query(kept), atol=1e-5)


def test_similar_meaning_scores_higher(emb: StaticEmbedder) -> None:
    docs = emb.embed_documents(["def read_text_file(path): return open(path).read()",
                                "def add_numbers(a, b): return a + b"])  # fmt: skip
    q = emb.embed_query("read the contents of a file")
    assert float(docs[0] @ q) > float(docs[1] @ q)
    q = emb.embed_query("sum of two numbers")
    assert float(docs[1] @ q) > float(docs[0] @ q)


def test_bundled_table_is_checked(tmp_path: Path) -> None:
    d = tmp_path / "static"
    shutil.copytree(STATIC, d)
    assert loading.load_static(d).info == loading.STATIC_INFO
    (d / "tokens.txt").write_text("tampered\n")
    with pytest.raises(CoraError) as e:
        loading.load_static(d)
    assert e.value.code == "CORA-MDL-002"


@pytest.mark.usefixtures("private_cache")
def test_a_verified_table_is_mapped_and_a_changed_one_hashed_again(tmp_path: Path) -> None:
    d = tmp_path / "static"
    shutil.copytree(STATIC, d)
    texts = ["def parse_header(value): return value.split(';')", "how are sessions retried"]
    first = loading.load_static(d)  # hashed, then recorded
    again = loading.load_static(d)  # the record holds: the table is mapped, not read
    assert isinstance(first._table, np.ndarray) and not isinstance(first._table, np.memmap)
    assert isinstance(again._table.base, np.memmap)
    assert again.embed_documents(texts).tobytes() == first.embed_documents(texts).tobytes()
    data = bytearray((d / "vectors.npy").read_bytes())
    data[-1] ^= 1  # one weight, same size and inode: the new mtime voids the record
    st = (d / "vectors.npy").stat()
    (d / "vectors.npy").write_bytes(bytes(data))
    os.utime(d / "vectors.npy", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # coarse clocks too
    with pytest.raises(CoraError) as e:
        loading.load_static(d)
    assert e.value.code == "CORA-MDL-002" and "vectors.npy" in e.value.message


def test_bundled_table_checksums_and_size() -> None:
    vectors, scales = (STATIC / "vectors.npy").read_bytes(), (STATIC / "scales.npy").read_bytes()
    assert hashlib.sha256(vectors).hexdigest() == loading.STATIC_VECTORS_SHA256
    assert loading._static_sha256(vectors, scales) == loading.STATIC_INFO.model_sha256
    assert sum(p.stat().st_size for p in STATIC.iterdir()) < 16 * 2**20  # the wheel's budget is 32 MB
    names, table = parse_table((STATIC / "tokens.txt").read_bytes(), vectors, scales)
    assert table.shape == (len(names), loading.STATIC_DIM)


def test_a_static_directory_is_a_model(tmp_path: Path) -> None:
    d = tmp_path / "mine"
    d.mkdir()
    (d / "tokens.txt").write_text("read\nfile\n##s\n")
    np.save(d / "vectors.npy", np.eye(3, dtype=np.float16))
    e = load_embedder(str(d))
    assert isinstance(e, StaticEmbedder) and e.info.dim == 3 and e.info.name == "mine"
    assert e.embed_query("files").tolist() == pytest.approx([0, 2**-0.5, 2**-0.5])
    np.save(d / "vectors.npy", np.eye(2, dtype=np.float32))
    with pytest.raises(CoraError) as err:
        load_embedder(str(d))
    assert err.value.code == "CORA-MDL-001"


@pytest.mark.usefixtures("private_cache")
def test_static_bundle_builds_queries_and_is_deterministic(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", dedent_files(FILES))
    s = build(repo, tmp_path / "a", model="static")
    build(repo, tmp_path / "b", model="static")
    assert s.model == loading.STATIC_NAME and s.embedded == s.chunks
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    b = open_bundle(tmp_path / "a")
    assert b.model == dataclasses.asdict(loading.STATIC_INFO) and b.vectors is not None
    bundle = str(tmp_path / "a")
    out = cora("query", "split a link header into urls", "--bundle", bundle, "-k", "1", cwd=repo)
    assert out.returncode == 0 and "parse_header_links" in out.stdout, out.stderr
    out = cora("query", "retry", "--bundle", bundle, "--model", "minilm", cwd=repo)
    assert out.returncode != 0 and "CORA-BND-005" in out.stderr and "leave out --model" in out.stderr
    out = cora("query", "retry with backoff", "--bundle", bundle, "--model", "static", "-k", "1", cwd=repo)
    assert out.returncode == 0 and "retryWithBackoff" in out.stdout, out.stderr
    out = cora("verify", bundle, cwd=repo)  # the chunks of {} and --- have vectors too
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.usefixtures("private_cache")
def test_cli_index_takes_model_static(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", dedent_files(FILES))
    out = cora("index", "--model", "static", "-q", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert open_bundle(repo / ".cora" / "index").model["name"] == loading.STATIC_NAME  # type: ignore[index]


@settings(max_examples=30, deadline=None)
@given(words=st.lists(st.sampled_from(["parse", "header", "render", "view", "login", "user", "x"]),
                      min_size=1, max_size=40), eager=st.integers(1, 7), step=st.integers(1, 5))  # fmt: skip
def test_a_build_embeds_each_text_once_whenever_it_runs_the_model(
    emb: StaticEmbedder, words: list[str], eager: int, step: int
) -> None:
    """A first build embeds texts as files come (`eager` at a time, `step` a model call) and
    keeps their codes in blocks: every key's codes are its own text's, a repeated text is
    embedded once, and the texts not yet embedded are when the codes are asked for."""
    import hashlib

    from cora_ci.build import vectors
    from cora_ci.bundle.vectors import planes, quantise

    texts = [f"def {w}_{i % 5}(): return {w}" for i, w in enumerate(words)]
    keys = [hashlib.sha256(t.encode()).digest()[:16] for t in texts]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(vectors, "_EAGER", eager)
        mp.setattr(vectors, "_EMBED_STEP", step)
        got = vectors.Texts(emb, eager=True)
        for k, t in zip(keys, texts, strict=True):
            got.add(k, t)
        codes = got.codes(np.frombuffer(b"".join(keys[::-1]), dtype=vectors._KEY), lambda *_: None)
    assert np.array_equal(codes.rows, planes(quantise(emb.embed_documents(texts[::-1]))).rows)
    assert got.embedded == len(set(texts))
