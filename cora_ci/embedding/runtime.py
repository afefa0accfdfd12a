"""Running an ONNX sentence encoder: one text per model call, pooled and normalised in numpy.

Every text runs alone (batch 1, no padding). The bundled MiniLM is dynamically quantised to int8,
which picks one activation scale per input tensor: in a batch, a text's vector would depend on its
batch mates, so an incremental re-index could not reproduce a full one. Alone, a text's vector
depends only on the text (and the CPU's kernels).

Parallelism without batching: `workers` onnxruntime sessions of one intra-op thread each, driven
from as many Python threads (onnxruntime releases the GIL while it runs). On 2 cores this beat one
session with 2 intra-op threads (see bench/RESULTS.md), because a single sequence of at most 256
tokens is too small a job to split well across threads. Both modes are kept so the benchmark can
compare them; `mode="intra"` is that alternative.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from cora_ci.embedding.info import ModelInfo
from cora_ci.errors import CoraError

if TYPE_CHECKING:
    import onnxruntime as ort

Vector = npt.NDArray[np.float32]
Mode = Literal["sessions", "intra"]
MAX_WORKERS = 4  # a git hook should not take over a big machine; 4 sessions stay under ~400 MB
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_ORT_INT: dict[str, type[np.signedinteger[Any]]] = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}


MAX_PASSAGES = 8  # of a long query, embedded apart and averaged (2,000 tokens with MiniLM)


def default_workers() -> int:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cpus, MAX_WORKERS))


def _fail(what: str, err: BaseException) -> CoraError:
    detail = str(err).strip().splitlines()
    return CoraError("CORA-MDL-003", f"{what}: {detail[0] if detail else type(err).__name__}")


class Embedder:
    """Turns texts into L2-normalised float32 vectors with an ONNX encoder and its tokenizer.

    Built by `load_embedder`. onnxruntime sessions are created on the first call that needs one,
    so loading an embedder (to read its `info`, say) costs file hashing and tokenizer setup only.
    """

    def __init__(
        self,
        info: ModelInfo,
        model: bytes,
        make_tokenizer: Callable[[], Any],
        *,
        normalize: bool = True,
        workers: int | None = None,
        mode: Mode = "sessions",
    ) -> None:
        self.info = info
        self.normalize = normalize
        self.mode: Mode = mode
        self.workers = workers or default_workers()
        self._model: bytes | None = model  # dropped once the sessions exist
        self._tok = make_tokenizer()
        self._tok.no_padding()  # tokenizer.json files often pad to 128; we run unpadded
        self._tok.enable_truncation(max_length=info.max_length)
        self._counter = make_tokenizer()
        self._counter.no_padding()
        self._counter.no_truncation()
        self._lock = threading.Lock()
        self._sessions: list[ort.InferenceSession] = []
        self._feeds: dict[str, type[np.signedinteger[Any]]] = {}
        self._output = ""

    # ------------------------------------------------------------------ public API

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """float32 [n, dim]; each row depends only on its own text (see the module docstring)."""
        out = np.empty((len(texts), self.info.dim), np.float32)
        if not texts:  # no session needed: an incremental index often has nothing new
            return out
        prefix = self.info.document_prefix
        sessions = self._ensure_sessions()
        if len(sessions) == 1 or len(texts) == 1:
            for i, text in enumerate(texts):
                out[i] = self._run(sessions[0], self._tok.encode(prefix + text))
            return out
        # Each worker takes the next text, tokenises it and runs it on its own session.
        # Tokenising per text keeps memory flat however many texts come in one call.
        todo: Iterator[int] = iter(range(len(texts)))
        take = threading.Lock()

        def work(session: ort.InferenceSession) -> None:
            while True:
                with take:
                    i = next(todo, -1)
                if i < 0:
                    return
                out[i] = self._run(session, self._tok.encode(prefix + texts[i]))

        with ThreadPoolExecutor(len(sessions), thread_name_prefix="cora-embed") as pool:
            for f in [pool.submit(work, s) for s in sessions]:
                f.result()
        return out

    def embed_query(self, text: str, passages: int = MAX_PASSAGES) -> Vector:
        """float32 [dim] for a search query (the model's query prefix applied). A query longer than
        the model reads (a bug report) is cut into up to `passages` consecutive passages at token
        boundaries, and their vectors are averaged: the model sees the whole question, not its
        first 256 tokens."""
        session = self._ensure_sessions(1)[0]
        prefix = self.info.query_prefix
        room = self.info.max_length - 2 - len(self._counter.encode(prefix, add_special_tokens=False).ids)
        offsets = self._counter.encode(text, add_special_tokens=False).offsets
        if len(offsets) <= room or passages <= 1 or room <= 0:
            return self._run(session, self._tok.encode(prefix + text))
        cuts = [offsets[i][0] for i in range(0, len(offsets), room)][:passages]
        pieces = [text[a:b] for a, b in zip(cuts, [*cuts[1:], len(text)], strict=True)]
        vecs = np.stack([self._run(session, self._tok.encode(prefix + piece)) for piece in pieces])
        vec = vecs.mean(axis=0, dtype=np.float32)
        if self.normalize:
            vec = vec / np.float32(max(float(np.linalg.norm(vec)), 1e-12))
        result: Vector = vec.astype(np.float32, copy=False)
        return result

    def token_count(self, text: str) -> int:
        """Tokens of `text` as given (no prefix), special tokens included, before truncation."""
        return len(self._counter.encode(text).ids)

    # ------------------------------------------------------------------ internals

    def _ensure_sessions(self, need: int | None = None) -> list[ort.InferenceSession]:
        """The sessions, made on first need: `need` of them (a query runs on one; ~40 ms of CPU each
        to make), or as many as there are workers."""
        full = self.workers if self.mode == "sessions" else 1
        want = full if need is None else min(need, full)
        if len(self._sessions) >= want:
            return self._sessions
        with self._lock:
            if len(self._sessions) < want:
                self._sessions = [*self._sessions, *self._create_sessions(want - len(self._sessions))]
                if len(self._sessions) == full:
                    self._model = None
        return self._sessions

    def _create_sessions(self, count: int) -> list[ort.InferenceSession]:
        import onnxruntime as ort

        model = self._model
        assert model is not None
        threads = 1 if self.mode == "sessions" else self.workers

        def make(_: int) -> ort.InferenceSession:
            so = ort.SessionOptions()
            so.intra_op_num_threads = threads
            so.inter_op_num_threads = 1
            so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            so.log_severity_level = 3  # warnings about the graph are not the user's business
            try:
                return ort.InferenceSession(model, sess_options=so, providers=["CPUExecutionProvider"])
            except Exception as e:  # onnxruntime raises its own exception types for bad models
                raise _fail("cannot load model.onnx", e) from None

        if count == 1:
            sessions = [make(0)]
        else:  # loading is CPU-bound in onnxruntime, which releases the GIL
            with ThreadPoolExecutor(count) as pool:
                sessions = list(pool.map(make, range(count)))
        self._bind(sessions[0])
        return sessions

    def _bind(self, session: ort.InferenceSession) -> None:
        """Map our tokenizer outputs onto the model's inputs and pick the output to pool."""
        for inp in session.get_inputs():
            if inp.name not in _INPUTS:
                raise CoraError("CORA-MDL-003", f"model input '{inp.name}' is not one cora-ci can provide")
            if inp.type not in _ORT_INT:
                raise CoraError("CORA-MDL-003", f"model input '{inp.name}' has type {inp.type}, not int")
            self._feeds[inp.name] = _ORT_INT[inp.type]
        if "input_ids" not in self._feeds:
            raise CoraError("CORA-MDL-003", "model has no input_ids input")
        names = [o.name for o in session.get_outputs()]
        self._output = "last_hidden_state" if "last_hidden_state" in names else names[0]

    def _forward(self, session: ort.InferenceSession, enc: Any) -> npt.NDArray[np.float32]:
        columns = {"input_ids": enc.ids, "attention_mask": enc.attention_mask, "token_type_ids": enc.type_ids}
        feeds = {name: np.asarray([columns[name]], dtype=dt) for name, dt in self._feeds.items()}
        try:
            return np.asarray(session.run([self._output], feeds)[0], dtype=np.float32)
        except Exception as e:  # onnxruntime's own exception types
            raise _fail("model failed to run", e) from None

    def _run(self, session: ort.InferenceSession, enc: Any) -> Vector:
        out = self._forward(session, enc)
        if out.ndim == 3:  # [1, tokens, dim]: token embeddings; no padding, so every token counts
            vec = out[0, 0] if self.info.pooling == "cls" else out[0].mean(axis=0, dtype=np.float32)
        elif out.ndim == 2:  # [1, dim]: the model pools itself
            vec = out[0]
        else:
            raise CoraError("CORA-MDL-003", f"model output '{self._output}' has shape {out.shape}")
        if vec.shape != (self.info.dim,):
            dim = vec.shape[-1]
            raise CoraError("CORA-MDL-003", f"model gives {dim}-d vectors, expected {self.info.dim}")
        if self.normalize:
            vec = vec / np.float32(max(float(np.linalg.norm(vec)), 1e-12))
        result: Vector = vec.astype(np.float32, copy=False)
        return result

    def output_dim(self) -> int:
        """The model's vector size: from its output shape or, if that is symbolic, from a test run."""
        session = self._ensure_sessions(1)[0]
        shape = next(o.shape for o in session.get_outputs() if o.name == self._output)
        if shape and isinstance(shape[-1], int):
            return shape[-1]
        return int(self._forward(session, self._tok.encode("dimension probe")).shape[-1])
