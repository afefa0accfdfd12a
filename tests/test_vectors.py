"""The vector file: 2-bit codes of rotated vectors as bit planes, searched by an exact scan of
their sign bits.

Written and read through the real module on disk; the answers are compared with a brute-force
computation in plain numpy of what the docstrings promise.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cora_ci.bundle.vectors import (
    _BLOCK,
    CODES,
    RESCORE,
    VectorIndex,
    decode,
    planes,
    quantise,
    rotate,
    update_vectors,
    write_vectors,
)
from cora_ci.errors import CoraError


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)  # type: ignore[no-any-return]


def _brute(codes: np.ndarray, ids: np.ndarray, q: np.ndarray, k: int) -> list[tuple[int, float]]:
    """What `search` promises: the RESCORE*k nearest sign vectors by hamming to the rotated
    query's (ties to the earlier row), ranked by the cosine of the rotated query with their
    decoded codes over each code's correction (ties to the lower id). Rows in `ids`' order."""
    r = rotate(q / np.linalg.norm(q))[0]
    ham = ((codes[:, :-1] >= 2) != (r >= 0)).sum(axis=1)
    m = min(RESCORE * k, len(ids))
    cand = sorted(range(len(ids)), key=lambda i: (ham[i], i))[:m]
    fit = 0.5 + codes[cand, -1].astype(np.float32) * np.float32(0.5 / 255)
    scores = (decode(codes[cand]) @ r) / fit
    ranked = sorted(zip(ids[cand].tolist(), scores.tolist(), strict=True), key=lambda t: (-t[1], t[0]))
    return [(int(i), float(s)) for i, s in ranked[:k]]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 300), dim=st.sampled_from([8, 20, 64, 256, 384]), k=st.integers(1, 40),
       seed=st.integers(0, 2**32 - 1))  # fmt: skip
def test_search_is_the_exact_scan_it_promises(tmp_path_factory: pytest.TempPathFactory, n: int, dim: int,
                                              k: int, seed: int) -> None:  # fmt: skip
    rng = np.random.default_rng(seed)
    ids = rng.choice(2**62, size=n, replace=False).astype(np.uint64)
    vectors = _unit(rng, n, dim)
    d = tmp_path_factory.mktemp("v")
    rows = rng.permutation(ids)  # the manifest's order: any
    write_vectors(d, rows, ids, vectors)
    held = tmp_path_factory.mktemp("p")  # the codes as a first build holds them: the same file
    write_vectors(held, rows, ids, planes(quantise(vectors)) if n else vectors)
    assert (held / CODES).read_bytes() == (d / CODES).read_bytes()
    index = VectorIndex(d, rows, dim)
    q = _unit(rng, 1, dim)[0]
    got = index.search(q, k)
    at = {int(i): j for j, i in enumerate(ids)}
    want = _brute(quantise(vectors)[[at[int(i)] for i in rows]].reshape(n, dim + 1), rows, q, k)
    assert [i for i, _ in got] == [i for i, _ in want]
    assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
    assert index.size == n and np.array_equal(index.get_stored(ids.tolist()), quantise(vectors))


def test_an_update_writes_what_a_full_build_writes(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    ids = rng.choice(2**62, size=500, replace=False).astype(np.uint64)
    vectors = _unit(rng, 500, 384)
    (tmp_path / "old").mkdir()
    write_vectors(tmp_path / "old", ids[:400][::-1], ids[:400], vectors[:400])
    stored = VectorIndex(tmp_path / "old", ids[:400][::-1]).get_stored(ids[390:400].tolist())
    (tmp_path / "new").mkdir()
    # ids[:50] and ids[390:400] go; ids[390:400] + 1 come with the stored codes; ids[100:110] get
    # new vectors under their old ids (their texts changed): the batch's, not the old file's
    changed = _unit(rng, 10, 384)
    keep = np.r_[ids[400:], ids[390:400] + np.uint64(1), ids[50:390]]  # the new manifest's order
    batches = [
        (np.r_[ids[400:], ids[100:110]], np.r_[vectors[400:], changed]),
        (ids[390:400] + np.uint64(1), stored),
    ]
    update_vectors(tmp_path / "old", ids[:400][::-1], tmp_path / "new", keep, batches)
    (tmp_path / "planes").mkdir()  # a build's new vectors held as the file's planes: the same file
    batches[0] = (batches[0][0], planes(quantise(batches[0][1])))
    update_vectors(tmp_path / "old", ids[:400][::-1], tmp_path / "planes", keep, batches)
    (tmp_path / "full").mkdir()
    now = vectors.copy()
    now[100:110] = changed
    codes = np.r_[quantise(now[400:]), stored, quantise(now[50:390])]
    write_vectors(tmp_path / "full", keep, keep, codes)
    assert (tmp_path / "new" / CODES).read_bytes() == (tmp_path / "full" / CODES).read_bytes()
    assert (tmp_path / "planes" / CODES).read_bytes() == (tmp_path / "full" / CODES).read_bytes()


@settings(max_examples=60, deadline=None)
@given(dim=st.integers(1, 400), n=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_the_rotation_is_orthogonal_exact_per_row_and_undone_by_its_inverse(
    dim: int, n: int, seed: int
) -> None:
    x = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    y = rotate(x)
    assert np.allclose(y @ y.T, x @ x.T, rtol=1e-4, atol=1e-3)  # angles and lengths kept
    assert all(np.array_equal(rotate(x[i : i + 1])[0], y[i]) for i in range(n))
    assert np.allclose(rotate(y, inverse=True), x, atol=1e-4)


def test_the_rotation_spreads_an_uneven_dimension_and_the_codes_estimate_cosines() -> None:
    """One component with most of the variance (as a model's first dimension may have) is spread
    over all after the rotation, so the 4 levels fit every component; among vectors near the
    query (what the codes rank), the corrected estimate of a cosine is closer than the plain one."""
    rng = np.random.default_rng(5)
    v = rng.standard_normal((2000, 256)).astype(np.float32)
    v[:, 0] *= 8
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    assert np.var(v[:, 0]) > 50 * np.var(v[:, 1:]) and np.var(rotate(v), axis=0).max() < 3 / 256
    q = _unit(rng, 1, 256)[0]
    c = rng.uniform(0.3, 0.8, (2000, 1)).astype(np.float32)
    near = c * q + np.sqrt(1 - c**2) * (v - (v @ q)[:, None] * q) / np.linalg.norm(
        v - (v @ q)[:, None] * q, axis=1, keepdims=True
    )
    codes, r = quantise(near), rotate(q)[0]
    plain = decode(codes) @ r
    fit = 0.5 + codes[:, -1].astype(np.float32) * np.float32(0.5 / 255)
    assert np.abs(plain / fit - c[:, 0]).mean() < 0.5 * np.abs(plain - c[:, 0]).mean()
    assert np.percentile(np.abs(plain / fit - c[:, 0]), 99) < 0.06


def test_codes_worked_out_in_blocks_are_each_vectors_own(tmp_path: Path) -> None:
    """A build quantises and splits into bit planes a block of rows at a time (its float
    temporaries were its peak memory): every row's codes are what that row alone gives, across
    block edges, and the file is the one its codes give."""
    rng = np.random.default_rng(3)
    n = 2 * _BLOCK + 5
    vectors = rng.standard_normal((n, 24)).astype(np.float32)
    vectors[_BLOCK - 1] = 0  # a zero vector at a block's edge
    codes = quantise(vectors)
    rows = [0, 1, _BLOCK - 1, _BLOCK, _BLOCK + 1, 2 * _BLOCK, n - 1]
    assert all(np.array_equal(codes[i], quantise(vectors[i : i + 1])[0]) for i in rows)
    ids = rng.choice(2**62, size=n, replace=False).astype(np.uint64)
    (tmp_path / "floats").mkdir()
    (tmp_path / "codes").mkdir()
    write_vectors(tmp_path / "floats", ids, ids, vectors)
    write_vectors(tmp_path / "codes", ids, ids, codes)
    assert (tmp_path / "floats" / CODES).read_bytes() == (tmp_path / "codes" / CODES).read_bytes()
    assert np.array_equal(VectorIndex(tmp_path / "codes", ids).get_stored(ids[rows].tolist()), codes[rows])


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda b: b[:-1], "the layout needs"),
        (lambda b: b"cora-q5\0" + b[8:], "not a codes file of this format"),
        (lambda b: b[:20] + (3).to_bytes(4, "little") + b[24:], "bad codes header"),
        (lambda b: b[:8] + (19).to_bytes(8, "little") + b[16:], "19 vectors for the manifest's 20 chunks"),
    ],
)
def test_a_damaged_file_is_refused_before_it_is_read(tmp_path: Path, damage, says: str) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    ids = rng.choice(2**62, size=20, replace=False).astype(np.uint64)
    write_vectors(tmp_path, ids, ids, _unit(rng, 20, 64))
    path = tmp_path / CODES
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(CoraError, match=says) as e:
        VectorIndex(tmp_path, ids, 64)
    assert e.value.code == "CORA-BND-004"


def test_rows_are_the_manifests_chunks_in_its_order_and_each_needs_a_vector(tmp_path: Path) -> None:
    """No chunk ids in the file (format 7): row i is the manifest's chunk i."""
    rng = np.random.default_rng(2)
    ids = rng.choice(2**62, size=30, replace=False).astype(np.uint64)
    vectors = _unit(rng, 30, 64)
    write_vectors(tmp_path, ids[::-1], ids, vectors)
    assert (tmp_path / CODES).stat().st_size == 24 + 30 * (8 + 8 + 1)  # no 8-byte key a row
    index = VectorIndex(tmp_path, ids[::-1])
    assert np.array_equal(index.get_stored(ids.tolist()), quantise(vectors))
    assert index.search(vectors[7], 1)[0][0] == int(ids[7])
    with pytest.raises(ValueError, match="no vector"):
        write_vectors(tmp_path, np.r_[ids[1:], np.uint64(5)], ids, vectors)
    with pytest.raises(CoraError, match="no vector"):
        index.get_stored([5])
    with pytest.raises(CoraError, match="dimension 64, the model's is 32"):
        VectorIndex(tmp_path, ids[::-1], 32)
