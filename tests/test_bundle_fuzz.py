"""A bundle cannot crash its reader: each file of a real bundle is mutated (bits flipped, cut,
zeroed, extended with junk, overwritten with another file's bytes) and its checksums made
consistent again, the manifest's sha256s and tantivy's own footer CRCs (what a fork's CI can
publish), then read the ways `info`, `query`, `related`, `show` and `verify` read it. The outcome is
an answer (hits that are chunks of the bundle, finite scores) or one coded error: never a Rust
panic's dump, a traceback, CORA-INT-001, a crash or a hang. `verify` names every altered segment.

Most inputs run in one driver process (this file run as a script), so a crash or a hang is that
process dying or timing out and whatever Rust prints lands on its stderr; the command line itself
reads one mutation of each file, the reported case (postings altered behind consistent checksums,
on the command line and behind `cora-ci mcp`) and crafted doc store and fast field files. ~60 s on 2 cores; CORA_FUZZ_PER_FILE for more inputs.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bundle_fuzz import make_repo, refooter, resign, segment_file

from cora_ci.build import build
from cora_ci.bundle import manifest as mf

PER_FILE = int(os.environ.get("CORA_FUZZ_PER_FILE", "16"))
KINDS = ("flip", "truncate", "zero", "extend", "swap")
QUERY = "parse links Auth login user View render Guide install"
ANCHOR = "src/auth.py::Auth.login"
PANIC_SIGNS = ("panicked at", "Traceback", "RUST_BACKTRACE", "stack backtrace", "CORA-INT-001")


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CORA_DEBUG"}
    return {**env, "XDG_CACHE_HOME": str(cache), "RUST_BACKTRACE": "1"}  # the longest dump there is


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("bundle-fuzz")
    with pytest.MonkeyPatch.context() as mp:  # this module's own verified records
        mp.setenv("XDG_CACHE_HOME", str(root / "cache"))
        out = root / "bundle"
        build(make_repo(root), out, model="default")
        yield out


# --- mutations ----------------------------------------------------------------------------------


def mutate(data: bytes, kind: str, rng: random.Random, other: bytes, segment: bool) -> bytes:
    """`data` with one `kind` of damage at a random place (half the time near the end, where
    formats keep their footers and offsets). A segment file's body is damaged and tantivy's footer
    kept, its CRC made right again."""
    footer = b""
    if segment and len(data) >= 8:
        n = int.from_bytes(data[-8:-4], "little")
        if n + 8 <= len(data):
            data, footer = data[: -8 - n], data[-8 - n :]
    size = len(data)
    pos = rng.randrange(size) if rng.random() < 0.5 or size < 2 else size - 1 - rng.randrange(min(size, 64))
    pos = max(pos, 0)
    span = rng.randint(1, 16)
    if kind == "flip" and size:
        data = data[:pos] + bytes([data[pos] ^ (1 << rng.randrange(8))]) + data[pos + 1 :]
    elif kind == "truncate":
        data = data[:pos]
    elif kind == "zero":
        data = data[:pos] + bytes(len(data[pos : pos + span])) + data[pos + span :]
    elif kind == "extend":
        data = data[:pos] + rng.randbytes(span) + data[pos:]
    elif kind == "swap" and other:
        at = rng.randrange(len(other))
        data = data[:pos] + other[at : at + span] + data[pos + span :]
    return refooter(data + footer) if footer else data


def mutated_copy(bundle: Path, dest: Path, rel: str, kind: str, rng: random.Random) -> bool:
    """A copy of `bundle` at `dest` with `rel` mutated and every checksum made consistent again
    (`manifest.sha256` itself is left wrong: re-signing would undo its damage). Whether the bytes
    of `rel` changed."""
    shutil.copytree(bundle, dest, copy_function=shutil.copyfile)
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    other = (dest / rng.choice([f for f in files if f != rel] or files)).read_bytes()
    p = dest / rel
    before = p.read_bytes()
    p.write_bytes(mutate(before, kind, rng, other, segment_file(rel)))
    if rel != mf.MANIFEST_SUM:
        resign(dest)
    return p.read_bytes() != before


# --- the driver: many inputs in one process ------------------------------------------------------


def read_everything(path: Path, embedder: Any) -> str:
    """Open the bundle and read it as the commands do: "ok" (after checking the answers) or the code."""
    from cora_ci.bundle import open_bundle
    from cora_ci.bundle.report import describe
    from cora_ci.errors import CoraError
    from cora_ci.retrieval import search
    from cora_ci.retrieval.catalog import catalog
    from cora_ci.retrieval.related import related

    try:
        b = open_bundle(path)
        describe(b)  # `info`: both indexes opened, the graph read
        for fi in range(len(b.manifest["files"]["path"])):
            b.chunks.file_chunks(fi)
            mf.links_of_row(b.shards.row(fi))
        ids = set(b.chunks.ids)
        hits = search(b, QUERY, k=8, embedder=embedder if b.vectors is not None else None)
        if not all(h.chunk_id in ids and math.isfinite(h.score) for h in hits):
            return "a wrong answer"
        # the raw indexes: an id a damaged index makes up is dropped by the ranking (above)
        raw = b.lexical.search(QUERY, 20)
        if b.vectors is not None:
            raw += b.vectors.search(embedder.embed_query(QUERY), 20)
        if not all(isinstance(cid, int) and math.isfinite(score) for cid, score in raw):
            return "a wrong answer"
        if hits:
            related(catalog(b), hits[0].chunk_id, k=5)
    except CoraError as e:
        return e.code
    return "ok"


def verdict(path: Path) -> str:
    """`verify`'s: "clean", "problems", or the code it stops with."""
    from cora_ci.bundle.report import check
    from cora_ci.errors import CoraError

    try:
        return "problems" if check(path) else "clean"
    except CoraError as e:
        return e.code


def drive(bundle: Path, work: Path, seed: int, per_file: int) -> None:
    """Every file of `bundle`, `per_file` mutations each: one JSON line per input on stdout,
    written before the input is read, so a crash or a hang names it."""
    from cora_ci.embedding import load_embedder

    embedder = load_embedder("default")
    files = sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file())
    rng = random.Random(seed)
    for i, (rel, j) in enumerate((rel, j) for rel in files for j in range(per_file)):
        kind = KINDS[j % len(KINDS)]
        dest = work / f"m{i}"
        changed = mutated_copy(bundle, dest, rel, kind, rng)
        print(json.dumps({"file": rel, "kind": kind}), flush=True)
        out = {"file": rel, "kind": kind, "changed": changed}
        out |= {"read": read_everything(dest, embedder), "verify": verdict(dest)}
        print(json.dumps(out), flush=True)
        shutil.rmtree(dest)


def test_every_file_mutated_and_resigned_reads_or_fails_cleanly(bundle: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    p = subprocess.run([sys.executable, __file__, str(bundle), str(work), "20", str(PER_FILE)],
                       capture_output=True, text=True, timeout=600, env=_env(tmp_path / "cache"),
                       cwd=Path(__file__).parent)  # fmt: skip
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    done = [o for o in lines if "read" in o]
    assert p.returncode == 0, f"exit {p.returncode} at {lines[-1:]}: {p.stderr[-2000:]}"
    assert not any(s in p.stderr for s in PANIC_SIGNS), p.stderr[-2000:]
    files = {o["file"] for o in done}
    assert len(done) == len(files) * PER_FILE and {"manifest.msgpack", "vectors.codes"} <= files
    assert len([f for f in files if segment_file(f)]) == 6  # idx term pos store fast fieldnorm
    for o in done:
        assert o["read"] == "ok" or o["read"].startswith("CORA-BND-00"), o
        assert o["verify"] in ("clean", "problems") or o["verify"].startswith("CORA-BND-00"), o
        if o["changed"] and segment_file(o["file"]):  # rebuilt from the chunks: any change is seen
            assert o["verify"] != "clean", o
    seen = {o["read"] for o in done}
    assert {"ok", "CORA-BND-003", "CORA-BND-004"} <= seen, seen  # checks reached, answers still given


# --- the command line ----------------------------------------------------------------------------


def cli(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cora_ci", *args], capture_output=True, text=True,
                          timeout=120, env=_env(cache))  # fmt: skip


def assert_clean(p: subprocess.CompletedProcess[str], verify: bool = False) -> None:
    """Success, or (`verify`: FAIL lines then) one coded line; never a dump."""
    assert not any(s in p.stderr for s in PANIC_SIGNS), p.stderr
    lines = p.stderr.splitlines()
    if p.returncode:
        assert lines and lines[-1].startswith("error: CORA-BND-00"), p.stderr
        assert all(line.startswith("FAIL ") for line in lines[:-1]) if verify else len(lines) == 1, p.stderr
        assert p.stdout == "", p.stdout


def test_the_command_line_reads_each_mutated_file_cleanly(bundle: Path, tmp_path: Path) -> None:
    rng = random.Random(7)
    files = sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file())
    for i, rel in enumerate(files):
        dest = tmp_path / f"c{i}"
        mutated_copy(bundle, dest, rel, KINDS[i % len(KINDS)], rng)
        args = ("query", QUERY, "--bundle", str(dest), "--format", "json")
        assert_clean(cli(tmp_path / "cache", *args))


def postings_that_panic(bundle: Path, work: Path) -> Path:
    """A copy of `bundle` whose postings (`.idx`) have one byte changed, the file's CRC and the
    manifest's checksums made right, such that the index opens and a query makes tantivy panic."""
    from cora_ci.bundle import open_bundle
    from cora_ci.errors import CoraError

    idx = next(p.name for p in (bundle / "bm25").iterdir() if p.suffix == ".idx")
    data = (bundle / "bm25" / idx).read_bytes()
    for at in range(len(data) - 100):
        for bit in (0, 7):
            dest = work / f"p{at}-{bit}"
            shutil.copytree(bundle, dest, copy_function=shutil.copyfile)
            changed = data[:at] + bytes([data[at] ^ (1 << bit)]) + data[at + 1 :]
            (dest / "bm25" / idx).write_bytes(refooter(changed))
            resign(dest)
            try:
                lexical = open_bundle(dest).lexical
            except CoraError:
                shutil.rmtree(dest)
                continue
            try:
                lexical.search(QUERY, 20)
            except CoraError as e:
                if "tantivy panicked" in e.message:
                    return dest
            shutil.rmtree(dest)
    raise AssertionError("no single-bit change of the postings makes tantivy panic")


def test_postings_altered_behind_consistent_checksums_never_print_a_panic(
    bundle: Path, tmp_path: Path
) -> None:
    """The reported case: it passed `verify` and `info`, and `query` printed a Rust panic."""
    b = postings_that_panic(bundle, tmp_path)
    cache = tmp_path / "cache"
    q = cli(cache, "query", QUERY, "--bundle", str(b))
    assert_clean(q)
    assert q.returncode == 5 and "error: CORA-BND-004: " in q.stderr and "tantivy panicked" in q.stderr
    assert_clean(cli(cache, "info", str(b)))
    assert_clean(cli(cache, "show", ANCHOR, "--bundle", str(b)))
    v = cli(cache, "verify", str(b))
    assert_clean(v, verify=True)
    assert v.returncode == 5 and "FAIL bm25: segment " in v.stderr


def test_the_mcp_server_answers_a_coded_tool_error_and_goes_on(bundle: Path, tmp_path: Path) -> None:
    """The same postings behind `cora-ci mcp`: a tool error with the code, no dump on its stderr,
    and the next call (no BM25 in it) answered."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    b = postings_that_panic(bundle, tmp_path)
    params = StdioServerParameters(command=sys.executable, args=["-m", "cora_ci", "mcp", "--bundle", str(b)],
                                   env=_env(tmp_path / "cache"), cwd=str(tmp_path))  # fmt: skip
    log = tmp_path / "server.log"

    async def run() -> None:
        with log.open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as session:
                await session.initialize()
                failed = await session.call_tool("search", {"query": QUERY})
                assert failed.is_error and "CORA-BND-004" in str(failed.content), failed
                outline = await session.call_tool("outline", {"path": "src/auth.py"})
                assert not outline.is_error and "login" in str(outline.content), outline

    anyio.run(run)
    assert not any(s in log.read_text() for s in PANIC_SIGNS), log.read_text()


def _resigned(bundle: Path, dest: Path, suffix: str, change: Any) -> Path:
    shutil.copytree(bundle, dest, copy_function=shutil.copyfile)
    p = next(p for p in (dest / "bm25").iterdir() if p.suffix == suffix)
    p.write_bytes(refooter(change(p.read_bytes())))
    resign(dest)
    return dest


def _body_end(data: bytes) -> int:
    return len(data) - 8 - int.from_bytes(data[-8:-4], "little")


def _huge_skip_index(data: bytes) -> bytes:
    """The doc store's skip index made to claim 2^49 layers: tantivy reserves 2^52 bytes for
    them when it opens the index, and the failed allocation aborts the process."""
    end = _body_end(data)
    offset = int.from_bytes(data[end - 24 : end - 16], "little")
    return data[:offset] + bytes(7) + b"\x81" + data[offset + 1 :]


def _zstd_in_columns(data: bytes) -> bytes:
    """A zstd frame's magic in the fast field's column dictionary (a whole frame there could
    claim any size: tantivy reserves it before decompressing)."""
    end = _body_end(data)
    size = int.from_bytes(data[end - 20 : end - 12], "little")
    at = end - 20 - size + 4
    return data[:at] + bytes([0x28, 0xB5, 0x2F, 0xFD]) + data[at + 4 :]


@pytest.mark.parametrize(("suffix", "change", "says"), [
    (".store", _huge_skip_index, "skip index layers"),
    (".fast", _zstd_in_columns, "compressed column dictionary"),
])  # fmt: skip
def test_crafted_segment_files_are_refused_before_tantivy_reads_them(
    bundle: Path, tmp_path: Path, suffix: str, change: Any, says: str
) -> None:
    b = _resigned(bundle, tmp_path / "b", suffix, change)
    cache = tmp_path / "cache"
    for args in (("query", QUERY, "--bundle", str(b)), ("info", str(b))):
        p = cli(cache, *args)
        assert_clean(p)
        assert p.returncode == 5 and p.stderr.startswith("error: CORA-BND-004: ") and says in p.stderr


if __name__ == "__main__":
    drive(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
