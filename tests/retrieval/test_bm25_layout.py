"""``postings.bm25`` over a Fortran-ordered matrix (the verbatim scorer's terms x docs gathers) adds up whole rows
instead of NumPy's column-by-column sum; its scores must equal the plain NumPy formula's to the last bit, whatever
the number of terms (NumPy sums each column pairwise from 8 terms on, halving past 128)."""

from __future__ import annotations

import numpy as np
import pytest

from zaxy_agents.retrieval.postings import bm25, column_sums


def _formula(tf: np.ndarray, lens: np.ndarray, avg: float, weights: np.ndarray, k1: float, b: float) -> np.ndarray:
    norm = k1 * (1.0 - b + b * lens / max(avg, 1e-9))
    return (weights[:, None] * tf * (k1 + 1.0) / (tf + norm[None, :])).sum(0)


@pytest.mark.parametrize("terms", [2, 3, 4, 7, 8, 9, 15, 16, 17, 24, 40, 127, 128, 129, 136, 300])
@pytest.mark.parametrize("docs", [2, 9, 3000])
def test_fortran_matrices_score_identically(terms: int, docs: int) -> None:
    rng = np.random.default_rng(terms * 10_000 + docs)
    for trial in range(3):
        counts = rng.integers(0, 4, (terms, docs)) * (rng.random((terms, docs)) < 0.5)
        tf = np.asfortranarray(counts * rng.random((terms, 1)) * (1 + trial))  # fractional, as context windows are
        lens, weights = rng.random(docs) * 60, rng.random(terms) * 4
        assert tf.flags.f_contiguous and not tf.flags.c_contiguous
        assert np.array_equal(bm25(tf, lens, 25.0, weights, 1.2, 0.75), _formula(tf, lens, 25.0, weights, 1.2, 0.75))


def test_column_sums_add_like_numpy_over_fortran_columns() -> None:
    rng = np.random.default_rng(7)
    for terms in [*range(1, 34), 64, 120, 128, 129, 130, 255, 256, 257, 513]:
        rows = rng.random((terms, 50)) * (rng.random((terms, 50)) < 0.7) * 10.0 ** rng.integers(-3, 4, (terms, 1))
        assert np.array_equal(column_sums(rows), np.asfortranarray(rows).sum(0)), terms


def test_the_scorers_gather_is_fortran_ordered() -> None:
    """The row-wise path is taken where it matters: ``Matched.at`` / ``_take_columns`` give Fortran-ordered terms x
    docs matrices (if that layout changed, this test says the path is no longer used)."""
    from zaxy_agents.retrieval.verbatim_scoring import _take_columns, _with_zero_column

    matrix = np.arange(12.0).reshape(3, 4)
    gathered = _take_columns(_with_zero_column(matrix), np.array([0, 2, 4, 1]))
    assert gathered.flags.f_contiguous and not gathered.flags.c_contiguous
    assert np.array_equal(gathered, np.concatenate((matrix, np.zeros((3, 1))), axis=1)[:, [0, 2, 4, 1]])
