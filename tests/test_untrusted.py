"""Untrusted bundles: a damaged file of any kind, or hostile content behind consistent checksums
(what a fork's CI can publish), gives `info`, `verify`, `query` one line with a CORA-BND code
naming the file, and an update rebuilds from scratch saying why; readers never leave the bundle
directory and never mix two versions of a bundle."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import msgpack
import pytest
from bundle_fuzz import commit, make_repo, read_all, resign

from cora_ci.build import build
from cora_ci.bundle import manifest as mf
from cora_ci.bundle import open_bundle
from cora_ci.bundle.report import check
from cora_ci.errors import CoraError


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A repository whose HEAD is one commit past its bundle (so `index` has an update to do)."""
    root = tmp_path_factory.mktemp("untrusted")
    os.environ["XDG_CACHE_HOME"] = str(root / "cache")
    repo = make_repo(root)
    bundle = root / "bundle"
    build(repo, bundle, model="default")
    (repo / "src" / "more.py").write_text("def more_links(x):\n    return x\n")
    commit(repo)
    return repo, bundle


def _copy(bundle: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "b"
    shutil.copytree(bundle, dest, copy_function=shutil.copyfile)
    return dest


def _truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _segment(b: Path) -> Path:
    return next(p for p in sorted((b / "bm25").iterdir()) if p.suffix == ".idx")


def _meta_extra_segment(b: Path) -> None:
    meta = b / "bm25" / "meta.json"
    meta.write_text(meta.read_text().replace('"segments": [', '"segments": [{"deletes": null, "max_doc": 1, '
                                             '"segment_id": "00000000-0000-0000-0000-000000000000"}, '))  # fmt: skip


# (what is damaged, how, re-signed, the code, what the message names)
CASES: list[tuple[str, Callable[[Path], None], bool, str, str]] = [
    ("manifest", lambda b: _truncate(b / mf.MANIFEST), False, "CORA-BND-003", "manifest.msgpack"),
    ("manifest.sha256", lambda b: (b / mf.MANIFEST_SUM).write_text("0" * 64), False, "CORA-BND-003", "manifest"),
    ("shard", lambda b: _truncate(b / "shards" / "000.msgpack"), False, "CORA-BND-003", "shards/000.msgpack"),
    ("vectors", lambda b: _truncate(b / mf.CODES), False, "CORA-BND-003", "vectors.codes"),
    ("segment", lambda b: _truncate(_segment(b)), False, "CORA-BND-003", ".idx"),
    ("meta.json", lambda b: _truncate(b / "bm25" / "meta.json"), False, "CORA-BND-003", "bm25/meta.json"),
    ("shard, re-signed", lambda b: _truncate(b / "shards" / "000.msgpack"), True, "CORA-BND-004", "shards/000.msgpack"),
    ("vectors, re-signed", lambda b: _truncate(b / mf.CODES), True, "CORA-BND-004", "vectors.codes"),
    ("segment, re-signed", lambda b: _truncate(_segment(b)), True, "CORA-BND-004", "bm25"),
    ("meta.json, re-signed", _meta_extra_segment, True, "CORA-BND-004", "bm25: meta.json"),
]  # fmt: skip


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cora_ci", *args], capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(
    ("damage", "resigned", "code", "names"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_damaged_file_is_one_clear_error_and_an_update_rebuilds(
    built: tuple[Path, Path], tmp_path: Path, damage: Callable[[Path], None], resigned: bool, code: str, names: str
) -> None:  # fmt: skip
    repo, bundle = built
    b = _copy(bundle, tmp_path)
    damage(b)
    if resigned:
        resign(b)
    for args in (["info", str(b)], ["query", "parse links", "--bundle", str(b), "--format", "json"],
                 ["verify", str(b)]):  # fmt: skip
        p = _cli(*args)
        last = (p.stderr.splitlines() or [f"exit {p.returncode}: {p.stdout[:300]}"])[-1]
        assert p.returncode == 5 and last.startswith("error: CORA-BND-00"), (args, last)
        assert "Traceback" not in p.stderr and p.stdout == ""
        if args[0] == "verify":  # each problem listed, then the summary line
            assert names in p.stderr and last.startswith("error: CORA-BND-00"), p.stderr
        else:
            assert len(p.stderr.splitlines()) == 1 and last.startswith(f"error: {code}") and names in last, (
                p.stderr
            )
    p = _cli("index", str(repo), "--out", str(b), "-q")
    assert p.returncode == 0, p.stderr
    assert f"full rebuild: previous bundle unusable ({code}" in p.stdout, p.stdout
    assert check(b) == [] and read_all(b) == "ok"


def _rewrite(b: Path, change: Callable[[dict[str, object]], None], target: str = mf.MANIFEST) -> None:
    m = msgpack.unpackb((b / target).read_bytes(), raw=False, strict_map_key=False)
    change(m)
    (b / target).write_bytes(msgpack.packb(m, use_bin_type=True))
    resign(b)


def _files(m: dict[str, object]) -> dict[str, list[object]]:
    files = m["files"]
    assert isinstance(files, dict)
    return files


HOSTILE: list[tuple[str, Callable[[dict[str, object]], None], str]] = [
    ("path leaving the repository", lambda m: _files(m)["path"].__setitem__(0, "../../etc/passwd"), "files.path"),
    ("ids not a multiple of 8", lambda m: _files(m)["ids"].__setitem__(0, b"\x01" * 7), "files.ids"),
    ("columns of different lengths", lambda m: _files(m)["lang"].pop(), "different lengths"),
    ("segment id with a path", lambda m: m["lexical"]["segments"].__setitem__(  # type: ignore[index]
        next(i for i, s in enumerate(m["lexical"]["segments"]) if s), ["../../../../etc/passwd", 1]),  # type: ignore[index]
     "lexical.segments"),
    ("shard outside its directory", lambda m: m["shards"].__setitem__(0, "../x.msgpack"), "shards[0]"),  # type: ignore[index]
    ("absolute artifact", lambda m: m["artifacts"].__setitem__("/etc/passwd", {"sha256": "0" * 64, "size": 1}),  # type: ignore[index]
     "unsafe file name"),
    ("an extension type", lambda m: m.__setitem__("built_at", msgpack.ExtType(1, b"x")), "extension type"),
    ("deep nesting", lambda m: m["chunker"]["config"].__setitem__("x", [[[[[[[[1]]]]]]]]), "nested too deep"),  # type: ignore[index]
    ("too many buckets", lambda m: m.__setitem__("shards", [None] * 256), "shards"),
    ("model without a dimension", lambda m: m["model"].__setitem__("dim", "384"), "model.dim"),  # type: ignore[index]
]  # fmt: skip


@pytest.mark.parametrize(("change", "says"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_hostile_manifests_behind_consistent_checksums_are_refused(
    built: tuple[Path, Path], tmp_path: Path, change: Callable[[dict[str, object]], None], says: str
) -> None:
    b = _copy(built[1], tmp_path)
    _rewrite(b, change)
    with pytest.raises(CoraError) as e:
        open_bundle(b)
    assert (
        e.value.code == "CORA-BND-004" and says in e.value.message and "manifest.msgpack" in e.value.message
    )


def test_hostile_shards_and_chunk_blobs_are_refused_when_read(
    built: tuple[Path, Path], tmp_path: Path
) -> None:
    b = _copy(built[1], tmp_path)
    shard = "shards/000.msgpack"

    def blob_columns(m: dict[str, object]) -> None:
        data = mf.unpack_blob(m["files"]["data"][0])  # type: ignore[index]
        data["chunks"]["parent"] = [12345] * len(data["chunks"]["parent"])  # not a chunk of the file
        m["files"]["data"][0] = mf.pack_blob(data)  # type: ignore[index]

    _rewrite(b, blob_columns, shard)
    bundle = open_bundle(b)  # shards are read when needed
    with pytest.raises(CoraError) as e:
        [bundle.chunks.file_chunks(fi) for fi in range(len(bundle.manifest["files"]["path"]))]
    assert e.value.code == "CORA-BND-004" and shard in e.value.message and "chunks.parent" in e.value.message

    def imports(m: dict[str, object]) -> None:
        listed = mf.unpack_blob(m["imports"])  # type: ignore[arg-type]
        m["imports"] = mf.pack_blob([7, *listed[1:]])

    for change in (imports, lambda m: m.pop("imports"), lambda m: m.__setitem__("imports", b"x")):
        _rewrite(b, change, shard)
        with pytest.raises(CoraError) as e:
            open_bundle(b).chunks.file_chunks(0)
        assert e.value.code == "CORA-BND-004" and shard in e.value.message


def test_a_link_inside_a_bundle_is_not_followed(built: tuple[Path, Path], tmp_path: Path) -> None:
    b = _copy(built[1], tmp_path)
    seg = _segment(b)
    outside = tmp_path / "outside.idx"
    seg.rename(outside)
    seg.symlink_to(outside)  # same bytes, so the checksum alone would pass
    with pytest.raises(CoraError) as e:
        open_bundle(b)
    assert e.value.code == "CORA-BND-003" and "not a regular file" in e.value.message
    shutil.rmtree(b / "shards")
    (tmp_path / "elsewhere").mkdir()
    shutil.copytree(built[1] / "shards", tmp_path / "elsewhere" / "shards")
    (b / "shards").symlink_to(tmp_path / "elsewhere" / "shards")
    seg.unlink()
    outside.rename(seg)
    with pytest.raises(CoraError) as e:
        open_bundle(b)
    assert e.value.code == "CORA-BND-003" and "shards/" in e.value.message


def test_a_reader_sees_the_bundle_it_opened_or_retries_on_the_new_one(
    built: tuple[Path, Path], tmp_path: Path
) -> None:
    """An update swaps a new bundle in while a reader holds the old one: the reader reads the old
    one's files or meets them gone (CORA-BND-003) and knows it was replaced; a query then runs
    once more on the new bundle."""
    from cora_ci.render.query import Where, _once_more_if_replaced

    repo, bundle = built
    b = _copy(bundle, tmp_path)
    old = open_bundle(b)
    old_id = old.id
    build(repo, b)  # the update: HEAD is one commit ahead
    assert old.replaced() and open_bundle(b).id != old_id
    with pytest.raises(CoraError) as e:
        old.chunks.file_chunks(0)  # the old bundle's files are gone: never the new one's
    assert e.value.code == "CORA-BND-003"
    calls: list[str | None] = []

    def read(bundle: object) -> int:
        calls.append(getattr(bundle, "id", None))
        if len(calls) == 1:
            build(repo, b, full=True, model="none")  # swapped after this reader opened its bundle
        return len(bundle.chunks.file_chunks(0))  # type: ignore[attr-defined]

    assert _once_more_if_replaced(Where(b, None, None), read) > 0
    assert len(calls) == 2 and calls[0] != calls[1] == open_bundle(b).id


def test_verify_rebuilds_the_bm25_index_and_sees_altered_postings(
    built: tuple[Path, Path], tmp_path: Path
) -> None:
    """A segment file changed in the middle (sizes kept, checksums made to match) opens and may even
    answer: `verify` writes every segment again from the manifest's chunks and names the odd one."""
    _, bundle = built
    assert check(bundle) == []  # an intact bundle rebuilds to the very same segments
    b = _copy(bundle, tmp_path)
    postings = next(p for p in sorted((b / "bm25").iterdir()) if p.suffix == ".pos")
    data = bytearray(postings.read_bytes())
    data[8] ^= 0x01  # in the postings, not in the footer tantivy checks when it opens the file
    postings.write_bytes(bytes(data))
    resign(b)
    problems = check(b)
    assert problems == [f"bm25: segment {postings.stem}'s files are not the content it is named for"]
    out = _cli("verify", str(b))
    assert out.returncode == 5 and f"FAIL bm25: segment {postings.stem}" in out.stderr


def test_verify_pins_the_digest_of_what_was_downloaded(built: tuple[Path, Path], tmp_path: Path) -> None:
    from cora_ci.bundle.archive import write_archive

    _, bundle = built
    packed = write_archive(bundle, tmp_path / "bundle.tar.gz")
    assert _cli("verify", str(packed.path), "--digest", packed.sha256.upper()).returncode == 0
    bundle_id = (bundle / mf.MANIFEST_SUM).read_text().split()[0]
    assert _cli("verify", str(bundle), "--digest", bundle_id).returncode == 0  # a directory: its bundle id
    wrong = _cli("verify", str(packed.path), "--digest", bundle_id)
    assert wrong.returncode == 5 and wrong.stderr.startswith("error: CORA-BND-012: ")
