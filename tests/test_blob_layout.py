"""A file blob's layout (format 8.0): the chunk columns ranking reads, then graph links, decoded
only as far as a reader needs; the texts apart, in the shard's blocks (9.0).
Ranking reads the light columns of many files and an update the links of many: neither reads
texts. Real repositories, real builds."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path

import msgpack
import pytest

from cora_ci.build import build
from cora_ci.bundle import blobs, open_bundle
from cora_ci.bundle import manifest as mf
from cora_ci.errors import CoraError

LIGHT = tuple(c for c in mf.CHUNK_COLUMNS if c not in ("hierarchy", "tokens", "header", "elided", "text"))


def _long_module(n: int) -> str:
    body = "".join(f"    total += {i} * value  # step {i} of the running total\n" for i in range(60))
    return "".join(f"def step_{k}(value):\n    total = 0\n{body}    return total\n\n\n" for k in range(n))


@pytest.fixture
def bundle_rows(make_repo: Callable[[dict[str, str]], Path]) -> list[dict[str, object]]:
    repo = make_repo({"src/steps.py": _long_module(30), "src/use.py": "from steps import step_1\n\n\n"
                      "def run():\n    return step_1(2)\n"})  # fmt: skip
    build(repo, model="none")
    b = open_bundle(repo / ".cora" / "index")
    return [b.shards.row(fi) for fi in range(len(b.shards.top_column("path")))]


def test_light_columns_come_first_then_links_and_the_texts_apart(
    bundle_rows: list[dict[str, object]],
) -> None:
    for row in bundle_rows:
        data = msgpack.unpackb(blobs.decompress(row["data"]), raw=False, strict_map_key=False)  # type: ignore[arg-type]
        texts = msgpack.unpackb(row["texts"], raw=False, strict_map_key=False)  # type: ignore[arg-type]
        assert list(data) == ["chunks", "links"]
        assert tuple(data["chunks"]) == LIGHT and (*data["chunks"], *texts) == mf.CHUNK_COLUMNS


def _packed(v: object) -> int:
    return len(msgpack.packb(v, use_bin_type=True))


def test_light_columns_are_read_without_decoding_the_links(
    bundle_rows: list[dict[str, object]],
) -> None:
    """Each blob cut right after its light columns (a whole frame of that much): what
    ranking reads of it is still all there, and only a read of the links or the whole fails."""
    for row in bundle_rows:
        raw = blobs.decompress(row["data"])  # type: ignore[arg-type]
        data = msgpack.unpackb(raw, raw=False, strict_map_key=False)
        ids = mf.ids_of(row["ids"]).tolist()  # type: ignore[arg-type]
        light_end = 1 + _packed("chunks") + _packed(data["chunks"])
        links_end = light_end + _packed("links") + _packed(data["links"])
        assert links_end == len(raw)
        assert light_end < links_end  # the cut leaves the links out
        at_light = {**row, "data": blobs.compress(raw[:light_end])}
        assert mf.unpack_meta(at_light["data"], ids) == mf.unpack_meta(row["data"], ids)  # type: ignore[arg-type]
        with pytest.raises(msgpack.OutOfData):
            mf.unpack_meta(blobs.compress(raw[: light_end - 1]), ids)  # one byte short: not all there
        with pytest.raises(CoraError, match="links unreadable"):
            mf.links_of_row(at_light)
        with pytest.raises(ValueError, match="incomplete"):
            mf.chunk_columns(at_light["data"], row["texts"])  # type: ignore[arg-type]
    steps = next(r for r in bundle_rows if r["path"] == "src/steps.py")
    assert mf.links_of_row(steps).defs["step_29"]


def _listed(v: object) -> object:
    return [_listed(x) for x in v] if isinstance(v, tuple) else v


def test_light_columns_are_tuples_the_collector_lets_go(bundle_rows: list[dict[str, object]]) -> None:
    """Ranking keeps the light columns of thousands of files (`Catalog`): read as lists, a 50k-chunk
    server's ~290k lists were walked by every full collection (~180 ms, inside some query). As
    tuples of strings and numbers they are the values a full read gives, and after a collection
    the collector no longer tracks them."""
    for row in bundle_rows:
        ids = mf.ids_of(row["ids"]).tolist()  # type: ignore[arg-type]
        light = mf.unpack_meta(row["data"], ids)  # type: ignore[arg-type]
        whole = mf.chunk_columns(row["data"], row["texts"])  # type: ignore[arg-type]
        assert all(type(light[c]) is tuple and _listed(light[c]) == whole[c] for c in LIGHT)
        gc.collect()
        gc.collect()  # a tuple is untracked once what it holds is
        assert not any(gc.is_tracked(light[c]) for c in LIGHT), row["path"]


def test_a_column_in_both_parts_is_refused(bundle_rows: list[dict[str, object]]) -> None:
    row = bundle_rows[0]
    data = mf.unpack_blob(row["data"])  # type: ignore[arg-type]
    texts = msgpack.unpackb(row["texts"], raw=False, strict_map_key=False)  # type: ignore[arg-type]
    twice = msgpack.packb({**texts, "parent": data["chunks"]["parent"]}, use_bin_type=True)
    with pytest.raises(ValueError, match="both among the chunks and the texts"):
        mf.chunk_columns(row["data"], twice)  # type: ignore[arg-type]
    assert set(mf.chunk_columns(row["data"], row["texts"])) == set(mf.CHUNK_COLUMNS)  # type: ignore[arg-type]
