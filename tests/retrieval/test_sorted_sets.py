"""The sort-based set operations return exactly what NumPy's own do (values, dtype, shapes, empty inputs)."""

from __future__ import annotations

import numpy as np
import pytest

from zaxy_agents.retrieval import sorted_sets as sets


@pytest.mark.parametrize("seed", range(25))
def test_same_results_as_numpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size_a, size_b = (int(n) for n in rng.integers(0, 400, size=2))
    high = int(rng.choice([3, 50, 10_000, 2**40]))
    dtype = rng.choice([np.int64, np.int32, np.uint32])
    a = rng.integers(0, min(high, np.iinfo(dtype).max), size=size_a).astype(dtype)
    b = rng.integers(0, min(high, np.iinfo(dtype).max), size=size_b).astype(dtype)
    for mine, theirs in (
        (sets.unique(a), np.unique(a)),
        (sets.unique_ids(a), np.unique(a)),
        (sets.unique_ids(np.concatenate((a, b))), np.union1d(a, b)),
        (sets.union(a, b), np.union1d(a, b)),
        (sets.intersect(a, b), np.intersect1d(a, b)),
        (sets.isin(a, b), np.isin(a, b)),
        (sets.isin(a, np.sort(b), members_sorted=True), np.isin(a, b)),
    ):
        assert mine.dtype == theirs.dtype
        assert np.array_equal(mine, theirs)


def test_unique_ids_takes_the_sort_for_negative_or_sparse_ids() -> None:
    for values in (np.array([5, -3, 5, 0, -3]), np.array([2**40, 7, 7, 2**40]), np.zeros(0, dtype=np.int32)):
        mine = sets.unique_ids(values)
        assert mine.dtype == values.dtype and np.array_equal(mine, np.unique(values))


def test_isin_keeps_the_shape_of_its_values() -> None:
    values = np.array([[1, 2], [3, 4]])
    assert np.array_equal(sets.isin(values, np.array([4, 1])), [[True, False], [False, True]])
    assert sets.isin(values, np.zeros(0, dtype=np.int64)).shape == (2, 2)


@pytest.mark.parametrize("seed", range(12))
def test_unique_inverse_equals_numpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size = int(rng.integers(0, 3000))
    high = int(rng.choice([1, 40, 5_000, 2**33]))  # dense ids (bin count) and sparse ones (sort)
    ids = rng.integers(0, high, size=size).astype(np.int64)
    if rng.random() < 0.5:
        ids = np.sort(ids)  # nearly sorted, as a query's thread ids are
    values, inverse = sets.unique_inverse(ids)
    expected_values, expected_inverse = np.unique(ids, return_inverse=True)
    assert np.array_equal(values, expected_values) and np.array_equal(inverse, expected_inverse.reshape(-1))


@pytest.mark.parametrize("seed", range(12))
def test_unique_positions_equal_unique_and_searchsorted(seed: int) -> None:
    rng = np.random.default_rng(50 + seed)
    parts = []
    for _ in range(int(rng.integers(1, 7))):
        high = int(rng.choice([30, 10_000, 2**40]))
        part = rng.choice(high, int(rng.integers(0, min(high, 500))), replace=False)
        parts.append(np.sort(part).astype(np.int64) if rng.random() < 0.7 else part.astype(np.int64))
    values, at = sets.unique_positions(parts)
    expected = np.unique(np.concatenate(parts))
    assert values.dtype == np.int64 and np.array_equal(values, expected)
    assert np.array_equal(at, np.searchsorted(expected, np.concatenate(parts)))


@pytest.mark.parametrize("seed", range(16))
def test_positions_and_isin_equal_a_binary_search(seed: int) -> None:
    """Dense id ranges take a lookup table, sparse ones a binary search: the same answers either way, for
    values outside the members' range, negative sentinels and every integer width the index uses."""
    rng = np.random.default_rng(200 + seed)
    high = int(rng.choice([20, 3_000, 2**33]))
    members = np.unique(rng.integers(0, high, size=int(rng.integers(1, 2_000)))).astype(np.int64)
    values = rng.integers(-2, high + 5, size=int(rng.integers(0, 3_000)))
    dtype = rng.choice([np.int64, np.int32, np.uint32]) if high < 2**31 else np.int64
    if dtype == np.uint32:
        values = np.abs(values)
    values = values.astype(dtype)
    where = np.minimum(np.searchsorted(members, values), members.size - 1)
    found = members[where] == values
    assert np.array_equal(sets.positions(members, values, -7), np.where(found, where, -7))
    assert sets.positions(members, values, -7).dtype == np.int64
    assert np.array_equal(sets.isin(values, members, members_sorted=True), np.isin(values, members))
    assert np.array_equal(sets.isin(values, rng.permutation(members)), np.isin(values, members))
    assert np.array_equal(sets.isin(values.reshape(-1, 1), members), np.isin(values, members).reshape(-1, 1))


@pytest.mark.parametrize("seed", range(20))
def test_best_first_equals_the_head_of_a_full_sort(seed: int) -> None:
    """Ties at the k-th score (few distinct scores) are broken by id exactly as a sort of every score."""
    rng = np.random.default_rng(seed)
    size = int(rng.integers(0, 600))
    scores = rng.integers(1, int(rng.choice([2, 5, 1000])), size=size).astype(np.float64) / 7.0
    ids = rng.permutation(size * 3)[:size].astype(np.int64)
    for k in (0, 1, 5, 50, size, size + 3):
        expected = np.lexsort((ids, -scores))[: max(k, 0)]
        assert np.array_equal(sets.best_first(scores, ids, k), expected)
