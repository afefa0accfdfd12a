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
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.lexical import LexicalDoc, write_index
from cora_ci.bundle.store import update_lock, write_bundle
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
    embedded: int = 0  # texts run through the model (the rest reused a vector)
    rechunked: int = 0  # files chunked in this run (the rest came from the previous bundle)
    removed: int = 0  # files gone since the previous bundle
    rebuilt: str = ""  # why the previous bundle could not be updated ("" for an update)
    source_bytes: int = 0
    bundle_bytes: int = 0
    diagnostics: int = 0
    languages: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)  # seconds per pipeline stage
    model: str = "none"
    source: str = ""


def build(repo: Path, out: Path | None = None, *, kind: str | None = None, rev: str | None = None,
          model: str | None = None, config_file: Path | None = None, full: bool = False,
          progress: Progress = _quiet) -> Summary:  # fmt: skip
    """Index `repo` into the bundle `out` (default `<repo root>/.cora/index`).

    An existing bundle is updated: files whose git blob id is unchanged keep their chunks, and
    every chunk whose embedded text is unchanged keeps its vector, wherever it moved. A change of
    chunker config, model or major format rebuilds from scratch, as does `full`.
    """
    t0 = time.perf_counter()
    snap = snapshot(repo, kind, rev, out, config_file)
    out = out if out is not None else snap.root / ".cora" / "index"
    with update_lock(out):
        return _build(snap, out, model, full, progress, t0)


def _build(
    snap: Snapshot, out: Path, model: str | None, full: bool, progress: Progress, t0: float
) -> Summary:
    stages: dict[str, float] = {}
    cfg = snap.config
    embedder = _embedder(model or cfg.model, snap.root)
    info = asdict(embedder.info) if embedder is not None else None
    old, rebuilt = (None, "--full") if full else _previous(out, cfg, info)
    if old is not None and _same_files(old, snap):
        return _refresh_source(old, snap, out, t0, embedder)
    stages["list"] = time.perf_counter() - t0
    reuse = {f.path: f for f in old.chunks.file_entries()} if old is not None else {}
    files, rechunked = _chunk_all(snap, cfg, progress, stages, reuse)
    chunks = [c for f in files for c in f.chunks]
    _check_unique_ids(chunks)
    t = time.perf_counter()
    graph = _graph(files)
    stages["graph"] = time.perf_counter() - t
    t = time.perf_counter()
    vectors, embedded, same = None, 0, set()
    if embedder is not None:
        texts = _texts(chunks)
        keys = [_text_key(t) for t in texts]
        cache, old_keys = _old_vectors(old, reuse)
        vectors, embedded = _embed(embedder, texts, keys, progress, cache)
        same = {c.id for c, k in zip(chunks, keys, strict=True) if old_keys.get(c.id) == k}
    stages["embed"] = time.perf_counter() - t

    def fill(tmp: Path) -> dict[str, Any]:
        progress("write", 0, 1)
        write_index(tmp / mf.BM25, (_lexical_doc(c) for c in chunks))
        if vectors is not None:
            import numpy as np

            from cora_ci.bundle.vectors import update_vectors, write_vectors

            ids = np.asarray([c.id for c in chunks], dtype=np.uint64)
            if old is not None and old.vectors is not None:
                update_vectors(old.root / mf.VECTORS, tmp / mf.VECTORS, ids, vectors, same)
            else:
                write_vectors(tmp / mf.VECTORS, ids, vectors)
        progress("write", 1, 1)
        return _manifest(snap, cfg, info, files, graph)

    t = time.perf_counter()
    write_bundle(out, fill)
    stages["write"] = time.perf_counter() - t
    indexed = [f for f in files if f.strategy is not None]
    return Summary(
        out=out, files=len(indexed), skipped=len(files) - len(indexed), chunks=len(chunks), embedded=embedded,
        rechunked=rechunked, removed=len(set(reuse) - {f.path for f in files}), rebuilt=rebuilt,
        source_bytes=sum(f.size for f in indexed),  # indexed source only
        bundle_bytes=_dir_bytes(out),
        diagnostics=sum(len(f.diagnostics) + sum(len(c.diagnostics) for c in f.chunks) for f in files),
        languages=dict(sorted(Counter(f.lang for f in indexed).items())),
        seconds=time.perf_counter() - t0, stages=stages, model=_model_name(embedder), source=_label(snap),
    )  # fmt: skip


def _dir_bytes(out: Path) -> int:
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file())


def _model_name(embedder: Any) -> str:
    return embedder.info.name if embedder is not None else "none"


def _label(snap: Snapshot) -> str:
    """What was indexed, for people: `rev 1a2b3c4d5e6f`, `staged 1a2b...`, `dir`."""
    return f"{snap.kind} {snap.commit[:12] if snap.commit else ''}".strip()


def _same_files(old: Bundle, snap: Snapshot) -> bool:
    files = old.manifest["files"]
    return dict(zip(files["path"], files["blob"], strict=True)) == {e.path: e.blob for e in snap.entries}


def _refresh_source(old: Bundle, snap: Snapshot, out: Path, t0: float, embedder: Any) -> Summary:
    """No file changed (a new commit that touched nothing indexed, a sync right after the
    pre-commit update, a rerun): keep both indexes as they are, hard-linked, and rewrite only the
    manifest's source fields, or nothing at all when those are unchanged too."""
    m = old.manifest
    source = _source(snap)
    if m["source"] != source or m["built_at"] != _built_at(snap):

        def fill(tmp: Path) -> dict[str, Any]:
            for rel in m["artifacts"]:
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                os.link(old.root / rel, tmp / rel)
            return {**m, "source": source, "built_at": _built_at(snap)}

        write_bundle(out, fill)
    stats = m["stats"]
    indexed = [lang for lang, st in zip(m["files"]["lang"], m["files"]["strategy"], strict=True) if st]
    return Summary(
        out=out, files=stats["files"], skipped=stats["skipped"], chunks=stats["chunks"],
        source_bytes=stats["source_bytes"],
        bundle_bytes=_dir_bytes(out), languages=dict(sorted(Counter(indexed).items())),
        seconds=time.perf_counter() - t0, stages={"list": time.perf_counter() - t0},
        model=_model_name(embedder), source=_label(snap),
    )  # fmt: skip


def _source(snap: Snapshot) -> dict[str, Any]:
    return {
        "root": snap.root.name,
        "kind": snap.kind,
        "commit": snap.commit,
        "tree": snap.tree,
        "dirty": snap.dirty,
    }


def _previous(out: Path, cfg: Config, model: dict[str, Any] | None) -> tuple[Bundle | None, str]:
    """The bundle to update, or None and the reason for building from scratch."""
    if not (out / mf.MANIFEST).is_file():
        return None, "" if not out.exists() else "no readable bundle"
    try:
        old = open_bundle(out)
    except CoraError as e:
        return None, f"previous bundle unusable ({e.code})"
    m = old.manifest
    if mf.parse_version(m["format_version"])[0] != mf.FORMAT_VERSION[0]:
        return None, f"bundle format {m['format_version']} -> {'.'.join(map(str, mf.FORMAT_VERSION))}"
    if m["chunker"]["hash"] != cfg.chunker_hash():
        return None, "chunker config changed"
    if m["model"] != model:
        name = (model or {}).get("name", "none")
        return None, f"model changed ({(m['model'] or {}).get('name', 'none')} -> {name})"
    return old, ""


def _embedder(spec: str, root: Path) -> Any:
    from cora_ci.embedding import load_embedder

    if spec not in ("default", "none") and not Path(spec).is_absolute():
        spec = str(root / spec) if (root / spec).exists() else spec
    return load_embedder(spec)


def _chunk_all(snap: Snapshot, cfg: Config, progress: Progress, stages: dict[str, float],
               reuse: dict[str, mf.FileEntry]) -> tuple[list[mf.FileEntry], int]:  # fmt: skip
    """Chunks and references of every file, taken from `reuse` when the blob id is unchanged;
    and how many files were chunked anew (timed apart: `read`, `chunk`, `refs`)."""
    from cora_ci.graph import extract_refs

    counter = default_counter()
    kept = {e.path: reuse[e.path] for e in snap.entries if e.path in reuse and reuse[e.path].blob == e.blob}
    todo = [e for e in snap.entries if e.path not in kept]
    fresh: dict[str, mf.FileEntry] = {}
    clock = time.perf_counter
    t_read = t_chunk = t_refs = 0.0
    t = clock()
    for n, (entry, data) in enumerate(snap.read(todo), start=1):
        t1 = clock()
        res = chunk_file(entry.path, data, cfg, counter, keep_tree=True)
        t2 = clock()
        refs = extract_refs(entry.path, res.lang, data, res.chunks, tree=res.tree) if res.chunks else None
        t3 = clock()
        t_read, t_chunk, t_refs = t_read + t1 - t, t_chunk + t2 - t1, t_refs + t3 - t2
        fresh[entry.path] = mf.FileEntry(
            path=entry.path, blob=entry.blob, lang=res.lang, strategy=res.strategy,
            diagnostics=res.diagnostics, imports=refs.imports if refs else [], chunks=res.chunks,
            refs=refs.refs if refs else {}, size=len(data),
        )  # fmt: skip
        progress("chunk", n, len(todo))
        t = clock()
    stages.update(read=t_read, chunk=t_chunk, refs=t_refs)
    return [kept.get(e.path) or fresh[e.path] for e in snap.entries], len(todo)


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


def _text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def _old_vectors(
    old: Bundle | None, reuse: dict[str, mf.FileEntry]
) -> tuple[dict[bytes, Any], dict[int, bytes]]:
    """The previous bundle's vectors by the hash of their embedded text (the vector cache), and
    the text hash of each of its chunk ids."""
    chunks = [c for f in reuse.values() for c in f.chunks]
    if old is None or old.vectors is None or not chunks:
        return {}, {}
    keys = [_text_key(t) for t in _texts(chunks)]
    vecs = old.vectors.get([c.id for c in chunks])
    return dict(zip(keys, vecs, strict=True)), {c.id: k for c, k in zip(chunks, keys, strict=True)}


def _embed(
    embedder: Any, texts: list[str], keys: list[bytes], progress: Progress, cache: dict[bytes, Any]
) -> tuple[Any, int]:
    """One vector per text (`keys` are their hashes), and how many texts ran through the model: a
    text seen before (in the previous bundle, or earlier in this build: copied code, boilerplate) is
    not embedded again."""
    import numpy as np

    unique = sorted(set(keys))
    text_of = dict(zip(keys, texts, strict=True))
    todo = [k for k in unique if k not in cache]
    progress("embed", 0, len(todo))
    found = dict(cache)
    for i in range(0, len(todo), _EMBED_STEP):
        part = todo[i : i + _EMBED_STEP]
        found.update(zip(part, embedder.embed_documents([text_of[k] for k in part]), strict=True))
        progress("embed", i + len(part), len(todo))
    vecs = np.zeros((len(keys), embedder.info.dim), dtype=np.float32)
    for i, k in enumerate(keys):
        vecs[i] = found[k]
    return vecs, len(todo)


def _graph(files: list[mf.FileEntry]) -> Any:
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


def _manifest(snap: Snapshot, cfg: Config, model: dict[str, Any] | None, files: list[mf.FileEntry],
              graph: Any) -> dict[str, Any]:  # fmt: skip
    fcols, ccols = mf.tables(list(files))
    chunk_cfg = asdict(cfg)
    for k in ("include", "exclude", "source", "model"):
        chunk_cfg.pop(k)
    return {
        "format": mf.FORMAT,
        "format_version": ".".join(map(str, mf.FORMAT_VERSION)),
        "tool_version": __version__,
        "built_at": _built_at(snap),
        "source": _source(snap),
        "model": model,
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
        "chunks": mf.pack_blob(ccols),
        "graph": graph.to_dict(),
    }
