"""A file's blob compressed with the shipped dictionary (format 10.0): what goes in comes back, a
hostile frame is refused before it inflates, and the dictionary is the one the format names."""

from __future__ import annotations

import hashlib
import threading
from importlib import resources

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from cora_ci.bundle import blobs


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=20_000) | st.text(max_size=5_000).map(str.encode))
def test_a_blob_comes_back_as_it_went_in(raw: bytes) -> None:
    assert blobs.decompress(blobs.compress(raw)) == raw


def test_the_dictionary_is_the_one_the_format_names() -> None:
    """Another dictionary would make every bundle's blobs unreadable to the code before it: it is
    another major format, and `tools/blob_dict.py` says what to change."""
    data = resources.files("cora_ci.bundle").joinpath(blobs.DICT_FILE).read_bytes()
    assert hashlib.sha256(data).hexdigest() == blobs.DICT_SHA256


def test_the_dictionary_makes_a_files_blob_smaller() -> None:
    """What the dictionary is for: a small blob's recurring keys and names cost it little."""
    raw = b"".join(
        b"\x82\xa6chunks\x87\xa4kind\x93\xa6method\xa4type\xa8function\xa7symbols\x91\xa9parse_args"
        for _ in range(3)
    )
    plain = zstandard.ZstdCompressor(level=9, write_checksum=False).compress(raw)
    assert len(blobs.compress(raw)) < len(plain) * 0.8


def test_a_hostile_blob_is_refused_before_it_inflates() -> None:
    big = blobs.compress(b"\0" * (1 << 20))
    assert blobs.decompress(big) == b"\0" * (1 << 20)
    with pytest.raises(ValueError, match="at most 1000"):
        blobs.decompress(big, limit=1000)
    unsized = zstandard.ZstdCompressor(write_content_size=False).compress(b"abc" * 100)
    with pytest.raises(ValueError, match="and said"):
        blobs.decompress(unsized)
    for junk in (b"", b"\x28\xb5\x2f\xfd", big[:-3], b"not a frame at all"):
        with pytest.raises(ValueError):
            blobs.decompress(junk)


def test_threads_each_compress_and_decompress_alone() -> None:
    """A build's BM25 writers read rows in threads: zstd's contexts are each thread's own."""
    raws = [bytes([i]) * (1000 + i) + b"parse_args" * i for i in range(64)]
    seen: list[bool] = []

    def work(k: int) -> None:
        for _ in range(20):
            seen.append(all(blobs.decompress(blobs.compress(r)) == r for r in raws[k::4]))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [True] * 80
