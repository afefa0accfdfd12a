"""Fuzzing the bundle readers: a real bundle and its archive, mutated, then read every way a
command reads them. Shared by tests/test_fuzz.py (a few hundred inputs) and bench/fuzz.py (10,000+).

An input is one mutation of one file: bytes (a bit flipped, a cut, bytes inserted or overwritten)
or structure (msgpack that unpacks fine but holds another shape: a value anywhere in the manifest,
a shard or a file's chunk blob replaced by a hypothesis-drawn one). Most are re-signed, their
checksums made consistent again as a fork's CI would (a tantivy segment file's own CRC too, see
`refooter`), so they reach the shape checks and the indexes instead of stopping at the checksum.
The only acceptable outcomes are success and a `CoraError` (not CORA-INT-001): anything else
propagates and fails the caller.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import shutil
import subprocess
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
from hypothesis import strategies as st

from cora_ci.build import build
from cora_ci.bundle import manifest as mf
from cora_ci.bundle import open_bundle
from cora_ci.bundle.archive import _remove, cache_root, write_archive
from cora_ci.bundle.blobs import compress as compress_blob
from cora_ci.bundle.blocks import BlockTexts
from cora_ci.bundle.blocks import pack as pack_blocks
from cora_ci.bundle.report import check, describe
from cora_ci.bundle.schema import unpack_plain
from cora_ci.bundle.store import sha256_file
from cora_ci.errors import CoraError

FILES = {
    "src/auth.py": '"""Auth."""\nfrom src.util import parse_links\n\n\nclass Auth:\n    """Checks."""\n\n'
    "    def login(self, user):\n        return parse_links(user)\n",
    "src/util.py": "import re\n\n\ndef parse_links(value):\n    return re.findall('<([^>]+)>', value)\n",
    "web/app.ts": "import { f } from './api';\nexport class View {\n  render(i: number) { return f(i); }\n}\n",
    "docs/guide.md": "# Guide\n\nIntro.\n\n## Install\n\nRun it.\n",
}
_COUNTER = itertools.count()


@dataclass(frozen=True)
class Fixture:
    bundle: Path  # a bundle with vectors (the default model)
    archive: Path  # the same bundle, packed
    work: Path  # where mutated copies go


def make_repo(root: Path) -> Path:
    """A small real git repository of FILES, one commit."""
    repo = root / "repo"
    for name, text in FILES.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    commit(repo, "init", "-q", "-b", "main")
    return repo


def commit(repo: Path, *init: str) -> None:
    """Commit everything in `repo` (after `git init` with `init`, if given)."""
    if init:
        subprocess.run(["git", "-C", str(repo), *init], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=f@example.com", "-c", "user.name=f", "commit",
                    "-qm", "fixture"], check=True, capture_output=True)  # fmt: skip


def make_fixture(root: Path) -> Fixture:
    """The bundle of `make_repo` (default model: vectors included) and its archive."""
    repo = make_repo(root)
    bundle = root / "bundle"
    build(repo, bundle, model="default")
    archive = root / "bundle.tar.gz"
    write_archive(bundle, archive)
    (root / "work").mkdir()
    return Fixture(bundle, archive, root / "work")


def read_all(path: Path) -> str:
    """Open the bundle at `path` and read every part a command reads; "ok", or the CoraError's code."""
    try:
        b = open_bundle(path)
        describe(b)  # `info`: the chunk table, every file's chunks, the graph
        for fi in range(len(b.manifest["files"]["path"])):
            b.chunks.file_chunks(fi)
            b.chunks.meta_columns(fi)
            mf.links_of_row(b.shards.row(fi))  # what an update reads of a kept file
        b.lexical.search("parse links Auth login", 20)
        if b.vectors is not None:
            rng = np.random.default_rng(0)
            b.vectors.search(rng.standard_normal(b.vectors.ndim).astype(np.float32), 20)
            b.vectors.get(b.chunks.ids[:5])
        if path.is_dir():
            check(path)  # `verify`
    except CoraError as e:
        if e.code == "CORA-INT-001":
            raise
        return e.code
    return "ok"


def fresh_copy(fx: Fixture) -> Path:
    """A new copy of the bundle (new files: no verified record applies to them)."""
    dest = fx.work / f"b{next(_COUNTER)}"
    shutil.copytree(fx.bundle, dest, copy_function=shutil.copyfile)
    return dest


def resign(bundle: Path) -> None:
    """Make every checksum consistent again: each listed file's sha256 and size, then the manifest's
    own. What a fork's CI can do; a manifest that does not unpack as a map is left as it is."""
    body = (bundle / mf.MANIFEST).read_bytes()
    try:
        m = msgpack.unpackb(body, raw=False, strict_map_key=False)
    except Exception:
        m = None
    if isinstance(m, dict) and isinstance(m.get("artifacts"), dict):
        arts = {}
        for rel, a in m["artifacts"].items():
            p = bundle / rel if isinstance(rel, str) and ".." not in rel and not rel.startswith("/") else None
            if p is not None and p.is_file() and isinstance(a, dict):
                data = p.read_bytes()
                a = {**a, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
            arts[rel] = a
        m["artifacts"] = arts
        with contextlib.suppress(Exception):  # a value msgpack cannot pack: left as it was
            body = msgpack.packb(m, use_bin_type=True)
    (bundle / mf.MANIFEST).write_bytes(body)
    (bundle / mf.MANIFEST_SUM).write_text(f"{hashlib.sha256(body).hexdigest()}  {mf.MANIFEST}\n")


# --- byte mutations ---------------------------------------------------------------------------


def files_of(bundle: Path) -> list[str]:
    return sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file())


@st.composite
def byte_edit(draw: st.DrawFn, size: int) -> Callable[[bytes], bytes]:
    """One edit of a file of `size` bytes: flip bits, cut, insert or overwrite."""
    pos = draw(st.integers(0, max(size - 1, 0)))
    kind = draw(st.sampled_from(["flip", "truncate", "insert", "overwrite"]))
    if kind == "flip":
        bits = draw(st.lists(st.integers(0, 7), min_size=1, max_size=3))
        return lambda d: d[:pos] + bytes([d[pos] ^ sum(1 << b for b in set(bits))]) + d[pos + 1 :] if d else d
    if kind == "truncate":
        return lambda d: d[:pos]
    extra = draw(st.binary(min_size=1, max_size=16))
    if kind == "insert":
        return lambda d: d[:pos] + extra + d[pos:]
    return lambda d: d[:pos] + extra + d[pos + len(extra) :]


def mutate_bytes(fx: Fixture, data: st.DataObject) -> Path:
    """A copy of the bundle with one file's bytes edited, re-signed most of the time."""
    dest = fresh_copy(fx)
    rel = data.draw(st.sampled_from(files_of(dest)), label="file")
    p = dest / rel
    edit = data.draw(byte_edit(p.stat().st_size), label="edit")
    p.write_bytes(edit(p.read_bytes()))
    if rel not in (mf.MANIFEST, mf.MANIFEST_SUM) and data.draw(st.integers(0, 9), label="resign"):
        if segment_file(rel):
            p.write_bytes(refooter(p.read_bytes()))
        resign(dest)
    return dest


def segment_file(rel: str) -> bool:
    """A tantivy segment file: it ends with tantivy's footer (see `refooter`)."""
    return rel.startswith("bm25/") and rel.rsplit(".", 1)[-1] in SEGMENT_SUFFIXES


SEGMENT_SUFFIXES = ("idx", "term", "pos", "store", "fast", "fieldnorm")


def refooter(data: bytes) -> bytes:
    """A tantivy file with its footer's CRC made right for its (changed) body, as a hostile writer
    would: the footer is JSON (`{"version": ..., "crc": N}`), its length (u32) and a magic number
    (u32), the CRC a crc32 of everything before it. A file whose footer no longer parses is kept."""
    try:
        n = int.from_bytes(data[-8:-4], "little")
        footer = json.loads(data[-8 - n : -8])
        body = data[: -8 - n]
        footer["crc"] = zlib.crc32(body)
    except (ValueError, TypeError, IndexError):
        return data
    packed = json.dumps(footer, separators=(",", ":")).encode()
    return body + packed + len(packed).to_bytes(4, "little") + data[-4:]


def mutate_archive(fx: Fixture, data: st.DataObject) -> Path:
    """A copy of the archive with its bytes edited."""
    dest = fx.work / f"a{next(_COUNTER)}.tar.gz"
    raw = fx.archive.read_bytes()
    dest.write_bytes(data.draw(byte_edit(len(raw)), label="edit")(raw))
    return dest


def mutate_archived_bundle(fx: Fixture, data: st.DataObject) -> Path:
    """An archive packed from a structurally mutated (and re-signed) bundle: what a fork's CI publishes."""
    src = mutate_structure(fx, data)
    dest = fx.work / f"p{next(_COUNTER)}.tar.gz"
    from cora_ci.bundle.archive import _write_tar

    paths = sorted(p for p in src.rglob("*") if p.is_file() or p.is_dir())
    with dest.open("wb") as raw:
        _write_tar(raw, src, paths, 0)
    return dest


# --- structure mutations ----------------------------------------------------------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=True)
    | st.text(max_size=20)
    | st.binary(max_size=24)
    | st.sampled_from(
        ["../../etc/passwd", "/etc/passwd", "a/../../b", "", ".", "shards/../x", "bm25/meta.json"]
    )
)
MSGPACK_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8) | st.integers(), inner, max_size=4)
    ),
    max_leaves=12,
)


def _nested(depth: int) -> Any:
    v: Any = 0
    for _ in range(depth):
        v = [v]
    return v


@st.composite
def replacement(draw: st.DrawFn, old: Any) -> Any:
    """A value to put where `old` was: anything msgpack holds, or something close to `old`."""
    choice = draw(st.integers(0, 9))
    if choice < 3:
        return draw(MSGPACK_VALUES)
    if choice == 3:
        return draw(st.sampled_from([msgpack.ExtType(5, b"x"), _nested(draw(st.integers(5, 400)))]))
    if isinstance(old, bool) or old is None:
        return draw(_SCALARS)
    if isinstance(old, int):
        return old + draw(st.sampled_from([-1, 1, -(old + 1), 2**32, 2**63 - 1 - old]))
    if isinstance(old, str):
        return draw(
            st.sampled_from([old + "x", old[:-1], old.upper(), "../" + old, "/" + old, old + "/..", "Z" * 32])
        )
    if isinstance(old, bytes):
        return draw(st.sampled_from([old[:-1], old + b"\0", old[1:], b"\xff" * 8 + old, old[::-1]]))
    if isinstance(old, list):
        if not old:
            return draw(MSGPACK_VALUES.map(lambda v: [v]))
        i = draw(st.integers(0, len(old) - 1))
        return draw(
            st.sampled_from([old[:i] + old[i + 1 :], [*old, old[i]], old[::-1], [old[i]] * 3, old[:i]])
        )
    if isinstance(old, dict):
        keys = sorted(old, key=repr)
        if keys and draw(st.booleans()):
            k = draw(st.sampled_from(keys))
            return {key: v for key, v in old.items() if key != k}
        return {**old, draw(st.text(max_size=6)): draw(MSGPACK_VALUES)}
    return draw(MSGPACK_VALUES)


@st.composite
def mutated(draw: st.DrawFn, value: Any, depth: int = 0) -> Any:
    """`value` with one place in it (reached by a random walk) replaced."""
    go_in = depth < 6 and draw(st.integers(0, 3)) > 0
    if go_in and isinstance(value, dict) and value:
        k = draw(st.sampled_from(sorted(value, key=repr)))
        return {**value, k: draw(mutated(value[k], depth + 1))}
    if go_in and isinstance(value, list) and value:
        i = draw(st.integers(0, len(value) - 1))
        return [*value[:i], draw(mutated(value[i], depth + 1)), *value[i + 1 :]]
    return draw(replacement(value))


def _packs(value: Any) -> bytes | None:
    try:
        return bytes(msgpack.packb(value, use_bin_type=True))
    except Exception:  # too deep for msgpack's packer, or not packable: nothing to write
        return None


def mutate_structure(fx: Fixture, data: st.DataObject) -> Path:
    """A copy of the bundle with one value of the manifest, a shard or a chunk blob replaced, re-signed."""
    dest = fresh_copy(fx)
    shards = sorted(p.relative_to(dest).as_posix() for p in (dest / mf.SHARDS).iterdir())
    target = data.draw(st.sampled_from([mf.MANIFEST, *shards, "blob", "texts"]), label="target")
    if target == "texts":  # one file's texts in its block (format 9.0), the block compressed again
        target = data.draw(st.sampled_from(shards), label="shard")
        shard = mf.unpack((dest / target).read_bytes())
        files = shard["files"]
        texts = list(BlockTexts(shard["blocks"], shard["block_files"], files["texts"]))
        i = data.draw(st.integers(0, len(texts) - 1), label="file")
        packed = _packs(data.draw(mutated(unpack_plain(texts[i])), label="texts"))
        if packed is not None:
            texts[i] = packed
            shard["blocks"], shard["block_files"] = pack_blocks(files["path"], texts, {})
            files["texts"] = [len(t) for t in texts]
        body = _packs(shard)
    elif target == "blob":
        target = data.draw(st.sampled_from(shards), label="shard")
        shard = mf.unpack((dest / target).read_bytes())
        rows = shard["files"]["data"]
        i = data.draw(st.integers(0, len(rows) - 1), label="file")
        value = data.draw(mutated(mf.unpack_blob(rows[i])), label="blob")
        packed = _packs(value)
        if packed is not None:
            rows[i] = compress_blob(packed)
        body = _packs(shard)
    else:
        body = _packs(data.draw(mutated(mf.unpack((dest / target).read_bytes())), label="value"))
    if body is not None:
        (dest / target).write_bytes(body)
    resign(dest)
    return dest


KINDS: dict[str, Callable[[Fixture, st.DataObject], Path]] = {
    "bytes": mutate_bytes,
    "structure": mutate_structure,
    "archive-bytes": mutate_archive,
    "archive-structure": mutate_archived_bundle,
}


def run_one(fx: Fixture, data: st.DataObject) -> tuple[str, str]:
    """One input of a drawn kind: (kind, outcome)."""
    kind = data.draw(st.sampled_from(sorted(KINDS)), label="kind")
    path = KINDS[kind](fx, data)
    try:
        return kind, read_all(path)
    finally:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            extracted = cache_root() / sha256_file(path)  # read-only copy: removed with its modes reset
            if extracted.exists():
                _remove(extracted)
            path.unlink(missing_ok=True)
