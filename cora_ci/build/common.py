"""What the build's stages share: a manifest row, the progress callback, a build's summary."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from cora_ci.bundle import Bundle
    from cora_ci.files.source import Snapshot

Row = dict[str, Any]  # one file's row of the manifest's file table

Progress = Callable[[str, int, int], None]  # stage, done, total


def quiet(stage: str, done: int, total: int) -> None:
    pass


class Note(NamedTuple):
    """A diagnostic of a build, for its summary: where, its code, what."""

    path: str
    line: int | None
    code: str
    message: str


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
    since: str = ""  # the previous bundle's tree, when only what changed since it was listed


def model_name(embedder: Any) -> str:
    return embedder.info.name if embedder is not None else "none"


def source_label(snap: Snapshot, cut: dict[str, Any] | None) -> str:
    """What was indexed, for people: `rev 1a2b3c4d5e6f`, `staged 1a2b...`, `dir`, `rev 1a2b..., shard 2/4`."""
    label = f"{snap.kind} {snap.commit[:12] if snap.commit else ''}".strip()
    if snap.kind == "dir":
        label = "dir (not a git repository: its files as they are)"
    return f"{label}, shard {shard_label(cut)}" if cut else label


def shard_label(cut: dict[str, Any] | None) -> str:
    """`2/4`, or `full` for a bundle of the whole tree."""
    return f"{cut['index']}/{cut['count']}" if cut else "full"


def linked_artifacts(old: Bundle | None) -> tuple[Path, dict[str, Any], dict[str, list[Any]]] | None:
    """The previous bundle's checksums and verified records, for files the new one hard-links
    instead of writing."""
    return (old.root, old.manifest["artifacts"], old.records) if old is not None else None


@contextmanager
def collection_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a build lists the files and opens the previous bundle,
    and while an update writes: they make objects as many as the repository's files (the top
    manifest's ~330k at 30,000 files, every file's row and name filter, the graph's arrays), no
    garbage cycles, which the collector walked again and again for nothing (60-80 ms of a one-file
    update at 30,000 files while listing, 58-79 ms while writing; nothing measurable at 3,000). As
    it was afterwards (the `index` and `hook` commands keep it off for the whole process)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
