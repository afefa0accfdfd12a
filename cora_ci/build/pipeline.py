"""The indexing pipeline: source snapshot -> chunks -> reference graph -> vectors -> bundle.

Each stage is a function of its own package; this module decides what a run must do (list the
source in full or only what changed since the previous bundle, then relabel, update or build, see
`previous`) and `update` does it, reporting progress through a callback, so the CLI decides how
progress looks (a bar on a terminal, lines in CI logs).
"""

from __future__ import annotations

import time
from dataclasses import asdict, replace
from functools import cache
from pathlib import Path
from typing import Any

from cora_ci.build.common import Progress, Summary, collection_paused, quiet
from cora_ci.build.previous import embedder_for, model_of, open_previous, relabel, reusable, same_files
from cora_ci.bundle import Bundle
from cora_ci.errors import CoraError
from cora_ci.files.changes import commit_settings, snapshot_since
from cora_ci.files.shard import ShardSpec, assign, tree_digest
from cora_ci.files.source import Snapshot, screen, snapshot
from cora_ci.lock import update_lock


def build(repo: Path, out: Path | None = None, *, kind: str | None = None, rev: str | None = None,
          model: str | None = None, config_file: Path | None = None, full: bool = False,
          progress: Progress = quiet, shard: ShardSpec | None = None,
          wait: float = 0.0) -> Summary:  # fmt: skip
    """Index `repo` into the bundle `out` (default `<repo root>/.cora/index`).

    An existing bundle is updated: files whose git blob id is unchanged keep their chunks, and
    every chunk whose embedded text is unchanged keeps its vector, wherever it moved. A change of
    chunker config, model, shard or major format rebuilds from scratch, as does `full`. `shard`
    indexes only that shard's files of the tree (see `cora_ci.files.shard`). A commit whose
    bundle is the previous commit's (a hook's, a CI job's) lists only what changed since. An
    update already running is waited for up to `wait` seconds, then CORA-BND-007.
    """
    t0 = time.perf_counter()
    plain = kind in (None, "rev") and not (config_file or full or shard)
    settings = commit_settings(repo, rev) if plain else None

    @cache
    def listed() -> tuple[Snapshot, dict[str, Any] | None]:
        with collection_paused():
            return _cut(snapshot(repo, kind, rev, out, config_file, screen_now=shard is not None), shard)

    root = settings.root if settings is not None else listed()[0].root
    target = out if out is not None else root / ".cora" / "index"
    with update_lock(target, wait):
        try:
            if settings is not None and (done := _since_previous(settings, target, model, progress, t0)):
                return done
            return _build(*listed(), target, model, "--full" if full else None, progress, t0)
        except CoraError as e:  # the previous bundle is damaged where the update read it: rebuild
            if full or e.code not in _DAMAGED:
                raise
            return _build(*listed(), target, model, f"previous bundle unusable ({e.code}: {e.message})",
                          progress, t0)  # fmt: skip


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


def _since_previous(settings: Snapshot, out: Path, model: str | None, progress: Progress,
                    t0: float) -> Summary | None:  # fmt: skip
    """The update of the bundle at `out` to the commit of `settings` from what changed since the
    commit it was built from, or None when that cannot be done (no such bundle, one of the staged
    files or of a shard, one to rebuild, a tree git lacks, a config file changed): then the
    source is listed in full. At 30,000 files the full listing alone costs ~0.3 s."""
    with collection_paused():
        old, _, embedder = _previous(settings, out, model, None, None)  # a shard's is not reusable here
        source = old.manifest["source"] if old is not None else {}
        if old is None or source.get("kind") != "rev":
            return None
        files = dict(zip(old.manifest["files"]["path"], old.manifest["files"]["blob"], strict=True))
        snap = snapshot_since(settings, files, str(source.get("tree")), out)
    if snap is None:
        return None
    return replace(_apply(snap, out, old, embedder, "", progress, t0, None), since=str(source["tree"]))


def _build(snap: Snapshot, cut: dict[str, Any] | None, out: Path, model: str | None, full: str | None,
           progress: Progress, t0: float) -> Summary:  # fmt: skip
    """Build or update from a full listing; `full` (the reason) builds from scratch."""
    with collection_paused():
        old, rebuilt, embedder = _previous(snap, out, model, cut, full)
    return _apply(snap, out, old, embedder, rebuilt, progress, t0, cut)


def _previous(snap: Snapshot, out: Path, model: str | None, cut: dict[str, Any] | None,
              full: str | None) -> tuple[Bundle | None, str, Any]:  # fmt: skip
    """The bundle at `out` if this build may update it (else None and why), and the embedder:
    `model`, else the config's, else the bundle's own (`model_of`). `full` (the reason) updates
    nothing; the bundle is still read for its model when none is named."""
    spec = model or snap.config.model
    old, rebuilt = (None, "") if full and spec else open_previous(out)
    embedder = embedder_for(spec or model_of(old), snap.root)
    if full:
        return None, full, embedder
    info = asdict(embedder.info) if embedder is not None else None
    if old is not None:
        old, rebuilt = reusable(old, snap.config, info, cut)
    return old, rebuilt, embedder


def _apply(snap: Snapshot, out: Path, old: Bundle | None, embedder: Any, rebuilt: str, progress: Progress,
           t0: float, cut: dict[str, Any] | None) -> Summary:  # fmt: skip
    """Relabel `old` when `snap` holds exactly its files, else write the changes (everything when
    `old` is None). A snapshot not screened yet is first compared as it is: the bundle's own files
    passed the screen when it was built, and only paths it does not hold are screened."""
    known = set(old.manifest["files"]["path"]) if old is not None else set()
    if old is not None and (same_files(old, snap) or same_files(old, snap := screen(snap, known))):
        return relabel(old, snap, out, t0, embedder, cut)
    from cora_ci.build.update import write_changes  # chunkers, parsers, tantivy: only for changes

    return write_changes(screen(snap, known), out, old, embedder, rebuilt, progress, t0, cut)
