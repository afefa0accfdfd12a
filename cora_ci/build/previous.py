"""The previous bundle: whether a build may update it, and relabelling it when no file changed.

An update starts from the bundle it replaces: `reusable` says whether it may (same major format,
chunker config, model and shard), `same_files` whether the new source holds exactly its files,
in which case `relabel` rewrites only what the manifest says of the build and hard-links the rest.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

from cora_ci import verified
from cora_ci.build.common import Summary, linked_artifacts, model_name, shard_label, source_label
from cora_ci.build.header import header
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.store import write_bundle
from cora_ci.config import Config
from cora_ci.errors import CoraError
from cora_ci.files.source import Snapshot


def open_previous(out: Path) -> tuple[Bundle | None, str]:
    """The bundle at `out`, or None and why there is none to update."""
    if not (out / mf.MANIFEST).is_file():
        return None, "" if not out.exists() else "no readable bundle"
    try:
        return open_bundle(out), ""
    except CoraError as e:
        return None, f"previous bundle unusable ({e.code}: {e.message})"


def model_of(old: Bundle | None) -> str:
    """The model of a build whose `--model` and config name none: the previous bundle's when it is
    a bundled one or none (`index --model static` once, then a hook's plain `index`, goes on with
    static instead of rebuilding with another model), else the default."""
    from cora_ci.embedding.loading import bundled_named

    if old is None:
        return "default"
    info = old.manifest["model"]
    return "none" if info is None else bundled_named(str(info.get("model_sha256", ""))) or "default"


def embedder_for(spec: str, root: Path) -> Any:
    """The embedder a model spec names (a bundled model is loaded on first use); a relative
    directory is taken from the source's root when it is there."""
    from cora_ci.embedding import MODELS, deferred_embedder

    if spec not in ("default", "none", *MODELS) and not Path(spec).is_absolute():
        spec = str(root / spec) if (root / spec).exists() else spec
    return deferred_embedder(spec)


def reusable(old: Bundle, cfg: Config, model: dict[str, Any] | None,
             cut: dict[str, Any] | None) -> tuple[Bundle | None, str]:  # fmt: skip
    """`old` if this build may update it, else None and the reason for building from scratch."""
    m = old.manifest
    if mf.parse_version(m["format_version"]) != mf.FORMAT_VERSION:  # a minor too: a full build's bytes
        return None, f"bundle format {m['format_version']} -> {'.'.join(map(str, mf.FORMAT_VERSION))}"
    if m["chunker"]["hash"] != cfg.chunker_hash():
        return None, "chunker or its config changed"
    if m["model"] != model:
        name = (model or {}).get("name", "none")
        return None, f"model changed ({(m['model'] or {}).get('name', 'none')} -> {name})"
    was, now = shard_label(m.get("shard")), shard_label(cut)
    if was != now:
        return None, f"shard changed ({was} -> {now})"
    known = old.id if old.records else None
    kinds = (verified.BM25_CHECK, "vectors") if old.model is not None else (verified.BM25_CHECK,)
    if not all(verified.checked(kind, known) for kind in kinds):  # a bundle without vectors has none to check
        _ = old.lexical, old.vectors  # checked against the manifest before reuse (else `build` rebuilds)
    return old, ""


def same_files(old: Bundle, snap: Snapshot) -> bool:
    files = old.manifest["files"]
    return dict(zip(files["path"], files["blob"], strict=True)) == {e.path: e.blob for e in snap.entries}


def relabel(old: Bundle, snap: Snapshot, out: Path, t0: float, embedder: Any,
            cut: dict[str, Any] | None) -> Summary:  # fmt: skip
    """No file changed (a new commit that touched nothing indexed, a sync right after the
    pre-commit update, a rerun, a commit outside this shard): keep both indexes as they are,
    hard-linked, and rewrite only what the manifest says of the build (source, time, boosts, the
    config's include and exclude), or nothing at all when that is unchanged too."""
    m = old.manifest
    fresh = header(snap, snap.config, m["model"], cut)
    new = {k: fresh[k] for k in _RELABELLED if k in fresh}
    size = None
    if mf.pack({k: m.get(k) for k in new}) != mf.pack(new):  # as stored: a tuple and its list are alike

        def fill(tmp: Path) -> dict[str, Any]:
            for sub in sorted({rel.rpartition("/")[0] for rel in m["artifacts"]} - {""}):
                (tmp / sub).mkdir(parents=True, exist_ok=True)
            src, dst = os.fspath(old.root), os.fspath(tmp)
            for rel in m["artifacts"]:
                os.link(os.path.join(src, rel), os.path.join(dst, rel))
            return {**m, **new}

        size = write_bundle(out, fill, linked_artifacts(old))
    stats = m["stats"]
    indexed = [lang for lang, st in zip(m["files"]["lang"], m["files"]["strategy"], strict=True) if st]
    return Summary(
        out=out, files=stats["files"], skipped=stats["skipped"], chunks=stats["chunks"],
        source_bytes=stats["source_bytes"],
        bundle_bytes=size if size is not None else _bundle_bytes(out, m),
        languages=dict(sorted(Counter(indexed).items())),
        seconds=time.perf_counter() - t0, stages={"list": time.perf_counter() - t0},
        model=model_name(embedder), source=source_label(snap, cut),
    )  # fmt: skip


# What a build with the same files, chunker and model may still record differently (`header.HEADER`).
_RELABELLED = ("built_at", "source", "shard", "chunker", "boosts")


def _bundle_bytes(out: Path, manifest: dict[str, Any]) -> int:
    """The listed files' sizes and the manifest's own two files (no walk of ~1,000 files)."""
    own = sum(os.stat(out / name).st_size for name in (mf.MANIFEST, mf.MANIFEST_SUM))
    return own + sum(int(a["size"]) for a in manifest["artifacts"].values())
