"""Runtime embedder for the int8 ONNX all-MiniLM-L6-v2 build (cora-ci).

Runtime deps only: onnxruntime, tokenizers, numpy.
Tokenise (BertWordPiece, lowercase, truncate to max_length, pad per batch)
-> ONNX encoder (last_hidden_state) -> mean pooling over attention mask
-> L2 normalise (numpy).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import BertWordPieceTokenizer


def make_tokenizer(vocab: str | Path, max_length: int = 256, lowercase: bool = True):
    tok = BertWordPieceTokenizer(str(vocab), lowercase=lowercase)
    tok.enable_truncation(max_length=max_length)
    # no tokenizer-side padding: Embedder pads each (length-sorted) batch in numpy
    return tok


def make_session(model: str | Path, threads: int = 2) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(model), sess_options=so, providers=["CPUExecutionProvider"])


def mean_pool_normalize(hidden: np.ndarray, mask: np.ndarray, normalize: bool = True) -> np.ndarray:
    m = mask.astype(np.float32)[:, :, None]
    summed = (hidden * m).sum(axis=1)
    counts = np.clip(m.sum(axis=1), 1e-9, None)
    emb = summed / counts
    if normalize:
        emb /= np.clip(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12, None)
    return emb.astype(np.float32)


class Embedder:
    def __init__(self, model_dir: str | Path, model_file: str | Path | None = None, threads: int = 2):
        model_dir = Path(model_dir)
        self.cfg = json.loads((model_dir / "config.json").read_text())
        self.tokenizer = make_tokenizer(
            model_dir / "vocab.txt", self.cfg["max_length"], self.cfg["lowercase"]
        )
        self.session = make_session(model_file or (model_dir / "model.onnx"), threads)

    def run_ids(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(["last_hidden_state"], feeds)[0]
        return mean_pool_normalize(hidden, mask, self.cfg["normalize"])

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        """Truncated (max_length incl. [CLS]/[SEP]), unpadded ids."""
        return [e.ids for e in self.tokenizer.encode_batch(texts)]

    def embed_ids(
        self, seqs: list[list[int]], batch_size: int = 16, sort_by_length: bool = True
    ) -> np.ndarray:
        n = len(seqs)
        out = np.empty((n, self.cfg["dim"]), np.float32)
        lens = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=n)
        order = np.argsort(lens, kind="stable") if sort_by_length else np.arange(n)
        for i in range(0, n, batch_size):
            idx = order[i : i + batch_size]
            width = int(lens[idx].max())  # pad per batch to its longest member
            ids = np.zeros((len(idx), width), np.int64)
            mask = np.zeros((len(idx), width), np.int64)
            for r, j in enumerate(idx):
                ids[r, : lens[j]] = seqs[j]
                mask[r, : lens[j]] = 1
            out[idx] = self.run_ids(ids, mask)
        return out

    def embed(self, texts: list[str], batch_size: int = 16, sort_by_length: bool = True) -> np.ndarray:
        """Embed texts; batches are formed from length-sorted inputs (less padding);
        output rows are in input order."""
        return self.embed_ids(self.tokenize(texts), batch_size, sort_by_length)
