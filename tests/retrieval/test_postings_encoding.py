"""The batched run encoder writes exactly the bytes of the per-run one, and the runs decode back to the postings."""

from __future__ import annotations

import numpy as np
import pytest

from zaxy_agents.retrieval import postings


def _per_run(field, term, session, docs, tfs, starts):  # the reference: one encode_run call per run
    rows = []
    ends = [*starts[1:].tolist(), docs.size]
    for start, end in zip(starts.tolist(), ends, strict=True):
        for chunk in range(start, end, postings.RUN_SIZE):
            stop = min(chunk + postings.RUN_SIZE, end)
            key = (int(field[start]), int(term[start]), int(session[start]))
            rows.append((*key, int(docs[chunk]), stop - chunk, *postings.encode_run(docs[chunk:stop], tfs[chunk:stop])))
    return rows


@pytest.mark.parametrize("seed", range(12))
def test_batched_encoding_equals_per_run_encoding(seed: int) -> None:
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 6000))
    field = rng.integers(0, 2, count)
    term = rng.integers(0, int(rng.choice([2, 40, 5000])), count)
    session = rng.integers(0, int(rng.choice([4, 3000])), count)  # few sessions, or mostly one-posting runs
    spread = int(rng.choice([3, 1_000, 200_000]))  # gaps that fit uint16, and gaps that do not
    doc = rng.permutation(np.arange(count) * spread + rng.integers(0, spread, count))
    tf = rng.integers(1, int(rng.choice([5, 300, 70_000])), count)  # counts of one byte, two, and clipped
    order = np.lexsort((doc, session, term, field))
    field, term, session, doc, tf = field[order], term[order], session[order], doc[order], tf[order]
    change = np.flatnonzero((np.diff(field) != 0) | (np.diff(term) != 0) | (np.diff(session) != 0)) + 1
    starts = np.concatenate(([0], change))
    rows = postings.encode_runs(field, term, session, doc, tf, starts)
    assert rows == _per_run(field, term, session, doc, tf, starts)
    decoded, counts = postings.decode_runs([(first, n, d, t) for _, _, _, first, n, d, t in rows])
    pairs = sorted(zip(decoded.tolist(), counts.tolist(), strict=True))
    assert pairs == sorted(zip(doc.tolist(), np.minimum(tf, postings.MAX_TF).astype(float).tolist(), strict=True))


@pytest.mark.parametrize("seed", range(6))
def test_few_runs_decode_like_many(seed: int) -> None:
    """Up to ``FEW_RUNS`` runs are decoded one by one (session-scoped reads), more are grouped by width: both
    paths give the same postings."""
    rng = np.random.default_rng(100 + seed)
    runs = []
    for _ in range(int(rng.integers(postings.FEW_RUNS + 1, 12))):
        size = int(rng.integers(1, 300))
        first = int(rng.integers(0, 10**6))
        docs = np.sort(rng.choice(np.arange(first, first + int(rng.choice([400, 10**7]))), size, replace=False))
        tfs = rng.integers(1, int(rng.choice([5, 70_000])), size)
        runs.append((int(docs[0]), size, *postings.encode_run(docs, tfs)))
    grouped = postings.decode_runs(runs)
    pieces = [postings.decode_runs(runs[i : i + postings.FEW_RUNS]) for i in range(0, len(runs), postings.FEW_RUNS)]
    one_by_one = np.concatenate([p[0] for p in pieces]), np.concatenate([p[1] for p in pieces])
    assert sorted(zip(*(a.tolist() for a in one_by_one), strict=True)) == sorted(
        zip(*(a.tolist() for a in grouped), strict=True)
    )
    assert one_by_one[0].dtype == grouped[0].dtype and one_by_one[1].dtype == grouped[1].dtype
