"""`cora-ci index --shard I/N`: a stable, balanced split of a tree, and shard bundles that are
bundles like any other (queried, verified, updated alone)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git
from hypothesis import given, settings
from hypothesis import strategies as st

from cora_ci.build import build
from cora_ci.bundle import open_bundle
from cora_ci.errors import CoraError
from cora_ci.files.shard import FILE_COST, SLOTS, ShardSpec, assign, parse_spec, slot_of, slot_shards

CORA = shutil.which("cora-ci", path=os.path.dirname(sys.executable)) or "cora-ci"


pytestmark = pytest.mark.usefixtures("private_cache")


def cora(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CORA, *args], cwd=cwd, capture_output=True, text=True, check=False)


# ---- the split -------------------------------------------------------------------------------

_trees = st.dictionaries(
    st.text(alphabet="abcdefghij/._-", min_size=1, max_size=12),
    st.integers(min_value=0, max_value=200_000),
    max_size=300,
)


@settings(max_examples=300, deadline=None)
@given(_trees, st.integers(min_value=1, max_value=16))
def test_shards_partition_the_files_and_balance_their_weight(tree: dict[str, int], n: int) -> None:
    """Every file is in exactly one shard, whatever the order it is listed in, and each shard
    weighs the mean within the heaviest slot's weight (the stated bound, both ways)."""
    files = sorted(tree.items())
    shards = assign(files, n)
    assert len(shards) == len(files) and all(0 <= s < n for s in shards)
    shuffled = files[::-1]
    assert dict(zip(shuffled, assign(shuffled, n), strict=True)) == dict(zip(files, shards, strict=True))
    slots = [0] * SLOTS
    for p, size in files:
        slots[slot_of(p)] += size + FILE_COST
    total, heaviest = sum(slots), max(slots)
    loads = [0] * n
    for (_, size), s in zip(files, shards, strict=True):
        loads[s] += size + FILE_COST
    for load in loads:
        assert abs(load * n - total) <= heaviest * n


def test_many_small_files_balance_tightly_and_an_edit_moves_few() -> None:
    rng = random.Random(7)
    files = {f"src/pkg{i % 40}/mod_{i}.py": rng.randint(200, 20_000) for i in range(5000)}
    shards = assign(sorted(files.items()), 4)
    loads = [0, 0, 0, 0]
    for (_, size), s in zip(sorted(files.items()), shards, strict=True):
        loads[s] += size
    assert max(loads) / min(loads) < 1.02
    # A commit that edits 50 files and adds 20: few files change shard (each moves only the ends
    # of the ranges), so each shard's bundle mostly updates in place.
    after = dict(files)
    for p in rng.sample(sorted(files), 50):
        after[p] = rng.randint(200, 20_000)
    after |= {f"src/new/file_{i}.py": rng.randint(200, 20_000) for i in range(20)}
    moved_to = dict(zip(sorted(after), assign(sorted(after.items()), 4), strict=True))
    moved = sum(moved_to[p] != s for (p, _), s in zip(sorted(files.items()), shards, strict=True))
    assert moved < len(files) * 0.02, moved


def test_slot_ranges_are_contiguous_and_cover_every_shard() -> None:
    weights = [1] * SLOTS
    shards = slot_shards(weights, 4)
    assert shards == sorted(shards) and set(shards) == {0, 1, 2, 3}
    assert [shards.count(k) for k in range(4)] == [SLOTS // 4] * 4
    assert slot_shards([0] * SLOTS, 3) == [0] * SLOTS  # an empty tree: nothing to cut


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", f"1/{SLOTS + 1}", "-1/2", ""])
def test_a_bad_shard_spec_is_refused(text: str) -> None:
    with pytest.raises(CoraError) as e:
        parse_spec(text)
    assert e.value.code == "CORA-CFG-002"


def test_shard_specs() -> None:
    assert parse_spec("2/4") == ShardSpec(2, 4) and str(ShardSpec(2, 4)) == "2/4"
    assert parse_spec(" 1 / 1 ") == ShardSpec(1, 1)


# ---- shard bundles ---------------------------------------------------------------------------

FILES = {
    f"pkg/mod_{i:02}.py": f"def work_{i}(x):\n" + f"    x = x * {i}\n" * (1 + 20 * (i % 5)) + "    return x\n"
    for i in range(24)
}
FILES["README.md"] = "# Demo\n\n## Install\n\nRun it.\n"


def test_shard_bundles_split_the_full_build_and_work_alone(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(FILES)
    build(repo, tmp_path / "full", model="none")
    full = open_bundle(tmp_path / "full").manifest
    seen: list[str] = []
    for i in (1, 2, 3):
        out = tmp_path / f"s{i}"
        r = cora("index", str(repo), "--out", str(out), "--model", "none", "--shard", f"{i}/3", "-q")
        assert r.returncode == 0 and f", shard {i}/3: " in r.stdout, r.stdout + r.stderr
        m = open_bundle(out).manifest
        assert m["source"] == full["source"]  # the whole tree's identity: commit and tree
        assert m["shard"]["index"] == i and m["shard"]["count"] == 3 and m["shard"]["files"] == len(FILES)
        assert len(m["shard"]["digest"]) == 64
        seen += m["files"]["path"]
        assert m["files"]["path"]  # 25 files of similar size: no shard is empty
        # A valid bundle on its own: verified, described and queried.
        assert cora("verify", str(out)).returncode == 0
        info = json.loads(cora("info", str(out), "--format", "json").stdout)
        assert info["stats"]["files"] == len(m["files"]["path"]) and info["shard"]["index"] == i
        assert f"shard    {i}/3 of the tree's {len(FILES)} files" in cora("info", str(out)).stdout
        name = m["files"]["path"][0].split("_")[-1].removesuffix(".py")
        if name.isdigit():
            q = cora("query", f"work_{int(name)}", "--bundle", str(out), "--format", "json", "-k", "1")
            assert json.loads(q.stdout)["results"][0]["anchor"].endswith(f"work_{int(name)}")
    assert sorted(seen) == sorted(full["files"]["path"])  # a partition: each file exactly once


def test_a_shard_updates_in_place_and_a_new_split_rebuilds(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(FILES)
    out = tmp_path / "s1"
    first = build(repo, out, model="none", shard=ShardSpec(1, 2))
    mine = open_bundle(out).manifest["files"]["path"]
    (repo / mine[0]).write_text((repo / mine[0]).read_text() + "\n\ndef extra(y):\n    return y\n")
    git(repo, "commit", "-qam", "edit")
    s = build(repo, out, model="none", shard=ShardSpec(1, 2))
    assert s.rebuilt == "" and s.rechunked >= 1 and s.files < first.files + 3
    assert open_bundle(out).manifest["shard"]["index"] == 1
    # A commit outside this shard: no file of it changed, only the source and the tree's digest.
    other = next(p for p in FILES if p not in mine)
    (repo / other).write_text((repo / other).read_text() + "# more\n")
    git(repo, "commit", "-qam", "elsewhere")
    digest = open_bundle(out).manifest["shard"]["digest"]
    s = build(repo, out, model="none", shard=ShardSpec(1, 2))
    m = open_bundle(out).manifest
    assert s.rechunked == 0 and m["shard"]["digest"] != digest
    assert m["source"]["commit"] == git(repo, "rev-parse", "HEAD").strip()
    # Another N, or no shard at all, rebuilds and says so.
    r = cora("index", str(repo), "--out", str(out), "--model", "none", "--shard", "1/3", "-q")
    assert r.returncode == 0 and "full rebuild: shard changed (1/2 -> 1/3)" in r.stdout, r.stdout
    r = cora("index", str(repo), "--out", str(out), "--model", "none", "-q")
    assert "full rebuild: shard changed (1/3 -> full)" in r.stdout
    assert "shard" not in open_bundle(out).manifest


def test_shards_of_a_plain_directory_and_of_the_working_tree(make_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo(FILES)
    (repo / "pkg/new.py").write_text("def fresh():\n    return 1\n")  # untracked: in the working tree
    plain = tmp_path / "plain"
    shutil.copytree(repo, plain, ignore=shutil.ignore_patterns(".git"))
    for src, kind in ((repo, "worktree"), (plain, None)):
        paths: list[str] = []
        for i in (1, 2):
            out = tmp_path / f"{src.name}-{i}"
            build(src, out, kind=kind, model="none", shard=ShardSpec(i, 2))
            paths += open_bundle(out).manifest["files"]["path"]
        assert sorted(paths) == sorted([*FILES, "pkg/new.py"])
