"""The indexing pipeline: source snapshot -> chunks -> reference graph -> vectors -> bundle.

Each stage is a function of its own package; this module only wires them and reports progress
through a callback, so the CLI decides how progress looks (a bar on a terminal, lines in CI logs).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cora_ci import __version__
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.lexical import LexicalDoc, write_index
from cora_ci.bundle.store import write_bundle
from cora_ci.chunking import chunk_file
from cora_ci.chunking.model import Chunk
from cora_ci.chunking.tokens import default_counter
from cora_ci.config import Config
from cora_ci.errors import CoraError
from cora_ci.files.source import Snapshot, snapshot

Progress = Callable[[str, int, int], None]  # stage, done, total
_EMBED_STEP = 64  # texts per progress report


def _quiet(stage: str, done: int, total: int) -> None:
    pass


@dataclass
class Summary:
    out: Path
    files: int = 0
    skipped: int = 0
    chunks: int = 0
    embedded: int = 0  # distinct texts run through the model
    source_bytes: int = 0
    bundle_bytes: int = 0
    diagnostics: int = 0
    languages: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)  # seconds per pipeline stage
    model: str = "none"
    source: str = ""


def build(repo: Path, out: Path | None = None, *, kind: str | None = None, rev: str | None = None,
          model: str | None = None, config_file: Path | None = None,
          progress: Progress = _quiet) -> Summary:  # fmt: skip
    """Index `repo` into the bundle directory `out` (default `<repo root>/.cora/index`)."""
    t0 = time.perf_counter()
    stages: dict[str, float] = {}
    snap = snapshot(repo, kind, rev, out, config_file)
    out = out if out is not None else snap.root / ".cora" / "index"
    cfg = snap.config
    embedder = _embedder(model or cfg.model, snap.root)
    stages["list"] = time.perf_counter() - t0
    files = _chunk_all(snap, cfg, progress, stages)
    chunks = [c for f in files for c in f.chunks]
    _check_unique_ids(chunks)
    t = time.perf_counter()
    graph = _graph(files)
    stages["graph"] = time.perf_counter() - t
    t = time.perf_counter()
    vectors, embedded = _embed(embedder, chunks, progress) if embedder is not None else (None, 0)
    stages["embed"] = time.perf_counter() - t
    summary = Summary(out=out, model=embedder.info.name if embedder else "none", stages=stages)

    def fill(tmp: Path) -> dict[str, Any]:
        progress("write", 0, 1)
        write_index(tmp / mf.BM25, (_lexical_doc(c) for c in chunks))
        if vectors is not None:
            import numpy as np

            from cora_ci.bundle.vectors import write_vectors

            write_vectors(tmp / mf.VECTORS, np.asarray([c.id for c in chunks], dtype=np.uint64), vectors)
        progress("write", 1, 1)
        return _manifest(snap, cfg, embedder.info if embedder else None, files, graph)

    t = time.perf_counter()
    write_bundle(out, fill)
    stages["write"] = time.perf_counter() - t
    summary.files = sum(1 for f in files if f.strategy is not None)
    summary.skipped = len(files) - summary.files
    summary.chunks = len(chunks)
    summary.embedded = embedded
    summary.source_bytes = sum(f.size for f in files if f.strategy is not None)  # indexed source only
    summary.bundle_bytes = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    summary.diagnostics = sum(len(f.diagnostics) + sum(len(c.diagnostics) for c in f.chunks) for f in files)
    summary.languages = dict(sorted(Counter(f.lang for f in files if f.strategy is not None).items()))
    summary.seconds = time.perf_counter() - t0
    summary.source = f"{snap.kind} {snap.commit[:12] if snap.commit else ''}".strip()
    return summary


def _embedder(spec: str, root: Path) -> Any:
    from cora_ci.embedding import load_embedder

    if spec not in ("default", "none") and not Path(spec).is_absolute():
        spec = str(root / spec) if (root / spec).exists() else spec
    return load_embedder(spec)


@dataclass
class _File(mf.FileEntry):
    size: int = 0


def _chunk_all(snap: Snapshot, cfg: Config, progress: Progress, stages: dict[str, float]) -> list[_File]:
    """Chunks and references of every file (timed apart: `read`, `chunk`, `refs`)."""
    from cora_ci.graph import extract_refs

    counter = default_counter()
    entries = list(snap.entries)
    out: list[_File] = []
    clock = time.perf_counter
    t_read = t_chunk = t_refs = 0.0
    t = clock()
    for n, (entry, data) in enumerate(snap.read(entries), start=1):
        t1 = clock()
        res = chunk_file(entry.path, data, cfg, counter, keep_tree=True)
        t2 = clock()
        refs = extract_refs(entry.path, res.lang, data, res.chunks, tree=res.tree) if res.chunks else None
        t3 = clock()
        t_read, t_chunk, t_refs = t_read + t1 - t, t_chunk + t2 - t1, t_refs + t3 - t2
        out.append(_File(
            path=entry.path, blob=entry.blob, lang=res.lang, strategy=res.strategy,
            diagnostics=res.diagnostics, imports=refs.imports if refs else [], chunks=res.chunks,
            refs=refs.refs if refs else {}, size=len(data),
        ))  # fmt: skip
        progress("chunk", n, len(entries))
        t = clock()
    stages.update(read=t_read, chunk=t_chunk, refs=t_refs)
    return out


def _check_unique_ids(chunks: list[Chunk]) -> None:
    seen: dict[int, Chunk] = {}
    for c in chunks:
        if c.id in seen:
            other = seen[c.id]
            raise CoraError("CORA-INT-001", f"chunk id collision: {other.path}:{other.start_line} and "
                                            f"{c.path}:{c.start_line}")  # fmt: skip
        seen[c.id] = c


def _texts(chunks: list[Chunk]) -> list[str]:
    from cora_ci.embedding import document_text

    return [document_text(c) for c in chunks]


def _embed(embedder: Any, chunks: list[Chunk], progress: Progress) -> tuple[Any, int]:
    """One vector per chunk, and how many texts ran through the model: identical texts (copied
    code, repeated boilerplate) are embedded once."""
    import numpy as np

    texts = _texts(chunks)
    keys = [hashlib.sha256(t.encode()).digest() for t in texts]
    unique = sorted(set(keys))
    text_of = dict(zip(keys, texts, strict=True))
    row = {k: i for i, k in enumerate(unique)}
    vecs = np.zeros((len(unique), embedder.info.dim), dtype=np.float32)
    progress("embed", 0, len(unique))
    for i in range(0, len(unique), _EMBED_STEP):
        part = unique[i : i + _EMBED_STEP]
        vecs[i : i + len(part)] = embedder.embed_documents([text_of[k] for k in part])
        progress("embed", i + len(part), len(unique))
    return (vecs[[row[k] for k in keys]] if keys else vecs), len(unique)


def _graph(files: list[_File]) -> Any:
    from cora_ci.graph import FileRefs, build_graph

    return build_graph({f.path: (f.chunks, FileRefs(f.imports, f.refs)) for f in files})


def _lexical_doc(c: Chunk) -> LexicalDoc:
    names = " ".join([*c.symbols, *(a.split("::", 1)[-1] for a in c.anchors)])
    return LexicalDoc(c.id, names, c.path, f"{c.header}\n{c.text}")


def _built_at(snap: Snapshot) -> int | None:
    """SOURCE_DATE_EPOCH if set, else the commit's time: never the wall clock, so builds reproduce."""
    env = os.environ.get("SOURCE_DATE_EPOCH")
    if env:
        try:
            return int(env)
        except ValueError:
            raise CoraError("CORA-CFG-002", f"SOURCE_DATE_EPOCH: expected an integer, got {env!r}") from None
    return snap.time


def _manifest(snap: Snapshot, cfg: Config, model: Any, files: list[_File], graph: Any) -> dict[str, Any]:
    fcols, ccols = mf.tables(list(files))
    chunk_cfg = asdict(cfg)
    for k in ("include", "exclude", "source", "model"):
        chunk_cfg.pop(k)
    return {
        "format": mf.FORMAT,
        "format_version": ".".join(map(str, mf.FORMAT_VERSION)),
        "tool_version": __version__,
        "built_at": _built_at(snap),
        "source": {
            "root": snap.root.name,
            "kind": snap.kind,
            "commit": snap.commit,
            "tree": snap.tree,
            "dirty": snap.dirty,
        },
        "model": asdict(model) if model is not None else None,
        "chunker": {
            "hash": cfg.chunker_hash(),
            "config": chunk_cfg,
            "include": list(cfg.include),
            "exclude": list(cfg.exclude),
        },
        "stats": {
            "files": sum(1 for f in files if f.strategy is not None),
            "skipped": sum(1 for f in files if f.strategy is None),
            "chunks": len(ccols["id"]),
            "source_bytes": sum(f.size for f in files if f.strategy is not None),
        },
        "files": fcols,
        "chunks": mf.pack_columns(ccols),
        "graph": graph.to_dict(),
    }
