"""`cora-ci merge`: the bundles of shards 1..N of one tree -> the bundle a full build of it gives.

A file's row (chunks, texts, name filters, links, diagnostics) depends on that file
alone, so each shard's rows are taken as they are. What depends on other files is redone over
all of them: the graph edges (a shard could not resolve a call into another shard's file; this
runs the full build's own `link_files` over the links every row stores, then writes the CSR
graph from them), the BM25 buckets and manifest shards (their number follows the total chunk
count and each mixes files of every shard, so they are written from the rows' texts), and the
vector index (vectors copied as stored, as codes, never embedded again, in the merged manifest's
chunk order as a full build writes them). The result is byte for byte the bundle `cora-ci index
--full` writes for that tree, and updates like any other.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cora_ci.build.chunks import link_files
from cora_ci.build.header import HEADER, assemble_manifest
from cora_ci.build.writers import bucket_map, write_graph, write_lexical, write_shards
from cora_ci.bundle import Bundle, open_bundle
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.manifest import bucket_count
from cora_ci.bundle.store import write_bundle
from cora_ci.bundle.tables import Rows
from cora_ci.errors import CoraError
from cora_ci.files.shard import tree_digest
from cora_ci.lock import update_lock

# What shards of one build share, with how a difference reads.
_SAME = (
    ("source", "were cut from different trees"),
    ("built_at", "were cut from different trees (built_at)"),
    ("boosts", "were cut from different trees (.cora-boosts)"),
    ("model", "were built with different models"),
    ("chunker", "were built with different chunker configs"),
    ("tool_version", "were built by different cora-ci versions"),
    ("format_version", "have different bundle formats"),
)


@dataclass
class MergeSummary:
    out: Path
    shards: int
    files: int
    chunks: int
    source: str  # `rev 1a2b3c4d5e6f`
    seconds: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)


def merge(paths: Sequence[Path], out: Path) -> MergeSummary:
    """Merge the shard bundles (directories or archives) at `paths` into the bundle `out`."""
    t0 = time.perf_counter()
    stages: dict[str, float] = {}
    bundles = in_order([open_bundle(p) for p in paths], paths)
    first = bundles[0].manifest
    with update_lock(out):
        t = time.perf_counter()
        rows = _rows(bundles)
        stages["read"] = time.perf_counter() - t
        t = time.perf_counter()
        edges = link_files(Rows(), Rows(), rows, list(rows))
        stages["graph"] = time.perf_counter() - t
        files = rows.top_table()
        ids = mf.ids_of(b"".join(files["ids"]))  # the merged chunk table's order: vectors and graph
        chunks = len(ids)
        count = bucket_count(chunks)
        header = {k: first[k] for k in HEADER if k in first and k != "shard"}

        def fill(tmp: Path) -> dict[str, Any]:
            t = time.perf_counter()
            buckets = bucket_map(files["path"], count)
            lexical = write_lexical(tmp / mf.BM25, None, files, rows, (), count, buckets)
            names = write_shards(tmp, None, rows, count, (), buckets)
            stages["bm25"] = time.perf_counter() - t
            t = time.perf_counter()
            if first["model"] is not None:
                from cora_ci.bundle.vectors import write_vectors

                write_vectors(tmp, ids, *_stored_vectors(bundles, first["model"]["dim"]))
            stages["vectors"] = time.perf_counter() - t
            write_graph(tmp / mf.GRAPH, files, ids, edges)
            return assemble_manifest(header, files, lexical, names)

        t = time.perf_counter()
        write_bundle(out, fill)
        stages["write"] = time.perf_counter() - t - stages["bm25"] - stages["vectors"]
    src = first["source"]
    label = f"{src['kind']} {(src['commit'] or '')[:12]}".strip()
    return MergeSummary(
        out, len(bundles), len(files["path"]), chunks, label, time.perf_counter() - t0, stages
    )


def _fail(message: str) -> CoraError:
    return CoraError("CORA-BND-011", message)


def in_order(bundles: list[Bundle], paths: Sequence[Path]) -> list[Bundle]:
    """The bundles sorted by shard index, after checking that they are shards 1..N of one build:
    same tree, model, chunker config, cora-ci version and N, each index exactly once."""
    if not bundles:
        raise _fail("no shard bundle given")
    for b, p in zip(bundles, paths, strict=True):
        if "shard" not in b.manifest:
            raise CoraError(
                "CORA-BND-011", f"{p} is not a shard bundle", "give bundles of `cora-ci index --shard I/N`"
            )
    a, pa = bundles[0].manifest, paths[0]
    for b, pb in zip(bundles[1:], paths[1:], strict=True):
        m = b.manifest
        for key, what in _SAME:
            if m[key] != a[key]:
                raise _fail(f"{pa} and {pb} {what}: {_brief(key, a[key])} vs {_brief(key, m[key])}")
        if (m["shard"]["files"], m["shard"]["digest"]) != (a["shard"]["files"], a["shard"]["digest"]):
            raise _fail(f"{pa} and {pb} were cut from different trees: their file lists differ")
        if m["shard"]["count"] != a["shard"]["count"]:
            raise _fail(f"{pa} and {pb} are shards of different splits: "
                        f"{_spec(a)} vs {_spec(m)}")  # fmt: skip
    seen: dict[int, Path] = {}
    for b, p in zip(bundles, paths, strict=True):
        i = b.manifest["shard"]["index"]
        if i in seen:
            raise _fail(f"shard {_spec(b.manifest)} given twice: {seen[i]} and {p}")
        seen[i] = p
    n = a["shard"]["count"]
    missing = [f"{i}/{n}" for i in range(1, n + 1) if i not in seen]
    if missing:
        raise _fail(f"shard {', '.join(missing)} missing (got {len(seen)} of {n})")
    return sorted(bundles, key=lambda b: int(b.manifest["shard"]["index"]))


def _spec(m: dict[str, Any]) -> str:
    return f"{m['shard']['index']}/{m['shard']['count']}"


def _brief(key: str, value: Any) -> str:
    """A difference, short: a commit, a model's name, a config hash."""
    if key == "source":
        return f"{value['kind']} {(value['commit'] or '')[:12]} tree {str(value['tree'])[:12]}"
    if key == "model":
        return "none" if value is None else f"{value['name']} ({str(value.get('model_sha256'))[:12]})"
    if key == "chunker":
        return str(value["hash"])[:12]
    return str(value)


def _rows(bundles: list[Bundle]) -> Rows:
    """Every file's row from its shard (reads every manifest shard), checked to make up exactly
    the tree the shards were cut from."""
    rows = Rows()
    where: dict[str, str] = {}
    for b in bundles:
        for fi, path in enumerate(b.manifest["files"]["path"]):
            if path in where:
                raise _fail(f"{path} is in shards {where[path]} and {_spec(b.manifest)}")
            where[path] = _spec(b.manifest)
            rows.put(b.shards.row(fi))
    cut = bundles[0].manifest["shard"]
    if tree_digest([(p, rows.top(p, "blob")) for p in rows]) != cut["digest"]:
        raise _fail(f"the shards' {len(rows)} files are not the {cut['files']} files they were cut from")
    return rows


def _stored_vectors(bundles: list[Bundle], dim: int) -> tuple[Any, Any]:
    """Every chunk's vector exactly as its shard stores it (its code), with the chunk ids."""
    from cora_ci.bundle.vectors import width

    ids, vecs = [np.zeros(0, dtype=np.uint64)], [np.zeros((0, width(dim)), dtype=np.uint8)]
    for b in bundles:
        if b.vectors is not None and len(b.chunks):
            ids.append(b.chunks.id_array)
            vecs.append(b.vectors.get_stored(b.chunks.ids))
    return np.concatenate(ids), np.concatenate(vecs)
