"""The manifest's fields about a build rather than its files: source, model, chunker config.

Apart from the writers, which need tantivy and numpy, because relabelling a bundle to a new commit
that changed none of its files needs only these.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any

from cora_ci import __version__
from cora_ci.bundle import manifest as mf
from cora_ci.config import Config
from cora_ci.errors import CoraError
from cora_ci.files.source import Snapshot


def source_fields(snap: Snapshot) -> dict[str, Any]:
    return {
        "root": snap.root.name,
        "kind": snap.kind,
        "commit": snap.commit,
        "tree": snap.tree,
        "dirty": snap.dirty,
    }


def built_at(snap: Snapshot) -> int | None:
    """SOURCE_DATE_EPOCH if set, else the commit's time: never the wall clock, so builds reproduce."""
    env = os.environ.get("SOURCE_DATE_EPOCH")
    if env:
        try:
            return int(env)
        except ValueError:
            raise CoraError("CORA-CFG-002", f"SOURCE_DATE_EPOCH: expected an integer, got {env!r}") from None
    return snap.time


def header(snap: Snapshot, cfg: Config, model: dict[str, Any] | None,
            cut: dict[str, Any] | None) -> dict[str, Any]:  # fmt: skip
    """The manifest's fields about the build rather than its files (see `HEADER`); a shard's has
    `shard` too, after `source`."""
    chunk_cfg = asdict(cfg)
    for k in ("include", "exclude", "source", "model", "bundles"):
        chunk_cfg.pop(k)
    header = {
        "format": mf.FORMAT,
        "format_version": ".".join(map(str, mf.FORMAT_VERSION)),
        "tool_version": __version__,
        "built_at": built_at(snap),
        "source": source_fields(snap),
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
