"""Finding, checking and configuring embedding models; nothing is ever downloaded.

Two models ship inside the package, each verified against checksums compiled into this module
before first use: `minilm/` (the transformer, run by onnxruntime, an optional extra) and
`minilm_static/` (the default: a token-vector table distilled from it and trained on code, run in
numpy). A custom model is a directory: `model.onnx`,
`tokenizer.json` and optionally `cora-model.json` (sentence-transformers' own files fill in what
that file omits), or a static table in the layout of `minilm_static/`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cora_ci import verified
from cora_ci.embedding.info import BUNDLED, POOLINGS, ModelInfo
from cora_ci.errors import CoraError

if TYPE_CHECKING:
    from cora_ci.embedding.runtime import Embedder
    from cora_ci.embedding.static import StaticEmbedder

MINILM_NAME = "all-MiniLM-L6-v2-int8"
MINILM_SHA256 = "31d11148b3c61babc62a37992de904bf4d59d90e1f9122fb4ce42c5a7cfcacfc"
MINILM_VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
MINILM_DIM = 384
MINILM_MAX_LENGTH = 256  # the model was tuned at 128 but its positions reach 512; 256 is the build's choice
MINILM_INFO = ModelInfo(MINILM_NAME, MINILM_DIM, MINILM_SHA256, MINILM_VOCAB_SHA256,
                        MINILM_MAX_LENGTH, "mean", "", "")  # fmt: skip
STATIC_NAME = "all-MiniLM-L6-v2-static"
STATIC_VECTORS_SHA256 = "64a955827bfb393960406b15e59594f19fbf623a205ae5b35c19161fc5b0e5bb"
STATIC_SCALES_SHA256 = "b71a249231ef21958de1e06e5ef047fcaa8447017592eacbb6a597946ac8f05f"
STATIC_TOKENS_SHA256 = "2154fe433507696463956bfdd3e6f74a8413e13f3f73e0e10d1b0565b958628d"
STATIC_DIM = 256
# model_sha256 pins the table: vectors and scales hashed together (`_static_sha256`).
STATIC_INFO = ModelInfo(
    STATIC_NAME,
    STATIC_DIM,
    "7fd66733c865f8dc8c3c20ffb615847ebfabc71a97d114811389d24494bad766",
    STATIC_TOKENS_SHA256,
    0,
    "mean",
    "",
    "",
)
SETTINGS_FILE = "cora-model.json"
_SETTING_TYPES: dict[str, type] = {
    "name": str,
    "pooling": str,
    "normalize": bool,
    "max_length": int,
    "query_prefix": str,
    "document_prefix": str,
    "dim": int,
}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise CoraError("CORA-MDL-001", f"{path.name} not found in {path.parent}") from None
    except OSError as e:
        raise CoraError("CORA-MDL-001", f"cannot read {path}: {e.strerror}") from None


def verify_sha256(path: Path, expected: str) -> bytes:
    """The file's bytes, if their sha256 is `expected`; CORA-MDL-002 otherwise."""
    data = checked(path, expected)
    return data if isinstance(data, bytes) else _read(path)


def checked(path: Path, expected: str) -> bytes | Path:
    """`path` once its sha256 is `expected` (CORA-MDL-002 otherwise): its bytes when they had to be
    read to be hashed, else the path itself, so that a large file can be mapped, not read.

    A hook loads the model on every commit, so a file already verified with the same size, mtime
    and inode (recorded outside the package, like verified bundles) is neither hashed nor read
    again here.
    """
    records = verified.record_file("models")
    try:
        record = [*verified.identity(path), expected]
    except OSError:
        record = []
    if record and verified.load(records).get(str(path)) == record:
        return path
    data = _read(path)
    actual = _sha256(data)
    if actual != expected:
        raise CoraError("CORA-MDL-002", f"{path} has sha256 {actual[:12]}…, expected {expected[:12]}…")
    if record:
        verified.save(records, {**verified.load(records), str(path): record})
    return data


def load_minilm(model_dir: Path | None = None, **runtime: Any) -> Embedder:
    """The bundled int8 all-MiniLM-L6-v2, checked against its compiled-in checksums."""
    require_minilm_extra("the minilm model")
    from tokenizers import BertWordPieceTokenizer

    from cora_ci.embedding.runtime import Embedder

    if model_dir is None:
        model_dir = BUNDLED / "minilm"
    model = verify_sha256(model_dir / "model.onnx", MINILM_SHA256)
    vocab = model_dir / "vocab.txt"
    verify_sha256(vocab, MINILM_VOCAB_SHA256)
    tokenizer = partial(BertWordPieceTokenizer, str(vocab), lowercase=True)
    return Embedder(MINILM_INFO, model, tokenizer, **runtime)


def require_minilm_extra(what: str) -> None:
    """onnxruntime, and tokenizers for its input, are the `minilm` extra (~110 MB with what they
    pull in, which the default static table does not need): a transformer asked for without them
    gets the install line, not an ImportError."""
    try:
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError as e:
        raise CoraError("CORA-MDL-004", f"{what} needs {e.name}, which is not installed") from None


def bundled_named(model_sha256: str) -> str | None:
    """Which bundled model ("minilm", "static") has this checksum, if any."""
    known = {MINILM_SHA256: "minilm", STATIC_INFO.model_sha256: "static"}
    return known.get(model_sha256)


def _static_sha256(vectors: bytes, scales: bytes | None) -> str:
    """One checksum for a static table: its vectors' sha256, and its scales' when it has them."""
    digest = _sha256(vectors)
    return digest if scales is None else _sha256(f"{digest} {_sha256(scales)}".encode())


def load_static(model_dir: Path | None = None) -> StaticEmbedder:
    """The bundled static distillation of all-MiniLM-L6-v2, checked against its checksums."""
    from cora_ci.embedding.static import StaticEmbedder, read_table

    if model_dir is None:
        model_dir = BUNDLED / "minilm_static"
    vectors = checked(model_dir / "vectors.npy", STATIC_VECTORS_SHA256)  # mapped once verified
    scales = verify_sha256(model_dir / "scales.npy", STATIC_SCALES_SHA256)
    tokens = verify_sha256(model_dir / "tokens.txt", STATIC_TOKENS_SHA256)
    return StaticEmbedder(STATIC_INFO, *read_table(tokens, vectors, scales))


def is_static_directory(model_dir: Path) -> bool:
    return (model_dir / "tokens.txt").is_file() and (model_dir / "vectors.npy").is_file()


def load_static_directory(model_dir: Path) -> StaticEmbedder:
    """A static table of one's own (tools/model/distill_static.py's output): `tokens.txt`,
    `vectors.npy`, optionally `scales.npy` and `config.json` (its `name`)."""
    from cora_ci.embedding.static import StaticEmbedder, read_table

    tokens, vectors = _read(model_dir / "tokens.txt"), _read(model_dir / "vectors.npy")
    scales = _read(model_dir / "scales.npy") if (model_dir / "scales.npy").is_file() else None
    config = _json(model_dir / "config.json") if (model_dir / "config.json").is_file() else {}
    name = config.get("name") if isinstance(config, dict) else None
    try:
        token_list, table, row_scales = read_table(tokens, vectors, scales)
    except ValueError as e:
        raise CoraError("CORA-MDL-001", f"{model_dir}: not a static table: {e}") from None
    info = ModelInfo(name if isinstance(name, str) else model_dir.resolve().name, int(table.shape[1]),
                     _static_sha256(vectors, scales), _sha256(tokens), 0, "mean", "", "")  # fmt: skip
    return StaticEmbedder(info, token_list, table, row_scales)


def _json(path: Path) -> Any:
    try:
        return json.loads(_read(path))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CoraError("CORA-MDL-001", f"{path} is not valid JSON: {e}") from None
    except RecursionError:
        raise CoraError("CORA-MDL-001", f"{path}: JSON nested too deeply") from None


def _conventions(model_dir: Path) -> dict[str, Any]:
    """Settings implied by sentence-transformers' files, where present."""
    found: dict[str, Any] = {}
    pooling_file = model_dir / "1_Pooling" / "config.json"
    if pooling_file.is_file():
        pool = _json(pooling_file)
        if isinstance(pool, dict) and pool.get("pooling_mode_cls_token"):
            found["pooling"] = "cls"
        elif isinstance(pool, dict) and pool.get("pooling_mode_mean_tokens"):
            found["pooling"] = "mean"
        else:
            raise CoraError("CORA-MDL-001", f"{pooling_file}: only mean and cls pooling are supported")
    st_file = model_dir / "sentence_bert_config.json"
    if st_file.is_file():
        st = _json(st_file)
        if isinstance(st, dict) and isinstance(st.get("max_seq_length"), int):
            found["max_length"] = st["max_seq_length"]
    prompts_file = model_dir / "config_sentence_transformers.json"
    if prompts_file.is_file():
        prompts = _json(prompts_file)
        prompts = prompts.get("prompts") if isinstance(prompts, dict) else None
        if isinstance(prompts, dict):
            for key, names in (("query_prefix", ("query",)), ("document_prefix", ("document", "passage"))):
                value = next((prompts[n] for n in names if isinstance(prompts.get(n), str)), None)
                if value is not None:
                    found[key] = value
    return found


def _settings(model_dir: Path) -> dict[str, Any]:
    """cora-model.json over sentence-transformers conventions; unknown keys and bad values fail."""
    settings = _conventions(model_dir)
    path = model_dir / SETTINGS_FILE
    if not path.is_file():
        return settings
    given = _json(path)
    if not isinstance(given, dict):
        raise CoraError("CORA-MDL-001", f"{path}: expected a JSON object")
    for key, value in given.items():
        if key not in _SETTING_TYPES:
            raise CoraError("CORA-MDL-001", f"unknown key '{key}' in {path}")
        want = _SETTING_TYPES[key]
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise CoraError("CORA-MDL-001", f"{key} in {path}: expected {want.__name__}, got {value!r}")
    settings.update(given)
    if settings.get("pooling", "mean") not in POOLINGS:
        got = settings["pooling"]
        raise CoraError("CORA-MDL-001", f"pooling in {path}: expected mean or cls, got {got!r}")
    for key in ("max_length", "dim"):
        if key in settings and settings[key] < 1:
            raise CoraError("CORA-MDL-001", f"{key} in {path}: expected a positive integer")
    return settings


def load_directory(model_dir: Path, **runtime: Any) -> Embedder | StaticEmbedder:
    """Any ONNX sentence encoder: `model.onnx` + `tokenizer.json` (+ `cora-model.json`); or a
    static table (`tokens.txt` + `vectors.npy`)."""
    if not model_dir.is_dir():
        raise CoraError("CORA-MDL-001", f"model directory not found: {model_dir}")
    if is_static_directory(model_dir):
        return load_static_directory(model_dir)
    require_minilm_extra(f"the ONNX model in {model_dir}")
    from tokenizers import Tokenizer

    from cora_ci.embedding.runtime import Embedder

    model = _read(model_dir / "model.onnx")
    tokenizer_file = model_dir / "tokenizer.json"
    tokenizer_bytes = _read(tokenizer_file)
    tokenizer_json = tokenizer_bytes.decode("utf-8", errors="replace")
    try:
        Tokenizer.from_str(tokenizer_json)
    except Exception as e:  # the tokenizers library raises plain Exception
        raise CoraError("CORA-MDL-001", f"{tokenizer_file} is not a tokenizers file: {e}") from None
    s = _settings(model_dir)
    info = ModelInfo(
        name=s.get("name", model_dir.resolve().name),
        dim=s.get("dim", 0),
        model_sha256=_sha256(model),
        tokenizer_sha256=_sha256(tokenizer_bytes),
        max_length=s.get("max_length", MINILM_MAX_LENGTH),
        pooling=s.get("pooling", "mean"),
        query_prefix=s.get("query_prefix", ""),
        document_prefix=s.get("document_prefix", ""),
    )
    embedder = Embedder(info, model, partial(Tokenizer.from_str, tokenizer_json),
                        normalize=s.get("normalize", True), **runtime)  # fmt: skip
    if not info.dim:  # not configured: ask the model (this creates its sessions now)
        embedder.info = replace(info, dim=embedder.output_dim())
    return embedder
