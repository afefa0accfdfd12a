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
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from cora_ci import __version__
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.lexical import LexicalDoc, Segment, write_index
from cora_ci.bundle.manifest import bucket_count, bucket_of
from cora_ci.bundle.store import update_lock, write_bundle
from cora_ci.chunking import chunk_file
from cora_ci.chunking.model import Chunk
from cora_ci.chunking.tokens import default_counter
from cora_ci.config import Config
from cora_ci.errors import CoraError
from cora_ci.files.shard import ShardSpec, assign, tree_digest
from cora_ci.files.source import Entry, Snapshot, snapshot
from cora_ci.graph.build import FileLinks, Linker, NameFilter, changed_names, file_links, hashes, pack_edges
from cora_ci.graph.extract import FileRefs
from cora_ci.graph.resolve import Repo

Row = dict[str, Any]  # one file's row of the manifest's file table

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
    diagnostics: int = 0  # in the files chunked by this run
    languages: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)  # seconds per pipeline stage
    model: str = "none"
    source: str = ""


def build(repo: Path, out: Path | None = None, *, kind: str | None = None, rev: str | None = None,
          model: str | None = None, config_file: Path | None = None, full: bool = False,
          progress: Progress = _quiet, shard: ShardSpec | None = None) -> Summary:  # fmt: skip
    """Index `repo` into the bundle `out` (default `<repo root>/.cora/index`).

    An existing bundle is updated: files whose git blob id is unchanged keep their chunks, and
    every chunk whose embedded text is unchanged keeps its vector, wherever it moved. A change of
    chunker config, model, shard or major format rebuilds from scratch, as does `full`. `shard`
    indexes only that shard's files of the tree (see `cora_ci.files.shard`).
    """
    t0 = time.perf_counter()
    snap = snapshot(repo, kind, rev, out, config_file)
    out = out if out is not None else snap.root / ".cora" / "index"
    snap, cut = _cut(snap, shard)
    with update_lock(out):
        try:
            return _build(snap, out, model, "--full" if full else None, progress, t0, cut)
        except CoraError as e:  # the previous bundle is damaged where the update read it: rebuild
            if full or e.code not in _DAMAGED:
                raise
            why = f"previous bundle unusable ({e.code}: {e.message})"
            return _build(snap, out, model, why, progress, t0, cut)


_DAMAGED = ("CORA-BND-003", "CORA-BND-004")  # raised only by reading a bundle


def _cut(snap: Snapshot, spec: ShardSpec | None) -> tuple[Snapshot, dict[str, Any] | None]:
    """The snapshot restricted to shard `spec`, and what its manifest records about the cut: the
    shard, and the whole tree's file count and digest, which a merge checks."""
    if spec is None:
        return snap, None
    shards = assign([(e.path, size) for e, size in zip(snap.entries, snap.sizes(), strict=True)], spec.count)
    mine = tuple(e for e, s in zip(snap.entries, shards, strict=True) if s == spec.index - 1)
    cut = {"index": spec.index, "count": spec.count, "files": len(snap.entries),
           "digest": tree_digest([(e.path, e.blob) for e in snap.entries])}  # fmt: skip
    return replace(snap, entries=mine), cut


def _build(snap: Snapshot, out: Path, model: str | None, full: str | None, progress: Progress, t0: float,
           cut: dict[str, Any] | None) -> Summary:  # fmt: skip
    """Build or update; `full` (the reason) builds from scratch."""
    stages: dict[str, float] = {}
    cfg = snap.config
    embedder = _embedder(model or cfg.model, snap.root)
    info = asdict(embedder.info) if embedder is not None else None
    old, rebuilt = (None, full) if full else _previous(out, cfg, info, cut)
    if old is not None and _same_files(old, snap):
        return _refresh_source(old, snap, out, t0, embedder, cut)
    stages["list"] = time.perf_counter() - t0
    old_shards = old.shards if old is not None else None
    old_rows = mf.Rows(old_shards)
    same = [e.path for e in snap.entries if e.path in old_rows and old_rows.top(e.path, "blob") == e.blob]
    kept = mf.Rows(old_shards, same)
    fresh = _chunk_all(snap, cfg, progress, stages, [e for e in snap.entries if e.path not in kept])
    _check_unique_ids(kept, fresh)
    t = time.perf_counter()
    keys = {p: _keys(f.chunks) if embedder is not None else b"" for p, f in fresh.items()}
    t_keys = time.perf_counter() - t
    t = time.perf_counter()
    links = {p: file_links(f.chunks, FileRefs(f.imports, f.refs)) for p, f in fresh.items()}
    rows = mf.Rows(old_shards, kept)
    for p, f in fresh.items():
        rows.put(_row(f, links[p], keys[p]))
    for p, e in link_files(old_rows, kept, rows, links).items():
        rows.set_top(p, "edges", e)  # a top column: an unchanged file's shard is not read
    stages["graph"] = time.perf_counter() - t
    t = time.perf_counter()
    vec = _vectors(embedder, old, old_rows, kept, fresh, keys, progress) if embedder is not None else None
    stages["embed"] = time.perf_counter() - t + t_keys
    files = rows.top_table()
    deleted = set(old_rows) - set(rows)
    count = bucket_count(sum(len(b) // 8 for b in files["ids"]))
    same_buckets = old is not None and old.manifest["lexical"]["buckets"] == count

    def fill(tmp: Path) -> dict[str, Any]:
        progress("write", 0, 1)
        reuse = old if same_buckets else None
        lexical = write_lexical(tmp / mf.BM25, reuse, files, rows, fresh, deleted, count)
        changed = {bucket_of(p, count) for p in [*fresh, *deleted]}
        shards = write_shards(tmp, reuse, rows, count, changed)
        if vec is not None:
            from cora_ci.bundle.vectors import update_vectors, write_vectors

            if old is not None and old.vectors is not None:
                batches = [(vec.ids, vec.vectors), (vec.stored_ids, vec.stored)]
                update_vectors(old.root / mf.VECTORS, tmp / mf.VECTORS, vec.remove, batches)
            else:
                write_vectors(tmp / mf.VECTORS, vec.ids, vec.vectors)  # nothing stored to copy
        write_graph(tmp / mf.GRAPH, files, old)
        progress("write", 1, 1)
        return assemble_manifest(_header(snap, cfg, info, cut), files, lexical, shards)

    t = time.perf_counter()
    write_bundle(out, fill, _linked_artifacts(old))
    stages["write"] = time.perf_counter() - t
    indexed = [i for i, st in enumerate(files["strategy"]) if st is not None]
    return Summary(
        out=out, files=len(indexed), skipped=len(files["path"]) - len(indexed),
        chunks=sum(len(b) // 8 for b in files["ids"]), embedded=vec.embedded if vec is not None else 0,
        rechunked=len(fresh), removed=len(deleted), rebuilt=rebuilt,
        source_bytes=sum(files["size"][i] for i in indexed), bundle_bytes=_dir_bytes(out),
        diagnostics=sum(_diagnostics(f) for f in fresh.values()),
        languages=dict(sorted(Counter(files["lang"][i] for i in indexed).items())),
        seconds=time.perf_counter() - t0, stages=stages, model=_model_name(embedder),
        source=_label(snap, cut),
    )  # fmt: skip


def _row(f: mf.FileEntry, links: FileLinks, keys: bytes) -> Row:
    """The manifest row of a freshly chunked file, its edges still to be resolved."""
    used = hashes(n for names in links.refs.values() for n in names)
    return mf.file_row(f, links, keys, hashes(links.defs), used, b"")


def _diagnostics(f: mf.FileEntry) -> int:
    return len(f.diagnostics) + sum(len(c.diagnostics) for c in f.chunks)


def _linked_artifacts(old: Bundle | None) -> tuple[Path, dict[str, Any]] | None:
    """The previous bundle's checksums, for files the new one hard-links instead of writing."""
    return (old.root, old.manifest["artifacts"]) if old is not None else None


def _dir_bytes(out: Path) -> int:
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file())


def _model_name(embedder: Any) -> str:
    return embedder.info.name if embedder is not None else "none"


def _label(snap: Snapshot, cut: dict[str, Any] | None) -> str:
    """What was indexed, for people: `rev 1a2b3c4d5e6f`, `staged 1a2b...`, `dir`, `rev 1a2b..., shard 2/4`."""
    label = f"{snap.kind} {snap.commit[:12] if snap.commit else ''}".strip()
    return f"{label}, shard {shard_label(cut)}" if cut else label


def shard_label(cut: dict[str, Any] | None) -> str:
    """`2/4`, or `full` for a bundle of the whole tree."""
    return f"{cut['index']}/{cut['count']}" if cut else "full"


def _same_files(old: Bundle, snap: Snapshot) -> bool:
    files = old.manifest["files"]
    return dict(zip(files["path"], files["blob"], strict=True)) == {e.path: e.blob for e in snap.entries}


def _refresh_source(old: Bundle, snap: Snapshot, out: Path, t0: float, embedder: Any,
                    cut: dict[str, Any] | None) -> Summary:  # fmt: skip
    """No file changed (a new commit that touched nothing indexed, a sync right after the
    pre-commit update, a rerun, a commit outside this shard): keep both indexes as they are,
    hard-linked, and rewrite only the manifest's source fields, or nothing at all when those are
    unchanged too."""
    m = old.manifest
    source = _source(snap)
    new = {"source": source, "built_at": _built_at(snap), "boosts": list(snap.boosts)}
    if cut is not None:
        new["shard"] = cut
    if any(m.get(k) != v for k, v in new.items()):

        def fill(tmp: Path) -> dict[str, Any]:
            for rel in m["artifacts"]:
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                os.link(old.root / rel, tmp / rel)
            return {**m, **new}

        write_bundle(out, fill, _linked_artifacts(old))
    stats = m["stats"]
    indexed = [lang for lang, st in zip(m["files"]["lang"], m["files"]["strategy"], strict=True) if st]
    return Summary(
        out=out, files=stats["files"], skipped=stats["skipped"], chunks=stats["chunks"],
        source_bytes=stats["source_bytes"],
        bundle_bytes=_dir_bytes(out), languages=dict(sorted(Counter(indexed).items())),
        seconds=time.perf_counter() - t0, stages={"list": time.perf_counter() - t0},
        model=_model_name(embedder), source=_label(snap, cut),
    )  # fmt: skip


def _source(snap: Snapshot) -> dict[str, Any]:
    return {
        "root": snap.root.name,
        "kind": snap.kind,
        "commit": snap.commit,
        "tree": snap.tree,
        "dirty": snap.dirty,
    }


def _previous(out: Path, cfg: Config, model: dict[str, Any] | None,
              cut: dict[str, Any] | None) -> tuple[Bundle | None, str]:  # fmt: skip
    """The bundle to update, or None and the reason for building from scratch."""
    if not (out / mf.MANIFEST).is_file():
        return None, "" if not out.exists() else "no readable bundle"
    try:
        old = open_bundle(out)
    except CoraError as e:
        return None, f"previous bundle unusable ({e.code}: {e.message})"
    m = old.manifest
    if mf.parse_version(m["format_version"])[0] != mf.FORMAT_VERSION[0]:
        return None, f"bundle format {m['format_version']} -> {'.'.join(map(str, mf.FORMAT_VERSION))}"
    if m["chunker"]["hash"] != cfg.chunker_hash():
        return None, "chunker config changed"
    if m["model"] != model:
        name = (model or {}).get("name", "none")
        return None, f"model changed ({(m['model'] or {}).get('name', 'none')} -> {name})"
    was, now = shard_label(m.get("shard")), shard_label(cut)
    if was != now:
        return None, f"shard changed ({was} -> {now})"
    _ = old.lexical, old.vectors  # checked against the manifest before reuse (else `build` rebuilds)
    return old, ""


def _embedder(spec: str, root: Path) -> Any:
    from cora_ci.embedding import deferred_embedder

    if spec not in ("default", "none") and not Path(spec).is_absolute():
        spec = str(root / spec) if (root / spec).exists() else spec
    return deferred_embedder(spec)


def _chunk_all(snap: Snapshot, cfg: Config, progress: Progress, stages: dict[str, float],
               todo: list[Entry]) -> dict[str, mf.FileEntry]:  # fmt: skip
    """Chunks and references of the files in `todo` (timed apart: `read`, `chunk`, `refs`)."""
    from cora_ci.graph import extract_refs

    counter = default_counter()
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
    return fresh


def _check_unique_ids(kept: mf.Rows, fresh: dict[str, mf.FileEntry]) -> None:
    owner: dict[int, str] = {}
    for f in fresh.values():
        for c in f.chunks:
            if c.id in owner:
                raise _collision(c.id, owner[c.id], f"{c.path}:{c.start_line}")
            owner[c.id] = f"{c.path}:{c.start_line}"
    for path in kept:
        ids = mf.ids_of(kept.top(path, "ids")).tolist()
        clash = owner.keys() & ids
        if clash:
            cid = min(clash)
            raise _collision(cid, owner[cid], path)


def _collision(cid: int, a: str, b: str) -> CoraError:
    return CoraError("CORA-INT-001", f"chunk id collision ({cid}): {a} and {b}")


def link_files(
    old_rows: mf.Rows, kept: mf.Rows, rows: mf.Rows, links: dict[str, FileLinks]
) -> dict[str, bytes]:
    """Packed out-edges of every file whose references may resolve differently now: the changed
    files (those in `links`), the files using a name whose definitions changed, and, when files
    were added or removed or declare other C# namespaces, the files whose imports now reach other
    files. `rows` is the new file table, edges not yet set for changed files."""
    cache: dict[str, FileLinks] = dict(links)

    def links_of(path: str) -> FileLinks:
        if path not in cache:
            cache[path] = mf.links_of_row(kept[path])
        return cache[path]

    linker = Linker(
        {p: rows.top(p, "lang") for p in rows},
        {p: rows.top(p, "namespaces") for p in rows},
        links_of,
        {p: rows.top(p, "defs_h") for p in rows},
    )
    affected = set(links)
    if kept:
        gone = {p: mf.links_of_row(old_rows[p]) for p in old_rows if p not in kept}
        users = NameFilter({p: kept.top(p, "refs_h") for p in kept})
        affected.update(users.paths_with(changed_names(gone, links)))
        moved = set(old_rows) != set(rows) or any(
            old_rows.top(p, c) != rows.top(p, c)
            for p in links
            if p in old_rows
            for c in ("lang", "namespaces")
        )
        if moved:  # reads every kept file's imports, so every shard: files came or went
            before = Repo({p: old_rows.top(p, "lang") for p in old_rows},
                          {p: old_rows.top(p, "namespaces") for p in old_rows})  # fmt: skip
            now = linker.repo
            imports = {p: kept[p]["imports"] for p in kept}
            affected |= {
                p for p, i in imports.items() if before.imported_files(p, i) != now.imported_files(p, i)
            }
    return {p: pack_edges(mf.ids_of(rows.top(p, "ids")).tolist(), linker.edges(p)) for p in sorted(affected)}


def _keys(chunks: list[Chunk]) -> bytes:
    """Hashes of the embedded texts: the vector cache's keys (16 bytes of sha256 each)."""
    from cora_ci.embedding import document_text

    return b"".join(hashlib.sha256(document_text(c).encode()).digest()[: mf.KEY_BYTES] for c in chunks)


def _split_keys(keys: bytes) -> list[bytes]:
    return [keys[i : i + mf.KEY_BYTES] for i in range(0, len(keys), mf.KEY_BYTES)]


class VectorPlan(NamedTuple):
    """How the vector index changes: ids to remove; ids to add with vectors the model made now,
    and ids to add with vectors copied as stored from the previous bundle (moved or copied code)."""

    remove: list[int]
    ids: Any  # np.uint64 array
    vectors: Any  # float32 (n, dim) array
    stored_ids: Any  # np.uint64 array
    stored: Any  # int8 (m, dim) array, exactly as the previous index holds them
    embedded: int  # texts run through the model


def _vectors(
    embedder: Any, old: Bundle | None, old_rows: mf.Rows, kept: mf.Rows,
    fresh: dict[str, mf.FileEntry], keys: dict[str, bytes], progress: Progress,
) -> VectorPlan:  # fmt: skip
    """Vectors for the chunks of changed files. A chunk whose id and embedded text are unchanged
    keeps its stored vector in place; another chunk whose text the previous bundle embedded
    anywhere (moved, copied or renamed code) gets a copy of that vector; only new texts are
    embedded."""
    chunks = [c for f in fresh.values() for c in f.chunks]
    ks = [k for p in fresh for k in _split_keys(keys[p])]
    before: dict[int, bytes] = {}  # id -> text key, over the previous versions of the changed files
    for p in fresh:
        if p in old_rows:
            before.update(
                zip(mf.ids_of(old_rows[p]["ids"]).tolist(), _split_keys(old_rows[p]["keys"]), strict=True)
            )
    stay = {c.id for c, k in zip(chunks, ks, strict=True) if before.get(c.id) == k}
    gone = [p for p in old_rows if p not in kept]
    remove = sorted(
        cid for p in gone for cid in mf.ids_of(old_rows.top(p, "ids")).tolist() if cid not in stay
    )
    add = [(c, k) for c, k in zip(chunks, ks, strict=True) if c.id not in stay]
    stored = _stored_vectors(old, old_rows, {k for _, k in add})
    copy = [(c.id, k) for c, k in add if k in stored]
    new = [(c, k) for c, k in add if k not in stored]
    vectors, embedded = _embed(embedder, [c for c, _ in new], [k for _, k in new], progress)
    dim = embedder.info.dim
    return VectorPlan(
        remove,
        np.asarray([c.id for c, _ in new], dtype=np.uint64),
        vectors,
        np.asarray([cid for cid, _ in copy], dtype=np.uint64),
        np.asarray([stored[k] for _, k in copy], dtype=np.int8).reshape(len(copy), dim),
        embedded,
    )


def _stored_vectors(old: Bundle | None, old_rows: mf.Rows, wanted: set[bytes]) -> dict[bytes, Any]:
    """The previous bundle's vectors (int8, as stored) of the texts in `wanted`, by text key,
    found among every file's text hashes (a top column: no shard is read)."""
    if old is None or old.vectors is None or not wanted:
        return {}
    found: dict[bytes, int] = {}
    for p in old_rows:
        for cid, k in zip(mf.ids_of(old_rows.top(p, "ids")).tolist(), _split_keys(old_rows.top(p, "keys")),
                          strict=True):  # fmt: skip
            if k in wanted:
                found.setdefault(k, cid)
    if not found:
        return {}
    return dict(zip(found, old.vectors.get_stored(list(found.values())), strict=True))


def _embed(embedder: Any, chunks: list[Chunk], keys: list[bytes], progress: Progress) -> tuple[Any, int]:
    """One vector per chunk (`keys` are the hashes of their texts), and how many texts ran through
    the model: a text seen earlier in this build (copied code, boilerplate) is embedded once."""
    from cora_ci.embedding import document_text

    text_of = {k: c for c, k in zip(chunks, keys, strict=True)}
    todo = sorted(set(keys))
    progress("embed", 0, len(todo))
    found: dict[bytes, Any] = {}
    for i in range(0, len(todo), _EMBED_STEP):
        part = todo[i : i + _EMBED_STEP]
        found.update(
            zip(part, embedder.embed_documents([document_text(text_of[k]) for k in part]), strict=True)
        )
        progress("embed", i + len(part), len(todo))
    vecs = np.zeros((len(keys), embedder.info.dim), dtype=np.float32)
    for i, k in enumerate(keys):
        vecs[i] = found[k]
    return vecs, len(todo)


def write_lexical(directory: Path, old: Bundle | None, files: dict[str, list[Any]], rows: mf.Rows,
                   fresh: dict[str, mf.FileEntry], deleted: set[str],
                   count: int) -> dict[str, Any]:  # fmt: skip
    """The BM25 index: only the buckets holding changed or deleted files are written anew; the
    others are hard-linked from `old` (None: a first build, or the bucket count changed)."""
    reuse = None
    if old is not None:
        touched = {bucket_of(p, count) for p in [*fresh, *deleted]}
        segments = old.manifest["lexical"]["segments"]
        reuse = (old.root / mf.BM25, [Segment(*s) if s else None for s in segments])
    else:
        touched = set(range(count))
    docs: dict[int, list[LexicalDoc]] = {b: [] for b in touched}
    for p in files["path"]:
        b = bucket_of(p, count)
        if b in touched:
            docs[b].extend(_lexical_docs(fresh[p].chunks) if p in fresh else _row_docs(rows[p]))
    segments = write_index(directory, docs, count, reuse)
    return {"buckets": count, "segments": [[s.id, s.docs] if s else None for s in segments]}


def write_shards(tmp: Path, old: Bundle | None, rows: mf.Rows, count: int,
                  changed: set[int]) -> list[str | None]:  # fmt: skip
    """The manifest's shards, one per non-empty bucket: those of `changed` buckets are written
    anew (reading the old rows they keep), the others hard-linked from `old` (None: write all),
    which keeps their recorded checksums."""
    members: dict[int, list[str]] = {}
    for p in rows:
        members.setdefault(bucket_of(p, count), []).append(p)
    (tmp / mf.SHARDS).mkdir()
    names: list[str | None] = []
    for b in range(count):
        name = mf.shard_name(b) if b in members else None
        if name is not None and old is not None and b not in changed:
            os.link(old.root / name, tmp / name)
        elif name is not None:
            (tmp / name).write_bytes(mf.pack_shard(b, count, [rows[p] for p in members[b]]))
        names.append(name)
    return names


def _lexical_docs(chunks: list[Chunk]) -> list[LexicalDoc]:
    return [_lexical_doc(c.id, c.path, c.symbols, c.anchors, c.header, c.text) for c in chunks]


def _row_docs(row: Row) -> list[LexicalDoc]:
    c = mf.unpack_blob(row["data"])["chunks"]
    cols = zip(
        mf.ids_of(row["ids"]).tolist(), c["symbols"], c["anchors"], c["header"], c["text"], strict=True
    )
    return [_lexical_doc(cid, row["path"], *vals) for cid, *vals in cols]


def _lexical_doc(
    cid: int, path: str, symbols: list[str], anchors: list[str], header: str, text: str
) -> LexicalDoc:
    names = " ".join([*symbols, *(a.split("::", 1)[-1] for a in anchors)])
    return LexicalDoc(cid, names, path, f"{header}\n{text}")


def _built_at(snap: Snapshot) -> int | None:
    """SOURCE_DATE_EPOCH if set, else the commit's time: never the wall clock, so builds reproduce."""
    env = os.environ.get("SOURCE_DATE_EPOCH")
    if env:
        try:
            return int(env)
        except ValueError:
            raise CoraError("CORA-CFG-002", f"SOURCE_DATE_EPOCH: expected an integer, got {env!r}") from None
    return snap.time


def write_graph(path: Path, files: dict[str, list[Any]], old: Bundle | None = None) -> None:
    """The whole reference graph as CSR arrays, so a query reads it in one go (~1 ms) instead of
    assembling it from every file's edges (~50 ms at 50k chunks). With `old`, the bundle this one
    updates, only the files whose chunks or edges changed are unpacked; everyone else's edges are
    taken from `old`'s graph as they are (~0.2 s saved per update at 10k files)."""
    from cora_ci.bundle import csr_of_files
    from cora_ci.graph.build import pack_csr

    ids = mf.ids_of(b"".join(files["ids"]))
    if old is not None and mf.GRAPH in old.manifest["artifacts"]:
        changed, prior = _unchanged_edges(old, files)
        path.write_bytes(pack_csr(csr_of_files(changed, ids, prior)))
    else:
        path.write_bytes(pack_csr(csr_of_files(files, ids)))


def _unchanged_edges(old: Bundle, files: dict[str, list[Any]]) -> tuple[dict[str, list[Any]], Any]:
    """The file table's rows whose chunks or edges differ from `old`'s, and `old`'s graph edges
    without those leaving the chunks of changed or removed files. `csr_of_files` of the two is
    `csr_of_files(files)`, order included: a chunk's edges all come from its one file, in that
    file's order either way, and stored edges only ever reach chunks that exist (an update's
    manifest equals a full build's)."""
    import numpy as np

    was = old.manifest["files"]
    before = dict(zip(was["path"], zip(was["ids"], was["edges"], strict=True), strict=True))
    now = dict(zip(files["path"], zip(files["ids"], files["edges"], strict=True), strict=True))
    changed = [p for p, v in now.items() if before.get(p) != v]
    dropped = [mf.ids_of(before[p][0]) for p in [*changed, *(before.keys() - now.keys())] if p in before]
    g = old.graph_csr
    src, dst, w = np.repeat(g.ids, np.diff(g.indptr)), g.ids[g.indices], g.weights
    if dropped:
        keep = ~np.isin(src, np.concatenate(dropped))
        src, dst, w = src[keep], dst[keep], w[keep]
    table = {"ids": [now[p][0] for p in changed], "edges": [now[p][1] for p in changed]}
    return table, (src, dst, w)


def _header(snap: Snapshot, cfg: Config, model: dict[str, Any] | None,
            cut: dict[str, Any] | None) -> dict[str, Any]:  # fmt: skip
    """The manifest's fields about the build rather than its files (see `HEADER`); a shard's has
    `shard` too, after `source`."""
    chunk_cfg = asdict(cfg)
    for k in ("include", "exclude", "source", "model"):
        chunk_cfg.pop(k)
    header = {
        "format": mf.FORMAT,
        "format_version": ".".join(map(str, mf.FORMAT_VERSION)),
        "tool_version": __version__,
        "built_at": _built_at(snap),
        "source": _source(snap),
        "shard": cut,
        "model": model,
        "chunker": {
            "hash": cfg.chunker_hash(),
            "config": chunk_cfg,
            "include": list(cfg.include),
            "exclude": list(cfg.exclude),
        },
        "boosts": list(snap.boosts),
    }
    if cut is None:
        del header["shard"]
    return header


# The header's keys in manifest order (`shard` only in a shard's bundle).
HEADER = ("format", "format_version", "tool_version", "built_at", "source", "shard", "model", "chunker",
          "boosts")  # fmt: skip


def assemble_manifest(header: dict[str, Any], files: dict[str, list[Any]], lexical: dict[str, Any],
                      shards: list[str | None]) -> dict[str, Any]:  # fmt: skip
    """The manifest (without `artifacts`, which `write_bundle` adds): the header, then what the
    file table gives (counts, files, shards) and the BM25 buckets."""
    indexed = [i for i, st in enumerate(files["strategy"]) if st is not None]
    return {
        **header,
        "stats": {
            "files": len(indexed),
            "skipped": len(files["path"]) - len(indexed),
            "chunks": sum(len(b) // 8 for b in files["ids"]),
            "source_bytes": sum(files["size"][i] for i in indexed),
        },
        "files": {k: files[k] for k in mf.TOP_COLUMNS},
        "shards": shards,
        "lexical": lexical,
    }
