"""A shard's texts in blocks (format 9.0): each file's texts come back byte for byte, block ends
follow the files so an update compresses again only the blocks it changed, and a hostile block
is refused before it can inflate."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard
from bundle_fuzz import resign
from conftest import git
from hypothesis import given, settings
from hypothesis import strategies as st

from cora_ci.build import build
from cora_ci.bundle import manifest as mf
from cora_ci.bundle import open_bundle
from cora_ci.bundle.blocks import MAX_BLOCK, BlockTexts, cuts, held, inflate, pack, plain
from cora_ci.errors import CoraError

_files = st.dictionaries(
    st.text("abcdefgh/._", min_size=1, max_size=12),
    st.binary(max_size=40_000) | st.integers(0, 90_000).map(lambda n: bytes(range(256)) * (n // 256)),
    max_size=30,
).map(lambda d: sorted(d.items()))


@settings(max_examples=60, deadline=None)
@given(_files)
def test_every_files_texts_come_back_from_its_block(files: list[tuple[str, bytes]]) -> None:
    paths, texts = [p for p, _ in files], [t for _, t in files]
    blocks, counts = pack(paths, texts, {})
    assert sum(counts) == len(files) and all(counts) and len(blocks) == len(counts)
    assert list(BlockTexts(blocks, counts, [len(t) for t in texts])) == texts
    start = 0
    for n in counts:  # a block ends once it holds MAX_BLOCK: only its last file takes it past
        assert sum(map(len, texts[start : start + n - 1])) < MAX_BLOCK
        start += n


def _texts(n: int, seed: int = 0) -> tuple[list[str], list[bytes]]:
    paths = [f"src/mod_{i:03d}.py" for i in range(n)]
    texts = [
        (f"def f{i}_{seed if i == 40 else 0}(x):\n    return x * {i}\n" * (40 + i % 50)).encode()
        for i in range(n)
    ]
    return paths, texts


def test_an_edit_changes_its_own_block_and_the_rest_are_reused() -> None:
    """Ends chosen by the files themselves: one file grown, one file removed, and every other
    block is the same frame, taken from what was read instead of compressed again."""
    paths, texts = _texts(120)
    blocks, counts = pack(paths, texts, {})
    assert len(blocks) >= 5
    seen: dict[bytes, bytes] = {}
    list(BlockTexts(blocks, counts, [len(t) for t in texts], seen))  # a reader notes each block
    grown = [*texts[:40], texts[40] * 3, *texts[41:]]
    for new_paths, new_texts in ((paths, grown), (paths[:70] + paths[71:], texts[:70] + texts[71:])):
        again, _ = pack(new_paths, new_texts, seen)
        fresh, _ = pack(new_paths, new_texts, {})
        assert again == fresh  # reused frames are the bytes a fresh compression gives
        assert len(set(again) - set(blocks)) <= 2


def test_texts_held_by_a_build_weigh_what_their_frame_does() -> None:
    """A build holds every fresh file's texts until its shard is written (a 100k-file build: all
    of them): held as a frame whose memory is its own bytes, not the bound zstd allocates for it,
    and given back as they were."""
    texts = _texts(200)[1]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        frames = [held(t) for t in texts]
        cost = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert cost < sum(map(len, texts)) / 4
    assert [plain(f) for f in frames] == texts
    assert plain(texts[0]) == texts[0]  # texts read from a block are msgpack already


def test_a_hostile_block_is_refused_before_it_inflates() -> None:
    big = zstandard.ZstdCompressor().compress(b"\0" * (1 << 20))
    assert inflate(big) == b"\0" * (1 << 20)
    with pytest.raises(ValueError, match="at most 1000"):
        inflate(big, limit=1000)
    unsized = zstandard.ZstdCompressor(write_content_size=False).compress(b"abc")
    with pytest.raises(ValueError, match="and said"):
        inflate(unsized)
    for junk in (b"", b"not a frame", big[:-5]):
        with pytest.raises(ValueError):
            inflate(junk)
    texts = BlockTexts([zstandard.ZstdCompressor().compress(b"abcdef")], [2], [3, 4])
    with pytest.raises(ValueError, match="holds 6 bytes, its files 7"):
        texts[0]
    with pytest.raises(ValueError, match="do not fit"):
        BlockTexts([b"x"], [3], [1, 1])


def test_cuts_need_no_file_before_the_block() -> None:
    """A block's end depends on its own files: the same files after a different first block end
    their blocks at the same files."""
    paths, texts = _texts(120)
    sizes = [len(t) for t in texts]
    whole = cuts(paths, sizes)
    first = whole[0]
    assert cuts(paths[first:], sizes[first:]) == whole[1:]


def test_an_update_compresses_only_the_blocks_it_changed(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        f"pkg/m{i:03d}.py": f"def f{i}(x):\n    '''Step {i}.'''\n    return x + {i}\n" * 30 for i in range(80)
    }
    repo = make_repo(files)
    out = tmp_path / "o"
    build(repo, out, model="none")
    before = {
        n: mf.unpack((out / n).read_bytes())["blocks"] for n in open_bundle(out).manifest["shards"] if n
    }
    assert max(map(len, before.values())) >= 4
    compressed: list[int] = []
    real = zstandard.ZstdCompressor

    class Counting:  # the real compressor, a block compressor's calls counted
        def __init__(self, level: int = 3, **kwargs: object) -> None:
            self._real = real(level=level, **kwargs)
            # not a fresh file's texts held until they are written (level 1), nor a file's blob
            self._counted = level > 1 and "dict_data" not in kwargs

        def compress(self, data: bytes) -> bytes:
            if self._counted:
                compressed.append(len(data))
            return bytes(self._real.compress(data))

    monkeypatch.setattr(zstandard, "ZstdCompressor", Counting)
    (repo / "pkg/m040.py").write_text(files["pkg/m040.py"] + "def g():\n    return 1\n")
    git(repo, "commit", "-qam", "edit")
    build(repo, out, model="none")
    assert len(compressed) == 1
    after = {n: mf.unpack((out / n).read_bytes())["blocks"] for n in open_bundle(out).manifest["shards"] if n}
    assert sum(len(set(after[n]) - set(before[n])) for n in after) == 1
    assert any("def g():" in t for t in open_bundle(out).chunks.column("text"))


@pytest.mark.parametrize("extra", [0, 1])  # texts that do not decode; a block of another size
def test_a_damaged_block_is_reported_with_its_shard_and_an_update_rebuilds(
    make_repo: Callable[[dict[str, str]], Path], extra: int
) -> None:
    repo = make_repo({"a.py": "def f():\n    return 1\n", "b.py": "def g():\n    return 2\n"})
    build(repo, model="none")
    out = repo / ".cora" / "index"
    name = next(n for n in open_bundle(out).manifest["shards"] if n)
    shard = mf.unpack((out / name).read_bytes())
    bad = b"\x93" * (sum(shard["files"]["texts"]) + extra)
    shard["blocks"][0] = zstandard.ZstdCompressor().compress(bad)
    (out / name).write_bytes(mf.pack(shard))
    resign(out)
    with pytest.raises(CoraError) as e:
        open_bundle(out).chunks.file_chunks(0)
    assert e.value.code == "CORA-BND-004" and name in e.value.message
    (repo / "a.py").write_text("def f():\n    return 3\n")
    git(repo, "commit", "-qam", "edit")
    rebuilt = build(repo, model="none").rebuilt  # b.py's row is read from the damaged block
    assert rebuilt.startswith("previous bundle unusable (CORA-BND-004"), rebuilt
    assert len(open_bundle(out).chunks.column("text")) == 2


def test_a_reader_does_not_note_the_blocks_it_reads(make_repo: Callable[[dict[str, str]], Path]) -> None:
    """Only an update keeps the frames of the blocks it read (by a hash of their bytes): a query
    that reads texts hashes none of them."""
    repo = make_repo({f"pkg/m{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(20)})
    build(repo, model="none")
    b = open_bundle(repo / ".cora" / "index")
    assert any("return x + 3" in t for t in b.chunks.column("text"))
    assert b.shards.seen is None
    b.shards.record()
    assert b.shards.seen == {}
