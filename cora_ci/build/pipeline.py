"""The indexing pipeline: source snapshot -> chunks -> reference graph -> vectors -> bundle.

Each stage is a function of its own package; this module only wires them and reports progress
through a callback, so the CLI decides how progress looks (a bar on a terminal, lines in CI logs).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from cora_ci import verified
from cora_ci.build.chunks import (
    Note,
    check_unique_ids,
    chunk_all,
    file_row,
    link_files,
    notes_of,
)
from cora_ci.build.common import Progress, quiet
from cora_ci.build.vectors import VectorPlan, plan_vectors, text_keys
from cora_ci.build.writers import (
    assemble_manifest,
    built_at,
    header,
    source_fields,
    write_graph,
    write_lexical,
    write_shards,
)
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.manifest import bucket_count, bucket_of
from cora_ci.bundle.store import update_lock, write_bundle
from cora_ci.bundle.tables import Rows
from cora_ci.config import Config
from cora_ci.errors import CoraError
from cora_ci.files.shard import ShardSpec, assign, tree_digest
from cora_ci.files.source import Snapshot, snapshot


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
    notes: list[Note] = field(default_factory=list)  # this run's diagnostics, what was left out first


def build(repo: Path, out: Path | None = None, *, kind: str | None = None, rev: str | None = None,
          model: str | None = None, config_file: Path | None = None, full: bool = False,
          progress: Progress = quiet, shard: ShardSpec | None = None) -> Summary:  # fmt: skip
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
    spec = model or cfg.model
    # the previous bundle is read to update it, or for its model when none is named
    old, rebuilt = (None, "") if full and spec else _open_previous(out)
    embedder = _embedder(spec or _model_of(old), snap.root)
    info = asdict(embedder.info) if embedder is not None else None
    if full:
        old, rebuilt = None, full
    elif old is not None:
        old, rebuilt = _reusable(old, cfg, info, cut)
    if old is not None and _same_files(old, snap):
        return _refresh_source(old, snap, out, t0, embedder, cut)
    stages["list"] = time.perf_counter() - t0
    old_shards = old.shards if old is not None else None
    old_rows = Rows(old_shards)
    same = [e.path for e in snap.entries if e.path in old_rows and old_rows.top(e.path, "blob") == e.blob]
    kept = Rows(old_shards, same)
    fresh = chunk_all(snap, cfg, progress, stages, [e for e in snap.entries if e.path not in kept])
    check_unique_ids(kept, fresh)
    t = time.perf_counter()
    keys = {p: text_keys(f.chunks) if embedder is not None else b"" for p, f in fresh.items()}
    t_keys = time.perf_counter() - t
    t = time.perf_counter()
    from cora_ci.graph.build import file_links
    from cora_ci.graph.extract import FileRefs  # with the parsers: only when files were chunked

    links = {p: file_links(f.chunks, FileRefs(f.imports, f.refs)) for p, f in fresh.items()}
    rows = Rows(old_shards, kept)
    for p, f in fresh.items():
        rows.put(file_row(f, links[p], keys[p]))
    for p, e in link_files(old_rows, kept, rows, links).items():
        rows.set_top(p, "edges", e)  # a top column: an unchanged file's shard is not read
    stages["graph"] = time.perf_counter() - t
    t = time.perf_counter()
    vec = plan_vectors(embedder, old, old_rows, kept, fresh, keys, progress) if embedder is not None else None
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
            _write_vectors(tmp, old, vec)
        write_graph(tmp / mf.GRAPH, files, old)
        progress("write", 1, 1)
        return assemble_manifest(header(snap, cfg, info, cut), files, lexical, shards)

    t = time.perf_counter()
    size = write_bundle(out, fill, _linked_artifacts(old))
    stages["write"] = time.perf_counter() - t
    indexed = [i for i, st in enumerate(files["strategy"]) if st is not None]
    notes = notes_of(fresh.values())
    notes[:0] = [Note("(a file name)", None, "CORA-SEC-004", f"{kind} in a file's name: file left out")
                 for kind in snap.withheld]  # fmt: skip
    return Summary(
        out=out, files=len(indexed), skipped=len(files["path"]) - len(indexed),
        chunks=sum(len(b) // 8 for b in files["ids"]), embedded=vec.embedded if vec is not None else 0,
        rechunked=len(fresh), removed=len(deleted), rebuilt=rebuilt,
        source_bytes=sum(files["size"][i] for i in indexed), bundle_bytes=size,
        diagnostics=len(notes), notes=notes,
        languages=dict(sorted(Counter(files["lang"][i] for i in indexed).items())),
        seconds=time.perf_counter() - t0, stages=stages, model=_model_name(embedder),
        source=_label(snap, cut),
    )  # fmt: skip


def _write_vectors(tmp: Path, old: Bundle | None, vec: VectorPlan) -> None:
    """The vector file of the new bundle: the previous one hard-linked when no vector changed (a
    commit of files that hold no chunk, or whose chunks kept their texts); else updated from it,
    or written anew."""
    if old is not None and old.model is not None and not (vec.remove or len(vec.ids) or len(vec.stored_ids)):
        os.link(old.root / mf.CODES, tmp / mf.CODES)
        return
    from cora_ci.bundle.vectors import update_vectors, write_vectors

    if old is not None and old.model is not None:
        batches = [(vec.ids, vec.vectors), (vec.stored_ids, vec.stored)]
        update_vectors(old.root, tmp, vec.remove, batches)
    else:
        write_vectors(tmp, vec.ids, vec.vectors)  # nothing stored to copy


def _linked_artifacts(old: Bundle | None) -> tuple[Path, dict[str, Any], dict[str, list[Any]]] | None:
    """The previous bundle's checksums and verified records, for files the new one hard-links
    instead of writing."""
    return (old.root, old.manifest["artifacts"], old.records) if old is not None else None


def _bundle_bytes(out: Path, manifest: dict[str, Any]) -> int:
    """The listed files' sizes and the manifest's own two files (no walk of ~1,000 files)."""
    own = sum(os.stat(out / name).st_size for name in (mf.MANIFEST, mf.MANIFEST_SUM))
    return own + sum(int(a["size"]) for a in manifest["artifacts"].values())


def _model_name(embedder: Any) -> str:
    return embedder.info.name if embedder is not None else "none"


def _label(snap: Snapshot, cut: dict[str, Any] | None) -> str:
    """What was indexed, for people: `rev 1a2b3c4d5e6f`, `staged 1a2b...`, `dir`, `rev 1a2b..., shard 2/4`."""
    label = f"{snap.kind} {snap.commit[:12] if snap.commit else ''}".strip()
    if snap.kind == "dir":
        label = "dir (not a git repository: its files as they are)"
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
    source = source_fields(snap)
    new = {"source": source, "built_at": built_at(snap), "boosts": list(snap.boosts)}
    if cut is not None:
        new["shard"] = cut
    size = None
    if any(m.get(k) != v for k, v in new.items()):

        def fill(tmp: Path) -> dict[str, Any]:
            for rel in m["artifacts"]:
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                os.link(old.root / rel, tmp / rel)
            return {**m, **new}

        size = write_bundle(out, fill, _linked_artifacts(old))
    stats = m["stats"]
    indexed = [lang for lang, st in zip(m["files"]["lang"], m["files"]["strategy"], strict=True) if st]
    return Summary(
        out=out, files=stats["files"], skipped=stats["skipped"], chunks=stats["chunks"],
        source_bytes=stats["source_bytes"],
        bundle_bytes=size if size is not None else _bundle_bytes(out, m),
        languages=dict(sorted(Counter(indexed).items())),
        seconds=time.perf_counter() - t0, stages={"list": time.perf_counter() - t0},
        model=_model_name(embedder), source=_label(snap, cut),
    )  # fmt: skip


def _open_previous(out: Path) -> tuple[Bundle | None, str]:
    """The bundle at `out`, or None and why there is none to update."""
    if not (out / mf.MANIFEST).is_file():
        return None, "" if not out.exists() else "no readable bundle"
    try:
        return open_bundle(out), ""
    except CoraError as e:
        return None, f"previous bundle unusable ({e.code}: {e.message})"


def _model_of(old: Bundle | None) -> str:
    """The model of a build whose `--model` and config name none: the previous bundle's when it is
    a bundled one or none (`index --model static` once, then a hook's plain `index`, goes on with
    static instead of rebuilding with another model), else the default."""
    from cora_ci.embedding.loading import bundled_named

    if old is None:
        return "default"
    info = old.manifest["model"]
    return "none" if info is None else bundled_named(str(info.get("model_sha256", ""))) or "default"


def _reusable(old: Bundle, cfg: Config, model: dict[str, Any] | None,
              cut: dict[str, Any] | None) -> tuple[Bundle | None, str]:  # fmt: skip
    """`old` if this build may update it, else None and the reason for building from scratch."""
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
    known = old.id if old.records else None
    if not all(verified.checked(kind, known) for kind in (verified.BM25_CHECK, "vectors")):
        _ = old.lexical, old.vectors  # checked against the manifest before reuse (else `build` rebuilds)
    return old, ""


def _embedder(spec: str, root: Path) -> Any:
    from cora_ci.embedding import MODELS, deferred_embedder

    if spec not in ("default", "none", *MODELS) and not Path(spec).is_absolute():
        spec = str(root / spec) if (root / spec).exists() else spec
    return deferred_embedder(spec)
