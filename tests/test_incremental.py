"""Updating a bundle commit by commit answers exactly like building it from scratch at the same tree."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest
from conftest import git
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from cora_ci.build import build
from cora_ci.bundle import manifest as mf
from cora_ci.bundle import open_bundle
from cora_ci.bundle.report import check
from cora_ci.errors import CoraError
from cora_ci.graph.csr import unpack_csr
from cora_ci.lock import update_lock

QUERIES = ["parse header", "login user", "render view", "install", "total value", "helper"]


pytestmark = pytest.mark.usefixtures("private_cache")


def answers(out: Path) -> dict[str, Any]:
    """Everything a query can observe of a bundle, vectors as arrays."""
    b = open_bundle(out)
    rows = range(len(b.chunks))
    chunks = {b.chunks.ids[r]: b.chunks.chunk(r).to_dict() for r in rows}
    m = b.manifest
    result: dict[str, Any] = {
        "chunks": chunks,
        "files": b.shards.table(),
        "top": m["files"],
        "graph": b.graph.to_dict(),
        "bm25": {q: [(i, round(s, 4)) for i, s in b.lexical.search(q, 20)] for q in QUERIES},
        "model": m["model"],
        "source": m["source"],
        "built_at": m["built_at"],
        "boosts": m["boosts"],
        "chunker": m["chunker"],
    }
    if b.vectors is not None:
        ids = sorted(chunks)
        result["vectors"] = b.vectors.get_stored(ids)  # the codes, as stored
        result["neighbours"] = {
            q: [i for i, _ in b.vectors.search(b.vectors.get([q])[0], 3)] for q in ids[:5]
        }
    return result


def assert_same(incremental: Path, full: Path) -> None:
    a, b = answers(incremental), answers(full)
    va, vb = a.pop("vectors", None), b.pop("vectors", None)
    a.pop("neighbours", None), b.pop("neighbours", None)
    assert a == b
    if va is not None or vb is not None:
        # A reused vector is copied as stored (its codes), a text's vector never depends on the
        # texts embedded with it: the codes are the full build's exactly, and so is their file.
        assert va is not None and vb is not None and np.array_equal(va, vb)
        assert (incremental / mf.CODES).read_bytes() == (full / mf.CODES).read_bytes()


def write(repo: Path, name: str, text: str) -> None:
    p = repo / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text))


def commit(repo: Path, msg: str = "c") -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", msg, "--allow-empty")


BASE = {
    "src/util.py": '''\
        def parse_header(value):
            """Split a header."""
            return value.split(";")


        def helper(x):
            return x + 1
        ''',
    "src/auth.py": '''\
        from src.util import parse_header


        class Auth:
            def login(self, user):
                """Log a user in."""
                return parse_header(user)
        ''',
    "web/view.ts": "export function renderView(id: number): string {\n  return `v${id}`;\n}\n",
    "README.md": "# Demo\n\n## Install\n\nRun it.\n",
}


def test_update_reuses_unchanged_files_and_vectors(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo({k: textwrap.dedent(v) for k, v in BASE.items()})
    out = tmp_path / "inc"
    first = build(repo, out)
    assert first.rebuilt == "" and first.embedded == first.chunks
    # Edit one function, add code above another (its lines move), delete and rename files.
    util = (repo / "src/util.py").read_text().replace("x + 1", "x + 2")
    (repo / "src/util.py").write_text("# moved down by a comment\n" + util)
    git(repo, "mv", "web/view.ts", "web/page.ts")
    (repo / "README.md").unlink()
    commit(repo)
    s = build(repo, out)
    assert s.rebuilt == "" and s.rechunked == 2 and s.removed == 2
    # Only texts that changed are embedded: helper's body and util's file chunk (its leading
    # comment); parse_header is reused, and so is the renamed file (the path is not embedded).
    assert 0 < s.embedded <= 2
    build(repo, tmp_path / "full", full=True)
    assert_same(out, tmp_path / "full")
    again = build(repo, out)
    assert again.embedded == 0 and again.rechunked == 0
    git(repo, "mv", "src", "lib")  # a directory moved: every chunk gets a new id, no new text
    commit(repo)
    moved = build(repo, out)
    assert moved.rechunked == 2 and moved.removed == 2 and moved.embedded == 0
    build(repo, tmp_path / "full2", full=True)
    assert_same(out, tmp_path / "full2")


@pytest.fixture
def small_buckets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Buckets of 128 chunks, not 2,048, and several from 256 chunks, not 8,192: a repository of
    300 one-chunk files spans several."""
    monkeypatch.setattr(mf, "_BUCKET_CHUNKS", 128)
    monkeypatch.setattr(mf, "_ONE_BUCKET", 256)


def test_buckets_are_one_below_8192_chunks_then_2048_to_4096_chunks_each() -> None:
    """A power of two (a repository that grows a little keeps its buckets), at most 128."""
    counts = [mf.bucket_count(n) for n in (0, 1, 8191, 8192, 16383, 16384, 40_000, 10**7)]
    assert counts == [1, 1, 1, 4, 4, 8, 16, 128]


def test_an_update_rewrites_only_the_bm25_buckets_of_changed_files(
    make_repo, tmp_path: Path, small_buckets: None
) -> None:  # type: ignore[no-untyped-def]
    files = {f"pkg/mod_{i:03}.py": _function(f"work_{i}") for i in range(300)}
    repo = make_repo(files)
    out = tmp_path / "inc"
    build(repo, out, model="none")
    before = open_bundle(out).manifest["lexical"]
    assert before["buckets"] > 1
    inode = {p.name: p.stat().st_ino for p in (out / "bm25").iterdir()}
    write(repo, "pkg/mod_007.py", _function("work_7") + "\n\n" + _function("extra_7"))
    commit(repo)
    build(repo, out, model="none")
    after = open_bundle(out).manifest["lexical"]
    changed = [
        b for b, (x, y) in enumerate(zip(before["segments"], after["segments"], strict=True)) if x != y
    ]
    assert len(changed) == 1  # the bucket of mod_007.py; every other segment is the same file
    kept = [s[0] for b, s in enumerate(after["segments"]) if s and b not in changed]
    for p in (out / "bm25").iterdir():
        if p.name.split(".")[0] in kept:
            assert p.stat().st_ino == inode[p.name], p.name
    build(repo, tmp_path / "full", model="none", full=True)
    assert_same(out, tmp_path / "full")
    assert open_bundle(tmp_path / "full").manifest["lexical"] == after


def test_an_update_rewrites_only_the_manifest_shards_of_changed_files(
    make_repo, tmp_path: Path, small_buckets: None
) -> None:  # type: ignore[no-untyped-def]
    files = {f"pkg/mod_{i:03}.py": _function(f"work_{i}") for i in range(300)}
    repo = make_repo(files)
    out = tmp_path / "inc"
    build(repo, out, model="none")
    before = open_bundle(out).manifest
    shards = [n for n in before["shards"] if n]
    assert len(before["shards"]) == before["lexical"]["buckets"] and len(shards) > 1
    inode = {n: (out / n).stat().st_ino for n in shards}
    write(repo, "pkg/mod_007.py", _function("work_7") + "\n\n" + _function("extra_7"))
    git(repo, "rm", "-q", "pkg/mod_100.py")
    commit(repo)
    build(repo, out, model="none")
    after = open_bundle(out).manifest
    touched = {
        mf.shard_name(mf.bucket_of(p, len(after["shards"]))) for p in ("pkg/mod_007.py", "pkg/mod_100.py")
    }
    assert after["shards"] == before["shards"]
    for n in shards:  # untouched shards are the same files, with the checksums recorded before
        assert ((out / n).stat().st_ino == inode[n]) == (n not in touched), n
        assert (after["artifacts"][n] == before["artifacts"][n]) == (n not in touched), n
    full = tmp_path / "full"
    build(repo, full, model="none", full=True)
    assert_same(out, full)
    # Same tree, same bytes: the top manifest and every shard, updated or built from scratch.
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == sorted(
        p.relative_to(full) for p in full.rglob("*")
    )
    for n in [mf.MANIFEST, *shards]:
        assert (out / n).read_bytes() == (full / n).read_bytes(), n


def _long(name: str, ret: str) -> str:
    """A function long enough to be a chunk of its own."""
    body = "\n".join(f"    total_{i} = value * {i} + len(str(value)) - {i}" for i in range(12))
    return f'def {name}(value):\n    """{name}, the long way round."""\n{body}\n    return {ret}\n'


def test_an_updated_graph_is_the_full_builds_byte_for_byte(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    util = _long("helper", "value + 1") + "\n\n" + _long("parse_header", 'value.split(";")')
    users = {f"app/use_{i}.py": f"from src.util import helper\n\n\n{_long(f'use_{i}', f'helper(value) + {i}')}"
             for i in range(4)}  # fmt: skip
    # a name used without an import resolves only while one file in the repository defines it
    bare = {
        "lib/sizes.py": _long("format_size", "value // 1024"),
        "app/bare.py": _long("show", "format_size(value)"),
    }
    repo = make_repo({"src/util.py": util, **users, **bare})
    out = tmp_path / "inc"
    build(repo, out, model="none")
    assert open_bundle(out).graph_csr.indices.size >= 5  # edges to keep and to drop
    steps: list[tuple[dict[str, str], str | None]] = [
        ({"src/util.py": util.replace("value + 1", "value + 2")}, None),  # a used definition changes
        (
            {"app/use_9.py": users["app/use_0.py"].replace("use_0", "use_9")},
            "app/use_1.py",
        ),  # users come and go
        ({"src/util.py": util + "\n\n" + _long("parse_header", "value")}, None),  # a second definition
        # the same chunk (id) with other edges: its old ones must go
        (
            {
                "app/use_0.py": "from src.util import parse_header\n\n\n"
                + _long("use_0", "parse_header(value)")
            },
            None,
        ),
        # another file defines format_size too: app/bare.py, unchanged, loses its edge, then gets it back
        ({"lib/more_sizes.py": _long("format_size", "value // 1000")}, None),
        ({}, "lib/more_sizes.py"),
    ]
    for i, (step, removed) in enumerate(steps):
        for name, text in step.items():
            write(repo, name, text)
        if removed is not None:
            git(repo, "rm", "-q", removed)
        commit(repo)
        build(repo, out, model="none")
        full = tmp_path / f"full{i}"
        build(repo, full, model="none", full=True)
        assert (out / mf.GRAPH).read_bytes() == (full / mf.GRAPH).read_bytes(), step


def test_a_graph_update_that_does_not_hold_the_tables_chunks_is_assembled_whole(
    make_repo, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """`write_graph` changes the previous graph where the files it is told of changed (their
    edges: the graph is their only record), the same bytes as a full build's; and checks that the
    result holds exactly the new table's chunks: told of none while one file gained a chunk, it
    assembles a graph over the table's chunks from the old one's other edges."""
    from cora_ci.build.chunks import link_files
    from cora_ci.build.writers import write_graph
    from cora_ci.bundle.tables import Rows

    repo = make_repo(
        {
            "a.py": _long("helper", "value + 1"),
            "b.py": "from a import helper\n\n\n" + _long("use", "helper(value)"),
        }
    )
    build(repo, tmp_path / "old", model="none")
    write(repo, "a.py", _long("helper", "value + 1") + "\n\n" + _long("other", "helper(value)"))
    commit(repo)
    build(repo, tmp_path / "new", model="none", full=True)
    new = open_bundle(tmp_path / "new")
    files = new.manifest["files"]
    edges = link_files(Rows(), Rows(), Rows(new.shards, files["path"]), list(files["path"]))
    ids = new.chunks.id_array
    write_graph(tmp_path / "graph", files, ids, {"a.py": edges["a.py"]}, open_bundle(tmp_path / "old"))
    assert (tmp_path / "graph").read_bytes() == (tmp_path / "new" / mf.GRAPH).read_bytes()
    assert new.graph_csr.indices.size >= 2
    write_graph(tmp_path / "graph", files, ids, {}, open_bundle(tmp_path / "old"))
    nodes = unpack_csr((tmp_path / "graph").read_bytes(), ids).ids
    assert np.array_equal(nodes, new.graph_csr.ids) and len(nodes) == len(new.chunks)


def test_a_build_links_files_as_it_decodes_their_rows(make_repo, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                      monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The linking stage reads each file's links from its packed row, a few kept decoded (a first
    build held every file's, ~1 KB of names a chunk): with room for one file's, every edge is still
    found, the graph the same byte for byte, in a first build and in an update."""
    from cora_ci.build import chunks

    util = _long("helper", "value + 1") + "\n\n" + _long("parse_header", 'value.split(";")')
    files = {f"app/use_{i}.py": f"from src.util import helper, parse_header\n\n\n"
             f"{_long(f'use_{i}', f'helper(parse_header(value)) + {i}')}" for i in range(5)}  # fmt: skip
    repo = make_repo({"src/util.py": util, "lib/sizes.py": _long("format_size", "value // 1024"),
                      "app/bare.py": _long("show", "format_size(value)"), **files})  # fmt: skip
    build(repo, tmp_path / "roomy", model="none")
    monkeypatch.setattr(chunks, "_LINKS_CACHED", 1)
    build(repo, tmp_path / "tight", model="none")
    graph = (tmp_path / "roomy" / mf.GRAPH).read_bytes()
    assert (tmp_path / "tight" / mf.GRAPH).read_bytes() == graph
    assert open_bundle(tmp_path / "tight").graph_csr.indices.size >= 11  # 2 a user, and the bare name
    write(repo, "src/util.py", util.replace("value + 1", "value + 2"))
    commit(repo)
    build(repo, tmp_path / "tight", model="none")
    build(repo, tmp_path / "full", model="none", full=True)
    assert (tmp_path / "tight" / mf.GRAPH).read_bytes() == (tmp_path / "full" / mf.GRAPH).read_bytes()


def test_a_damaged_shard_is_reported_with_its_name(make_repo, tmp_path: Path, small_buckets: None) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo({f"m{i:03}.py": _function(f"f{i}") for i in range(300)})  # several shards
    out = tmp_path / "o"
    build(repo, out, model="none")
    b = open_bundle(out)
    name = next(n for n in b.manifest["shards"] if n)
    data = bytearray((out / name).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (out / name).write_bytes(bytes(data))
    with pytest.raises(CoraError) as e:  # opened before the damage: shards are checked when read
        b.chunks.column("text")
    assert e.value.code == "CORA-BND-003" and name in e.value.message
    with pytest.raises(CoraError) as e:
        open_bundle(out)
    assert e.value.code == "CORA-BND-003" and name in e.value.message
    assert any(name in p for p in check(out))
    # A shard that matches its checksum but not the top manifest (written wrong) is CORA-BND-004.
    build(repo, out, model="none", full=True)
    other = next(n for n in open_bundle(out).manifest["shards"][::-1] if n and n != name)
    _rewrite_artifact(out, name, (out / other).read_bytes())
    with pytest.raises(CoraError) as e:
        open_bundle(out).chunks.column("text")
    assert e.value.code == "CORA-BND-004" and name in e.value.message
    assert any(name in p for p in check(out))


def _rewrite_artifact(out: Path, rel: str, data: bytes) -> None:
    """Replace a bundle file and record its new checksum in the manifest, as a buggy writer would."""
    (out / rel).write_bytes(data)
    m = msgpack.unpackb((out / mf.MANIFEST).read_bytes(), raw=False, strict_map_key=False)
    m["artifacts"][rel] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    body = msgpack.packb(m, use_bin_type=True)
    (out / mf.MANIFEST).write_bytes(body)
    (out / mf.MANIFEST_SUM).write_text(f"{hashlib.sha256(body).hexdigest()}  {mf.MANIFEST}\n")


def _function(name: str) -> str:
    body = "".join(f"    total += compute_value(item_{i}, factor={i}) * weight_{i}\n" for i in range(8))
    return f"def {name}(items):\n    total = 0\n{body}    return total\n"


def test_code_moved_within_a_file_keeps_its_vectors(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo({"a.py": "import os\n\n\n" + _function("first") + "\n\n" + _function("second")})
    first = build(repo, tmp_path / "o")
    assert first.chunks == 3 and first.embedded == 3
    (repo / "a.py").write_text("import os\n\n\n" + _function("second") + "\n\n" + _function("first"))
    commit(repo)
    s = build(repo, tmp_path / "o")
    assert s.rechunked == 1 and s.embedded == 0  # same texts, other lines: nothing to embed
    build(repo, tmp_path / "full", full=True)
    assert_same(tmp_path / "o", tmp_path / "full")


def test_code_moved_between_changed_files_reuses_its_vector(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A bundle keeps no text hashes (since format 6): an update works out those of the files it
    replaces, so code moved out of a changed or removed file keeps its vector; a copy of an
    untouched file's code is embedded again. Either way the bundle is a full build's."""
    files = {f"pkg/mod_{i:03}.py": "import os\n\n\n" + _function(f"work_{i}") for i in range(200)}
    repo = make_repo(files)
    build(repo, tmp_path / "o")
    write(repo, "new/copy.py", "import os\n\n\n" + _function("work_123") + "\n\n" + _function("work_7"))
    write(repo, "pkg/mod_123.py", "import os\n")
    commit(repo)
    s = build(repo, tmp_path / "o")
    assert s.rechunked == 2 and s.embedded == 1  # work_7's copy; work_123 moved with its vector
    build(repo, tmp_path / "full", full=True)
    assert_same(tmp_path / "o", tmp_path / "full")


def test_a_commit_that_changes_no_indexed_file_only_refreshes_the_source(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo({k: textwrap.dedent(v) for k, v in BASE.items()})
    out = tmp_path / "o"
    build(repo, out)
    inode = (out / mf.CODES).stat().st_ino
    commit(repo, "empty")
    s = build(repo, out)
    assert s.rechunked == 0 and s.embedded == 0 and s.chunks > 0
    assert open_bundle(out).manifest["source"]["commit"] == git(repo, "rev-parse", "HEAD").strip()
    assert (out / mf.CODES).stat().st_ino == inode  # hard-linked, not rewritten
    build(repo, tmp_path / "full", full=True)
    assert_same(out, tmp_path / "full")
    before = sorted((p.name, p.stat().st_mtime_ns) for p in out.rglob("*"))
    build(repo, out)  # nothing changed at all: nothing is written
    assert sorted((p.name, p.stat().st_mtime_ns) for p in out.rglob("*")) == before


def test_config_or_model_change_rebuilds_and_says_so(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo({k: textwrap.dedent(v) for k, v in BASE.items()})
    out = tmp_path / "o"
    assert build(repo, out, model="none").rebuilt == ""
    assert build(repo, out, model="default").rebuilt == "model changed (none -> all-MiniLM-L6-v2-static)"
    write(repo, ".cora.toml", "max_tokens = 300\n")
    commit(repo)
    assert build(repo, out).rebuilt == "chunker or its config changed"
    assert build(repo, out, full=True).rebuilt == "--full"
    cli = subprocess.run([sys.executable, "-m", "cora_ci", "index", str(repo), "--out", str(out), "-q",
                          "--config", str(repo / ".cora.toml"), "--model", "none"],
                         capture_output=True, text=True, check=False)  # fmt: skip
    assert cli.returncode == 0 and "full rebuild: model changed" in cli.stdout


def test_a_bundle_of_an_older_chunker_is_rebuilt_not_mixed(make_repo, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                            monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A newer chunker may cut the same file differently: an update would keep the older chunks of
    every unchanged file beside new ones, so a bundle of another chunker revision is rebuilt."""
    import cora_ci.chunking

    repo = make_repo({k: textwrap.dedent(v) for k, v in BASE.items()})
    out = tmp_path / "o"
    build(repo, out, model="none")
    write(repo, "extra.py", "def added():\n    return 1\n")
    commit(repo)
    monkeypatch.setattr(cora_ci.chunking, "REVISION", cora_ci.chunking.REVISION + 1)
    s = build(repo, out)
    assert s.rebuilt == "chunker or its config changed" and s.rechunked == len(BASE) + 1


def test_an_update_keeps_the_bundles_model_unless_one_is_named(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`index --model minilm` once, then plain `index` (a hook's): MiniLM still, not a rebuild with
    the default model (static); a model named by `--model` or the config wins."""
    from cora_ci.embedding import loading

    repo = make_repo({k: textwrap.dedent(v) for k, v in BASE.items()})
    out = tmp_path / "o"
    assert build(repo, out, model="minilm").model == loading.MINILM_NAME
    write(repo, "extra.py", "def added():\n    return 1\n")
    commit(repo)
    s = build(repo, out)
    assert (s.rebuilt, s.model, s.rechunked) == ("", loading.MINILM_NAME, 1)
    assert build(repo, out, model="none").rebuilt == f"model changed ({loading.MINILM_NAME} -> none)"
    assert build(repo, out).model == "none"  # and none stays none
    write(repo, ".cora.toml", 'model = "minilm"\n')
    commit(repo)
    assert build(repo, out).rebuilt == f"model changed (none -> {loading.MINILM_NAME})"
    assert build(repo, tmp_path / "first").model == loading.MINILM_NAME  # the config's, first build too
    assert build(repo, tmp_path / "plain", model="default").model == loading.STATIC_NAME


def test_a_second_update_waits_its_turn_with_a_clear_error(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo({"a.py": "x = 1\n"})
    out = tmp_path / "o"
    build(repo, out, model="none")
    with update_lock(out):
        cli = subprocess.run([sys.executable, "-m", "cora_ci", "index", str(repo), "--out", str(out), "--model", "none"],
                             capture_output=True, text=True, check=False)  # fmt: skip
        with pytest.raises(CoraError) as e:
            build(repo, out, model="none")
    assert cli.returncode == 5 and "CORA-BND-007" in cli.stderr and "another update" in cli.stderr
    assert e.value.code == "CORA-BND-007"
    # A holder that dies leaves no stale lock: the kernel drops it.
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from cora_ci.lock import update_lock\n"
        f"with update_lock(Path({str(out)!r})):\n    print('held', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    holder.kill()
    holder.wait()
    assert build(repo, out, model="none").rebuilt == ""


def test_an_update_with_nothing_left_to_index_fails_and_keeps_the_bundle(tmp_path: Path) -> None:
    """Every indexed file deleted: the update is CORA-IO-004, and the bundle of the commit before
    is still there, whole (nothing is lost by a failed update)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.py").write_text("def a_value():\n    return 1\n")
    commit(repo)
    out = tmp_path / "bundle"
    build(repo, out, model="none")
    before = open_bundle(out).manifest["source"]["commit"]
    git(repo, "rm", "-qf", "a.py")
    commit(repo)
    with pytest.raises(CoraError) as e:
        build(repo, out, model="none")
    assert e.value.code == "CORA-IO-004" and "it holds no file" in e.value.message
    kept = open_bundle(out)
    assert kept.manifest["source"]["commit"] == before and len(kept.chunks) == 1


class Commits(RuleBasedStateMachine):
    """Random commit sequences; after each, the updated bundle must equal a fresh full build."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="cora-sm-"))
        self.repo = self.tmp / "repo"
        self.repo.mkdir()
        for args in (
            ["init", "-q", "-b", "main"],
            ["config", "user.email", "t@e.x"],
            ["config", "user.name", "t"],
        ):
            git(self.repo, *args)
        self.excluded = ["notes/"]
        self._configure()
        for k, v in BASE.items():
            write(self.repo, k, v)
        commit(self.repo)
        self.n = 0
        build(self.repo, self.tmp / "inc")

    def teardown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _configure(self) -> None:
        """The config, which leaves itself and the boosts out too: a commit changing either one
        changes no indexed file, yet what the bundle records."""
        globs = ", ".join(f'"{g}"' for g in [*self.excluded, ".cora.toml", ".cora-boosts"])
        write(self.repo, ".cora.toml", f"max_file_bytes = 1500\nexclude = [{globs}]\n")

    def _files(self) -> list[str]:
        return sorted(git(self.repo, "ls-files").split())

    def _victims(self) -> list[str]:
        return [f for f in self._files() if f not in (".cora.toml", ".cora-boosts")]

    @rule(size=st.integers(1, 3))
    def note(self, size: int) -> None:
        """A file the config leaves out: the commit changes none of the bundle's files."""
        self.n += 1
        write(self.repo, f"notes/n{self.n % 3}.py", f"def note_{self.n}():\n    return {size}\n" * size)

    @rule()
    def exclude_generated(self) -> None:
        """The config now leaves `gen/` out, or takes it back: the same files, another selection."""
        self.excluded = ["notes/"] if "gen/" in self.excluded else ["notes/", "gen/"]
        self._configure()

    @rule(directive=st.sampled_from(["dir:src", "symbol:Auth", "path:README.md"]))
    def boost(self, directive: str) -> None:
        write(self.repo, ".cora-boosts", f"{directive}\n")

    @rule(kind=st.sampled_from(["py", "ts", "md"]), size=st.integers(1, 4))
    def add(self, kind: str, size: int) -> None:
        self.n += 1
        if kind == "py":
            text = "".join(f"def f{self.n}_{i}(a):\n    return helper(a) + {i}\n\n\n" for i in range(size))
        elif kind == "ts":
            text = "".join(
                f"export function g{self.n}_{i}(a: number) {{\n  return a * {i};\n}}\n" for i in range(size)
            )
        else:
            text = "".join(f"## Part {i}\n\nInstall step {self.n}.\n\n" for i in range(size))
        write(self.repo, f"gen/m{self.n}.{kind}", text)

    @precondition(lambda self: self._victims())
    @rule(data=st.data())
    def edit(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(self._victims()))
        p = self.repo / name
        p.write_text(p.read_text() + f"\n\ndef edited_{self.n}():\n    return 0\n" if name.endswith(".py")
                     else p.read_text() + f"\n// edit {self.n}\n")  # fmt: skip
        self.n += 1

    @precondition(lambda self: len(self._victims()) > 1)  # a repository with nothing to index is
    @rule(data=st.data())  # CORA-IO-004 (test_repo_kinds), not an update to compare with a build
    def delete(self, data: st.DataObject) -> None:
        git(self.repo, "rm", "-qf", data.draw(st.sampled_from(self._victims())))

    @precondition(lambda self: self._victims())
    @rule(data=st.data())
    def rename(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(self._victims()))
        self.n += 1
        (self.repo / "moved").mkdir(exist_ok=True)
        git(self.repo, "mv", name, f"moved/{self.n}_{Path(name).name}")

    @precondition(lambda self: self._victims())
    @rule(data=st.data(), change=st.sampled_from(["mode", "binary", "too_large"]))
    def transform(self, data: st.DataObject, change: str) -> None:
        p = self.repo / data.draw(st.sampled_from(self._victims()))
        if change == "mode":
            os.chmod(p, 0o755)
        elif change == "binary":
            p.write_bytes(b"\x00\x01binary\x00" * 10)
        else:
            p.write_text("# big\n" + "x = 1\n" * 400)

    @rule()
    def commit_and_update(self) -> None:
        commit(self.repo)
        s = build(self.repo, self.tmp / "inc")
        assert s.rebuilt == ""
        full = self.tmp / "full"
        shutil.rmtree(full, ignore_errors=True)
        build(self.repo, full, full=True)
        assert_same(self.tmp / "inc", full)

    @invariant()
    def bundle_matches_head(self) -> None:
        head = git(self.repo, "rev-parse", "HEAD").strip()
        assert open_bundle(self.tmp / "inc").manifest["source"]["commit"] == head


Commits.TestCase.settings = settings(
    max_examples=15, stateful_step_count=8, deadline=None, suppress_health_check=list(HealthCheck)
)
test_random_commit_sequences = Commits.TestCase


def test_an_update_does_not_check_again_the_indexes_this_machine_wrote(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A bundle this machine wrote (or checked) is reused without opening its BM25 and vector
    indexes again (their checks are remembered per bundle version); one it never saw is checked."""
    import dataclasses

    from cora_ci import verified
    from cora_ci.build.previous import reusable
    from cora_ci.config import discover
    from cora_ci.embedding import load_embedder

    repo = make_repo({k: textwrap.dedent(v) for k, v in BASE.items()})
    out = tmp_path / "o"
    build(repo, out, model="static")
    info, cfg = dataclasses.asdict(load_embedder("static").info), discover(repo)  # type: ignore[union-attr]
    old, why = reusable(open_bundle(out), cfg, info, None)
    assert old is not None and why == "" and not {"lexical", "vectors"} & set(vars(old))
    verified.record_file("checked").unlink()  # as on a machine that never saw this version
    old, why = reusable(open_bundle(out), cfg, info, None)
    assert old is not None and {"lexical", "vectors"} <= set(vars(old))


def test_a_build_lists_and_an_update_of_a_few_files_writes_with_the_collector_paused(  # type: ignore[no-untyped-def]
    make_repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cyclic collector walked a build's repository-sized objects for nothing (the listing, the
    previous manifest as it is opened, every file's row): every build lists and opens with it off,
    an update of a few files writes so too, and it is on again after; a first build, or an update
    of more than `_PAUSED` files, writes with it (their garbage grows with the repository)."""
    import gc

    from cora_ci.build import pipeline, update

    collections: list[int] = []
    during: list[list[int]] = []  # the collections while each build wrote (`update._write`)
    listing: list[tuple[str, bool]] = []  # whether the collector ran while each build listed and opened
    write = update._write

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    def recorded(*args: Any) -> Any:
        collections.clear()
        try:
            return write(*args)
        finally:
            during.append(list(collections))

    def noted(name: str, fn: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            listing.append((name, gc.isenabled()))
            return fn(*args, **kwargs)

        return call

    monkeypatch.setattr(update, "_write", recorded)
    for name in ("snapshot", "snapshot_since", "open_previous"):
        monkeypatch.setattr(pipeline, name, noted(name, getattr(pipeline, name)))
    monkeypatch.setattr(update, "_PAUSED", 3)  # 3 files changed: paused; then 6: not
    repo = make_repo(
        {f"pkg/m{i}.py": f"def f{i}(x):\n    return [x, {{'k': x}}] * {i}\n" for i in range(400)}
    )
    gc.callbacks.append(seen)
    try:
        build(repo, tmp_path / "out")
        for step in (1, 2):
            for i in range(step * 3):
                (repo / f"pkg/m{i}.py").write_text(f"def g{i}_{step}(x):\n    return x\n")
            commit(repo)
            assert build(repo, tmp_path / "out").rechunked == step * 3 and gc.isenabled()
    finally:
        gc.callbacks.remove(seen)
    first, few, more = during
    assert first and not few and more
    assert {name for name, _ in listing} == {"snapshot", "snapshot_since", "open_previous"}
    assert not any(on for _, on in listing)
