"""`cora-ci info` and `cora-ci verify`: what a bundle holds, and whether all of it is intact."""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cora_ci.bundle import Bundle, open_bundle
from cora_ci.bundle import manifest as mf
from cora_ci.bundle.lexical import rebuilt_problems
from cora_ci.bundle.store import artifact_problem, read_manifest, resolve
from cora_ci.errors import LEFT_OUT, CoraError


def describe(b: Bundle) -> dict[str, Any]:
    m = b.manifest
    kinds = Counter(b.chunks.column("kind"))  # first: refuses an older format's manifest
    files = m["files"]
    langs = Counter(lang for lang, s in zip(files["lang"], files["strategy"], strict=True) if s is not None)
    sizes = {rel: a["size"] for rel, a in m["artifacts"].items()}
    total = sum(sizes.values()) + sum(
        p.stat().st_size for p in (b.root / mf.MANIFEST, b.root / mf.MANIFEST_SUM)
    )
    return {
        "path": str(b.root),
        "format": m["format"],
        "format_version": m["format_version"],
        "tool_version": m["tool_version"],
        "built_at": m["built_at"],
        "source": m["source"],
        "shard": m.get("shard"),  # None for a bundle of the whole tree
        "model": m["model"],
        "chunker": m["chunker"],
        "stats": m["stats"],
        "languages": dict(sorted(langs.items())),
        "kinds": dict(sorted(kinds.items())),
        "graph_edges": len(b.graph.indices),
        "bm25_documents": b.lexical.num_docs,  # both indexes opened: checked against the manifest
        "vectors": b.vectors.size if b.vectors is not None else None,
        "bytes": {"total": total, "manifest": (b.root / mf.MANIFEST).stat().st_size, **sizes},
        "parts": parts(sizes, total),
    }


# What `info` reports the bytes of: each part of a bundle, by the artifacts it is made of.
PARTS: dict[str, Callable[[str], bool]] = {
    f"{mf.CODES} (2-bit codes)": lambda rel: rel == mf.CODES,
    "bm25/": lambda rel: rel.startswith(mf.BM25 + "/"),
    "shards/ (chunks and texts)": lambda rel: rel.startswith(mf.SHARDS + "/"),
    mf.GRAPH: lambda rel: rel == mf.GRAPH,
}


def parts(sizes: dict[str, int], total: int) -> dict[str, int]:
    """Bytes per part of the bundle (`PARTS`, indented names are within the one above); the top
    manifest and its checksum are the rest."""
    out = {name: sum(n for rel, n in sizes.items() if test(rel)) for name, test in PARTS.items()}
    out = {name: n for name, n in out.items() if n}
    out["manifest"] = total - sum(n for name, n in out.items() if not name.startswith(" "))
    return out


def describe_text(d: dict[str, Any]) -> list[str]:
    src, model, stats = d["source"], d["model"], d["stats"]
    mb = stats["source_bytes"] / 1e6
    ratio = d["bytes"]["total"] / stats["source_bytes"] if stats["source_bytes"] else 0.0
    commit = (src["commit"] or "")[:12]
    dirty = " (dirty)" if src["dirty"] else ""
    shard = d["shard"]
    cut = (
        [f"shard    {shard['index']}/{shard['count']} of the tree's {shard['files']} files"] if shard else []
    )
    return [
        f"bundle   {d['path']}  ({d['format']} {d['format_version']}, cora-ci {d['tool_version']})",
        f"source   {src['root']}: {src['kind']} {commit} tree {src['tree']}{dirty}, built_at {d['built_at']}",
        *cut,
        f"model    {model['name']} ({model['dim']}-d, sha256 {model['model_sha256'][:12]})" if model
        else "model    none (BM25 only)",
        f"chunker  {d['chunker']['hash'][:12]}  {d['chunker']['config']}",
        f"files    {stats['files']} indexed, {stats['skipped']} skipped ({mb:.2f} MB)",
        f"chunks   {stats['chunks']}: " + ", ".join(f"{k} {n}" for k, n in d["kinds"].items()),
        "langs    " + ", ".join(f"{k} {n}" for k, n in d["languages"].items()),
        f"graph    {d['graph_edges']} edges",
        f"indexes  bm25 {d['bm25_documents']} documents, "
        + (f"{d['vectors']} vectors" if d["vectors"] is not None else "no vectors"),
        f"size     {d['bytes']['total'] / 1e6:.2f} MB ({ratio:.2f}x the source)",
        *(f"  {name:<36} {n / 1e6:6.2f} MB  {100 * n / max(d['bytes']['total'], 1):3.0f}%"
          for name, n in d["parts"].items()),
    ]  # fmt: skip


def check(path: Path) -> list[str]:
    """Every problem of the bundle at `path`, none if it is intact. Hashes every file and runs
    every content check; no cache (not even a record that this machine wrote the bundle)."""
    root = resolve(path)
    m = read_manifest(root)
    try:
        mf.check(m)
    except (ValueError, TypeError, RecursionError) as e:
        return [f"{mf.MANIFEST}: {e}"]
    problems: list[str] = []
    listed = set(m["artifacts"])
    for rel, want in sorted(m["artifacts"].items()):
        problem, _ = artifact_problem(root, rel, want, [])
        if problem:
            problems.append(problem)
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and rel not in listed and rel not in (mf.MANIFEST, mf.MANIFEST_SUM):
            problems.append(f"{rel}: not listed in the manifest")
    if problems:
        return problems
    return _consistency(open_bundle(root, verify=False))


def _consistency(b: Bundle) -> list[str]:
    m, problems = b.manifest, []
    files = m["files"]
    ids = b.chunks.ids
    n = len(ids)
    if len(set(ids)) != n:
        problems.append("chunk ids are not unique")
    try:
        for fi, path in enumerate(files["path"]):
            b.chunks.file_chunks(fi)  # every column well typed: what the BM25 rebuild below reads
            cols = mf.chunk_columns(b.shards.get(fi, "data"), b.shards.get(fi, "texts"))
            mine = set(mf.ids_of(files["ids"][fi]).tolist())
            problems += [
                f"{path}: {len(v)} {k} for {len(mine)} chunks" for k, v in cols.items() if len(v) != len(mine)
            ]
            problems += [
                f"{path}: parent {p} not in the file"
                for p in cols["parent"]
                if p is not None and p not in mine
            ]
    except CoraError as e:  # a shard written wrong: the graph cannot be read either
        return [*problems, e.message]
    except Exception as e:
        problems.append(f"chunk data unreadable: {type(e).__name__}: {e}")
    if not problems:  # every segment written again from the chunks: altered postings show here,
        with tempfile.TemporaryDirectory(prefix="cora-verify-") as tmp:  # before tantivy reads them
            problems += rebuilt_problems(m, b.shards.row, b.base / mf.BM25, Path(tmp) / "bm25")
        try:
            if not problems and b.lexical.num_docs != n:
                problems.append(f"bm25: {b.lexical.num_docs} documents for {n} chunks")
        except CoraError as e:  # an index that does not even open
            problems.append(e.message)
    problems += _vector_problems(b, n)
    g = b.graph
    if any(not 0 <= j < len(g.ids) for j in g.indices) or not set(g.ids) <= set(ids):
        problems.append("graph: edges to nodes that are not chunks")
    return problems


def _vector_problems(b: Bundle, n: int) -> list[str]:
    """The vector file opens after its layout checks (its size, ascending keys, exactly the
    manifest's chunk ids), and holds one vector per chunk (codes never decode to a zero vector:
    no vector can be undefined)."""
    try:
        v = b.vectors
    except CoraError as e:
        return [e.message]
    if v is None:
        return []
    problems = []
    if v.size != n:
        problems.append(f"vectors: {v.size} vectors for {n} chunks")
    if b.model and v.ndim != b.model["dim"]:
        problems.append(f"vectors: dimension {v.ndim}, model says {b.model['dim']}")
    return problems


def diagnostics(b: Bundle) -> list[tuple[str, int | None, str, str]]:
    """Every diagnostic the bundle records, (path, line, code, message): files skipped or left
    out and secrets redacted first, then the rest, each by path and line."""
    out: set[tuple[str, int | None, str, str]] = set()
    t = b.chunks
    for fi, path in enumerate(b.manifest["files"]["path"]):
        out.update((path, line, code, message) for code, message, line in b.shards.get(fi, "diagnostics"))
        out.update((path, d.line, d.code, d.message) for c in t.file_chunks(fi) for d in c.diagnostics)
    return sorted(out, key=lambda n: (n[2] not in LEFT_OUT, n[0], n[1] or 0, n[2]))
