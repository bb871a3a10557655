"""The run encoding (varint codes, counts above one apart) decodes back to the postings, runs cut where their bytes
pass ``RUN_BYTES``, and decoding many runs at once equals decoding them one by one."""

from __future__ import annotations

import numpy as np
import pytest

from zaxy_agents.retrieval import posting_codec, postings


@pytest.mark.parametrize("top", [1, 127, 128, 16_384, 1 << 40])
def test_varints_round_trip(top: int) -> None:
    values = np.random.default_rng(top).integers(0, top, 5000, dtype=np.int64)
    values[:3] = [0, top - 1, top // 2]
    sizes = postings.varint_sizes(values)
    data = postings.encode_varints(values, sizes)
    assert len(data) == int(sizes.sum())
    assert postings.decode_varints(data).tolist() == values.tolist()


@pytest.mark.parametrize("seed", range(12))
def test_runs_decode_to_their_postings(seed: int) -> None:
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 6000))
    term = np.sort(rng.integers(0, int(rng.choice([2, 40, 5000])), count))
    spread = int(rng.choice([1, 3, 1_000, 200_000]))  # gaps of one byte, two, three
    doc = np.zeros(count, dtype=np.int64)
    for t in np.unique(term).tolist():  # docs ascending and distinct within each term
        where = np.flatnonzero(term == t)
        doc[where] = np.cumsum(rng.integers(1, spread + 1, where.size))
    tf = rng.integers(1, int(rng.choice([2, 5, 300, 70_000])), count)  # one, a few, two bytes, clipped
    seg = doc >> posting_codec.SEGMENT_BITS
    starts = np.concatenate(([0], np.flatnonzero((np.diff(term) != 0) | (np.diff(seg) != 0)) + 1))  # keys as stored
    runs = postings.run_starts(starts, doc, tf)
    encoded = postings.encode_runs(doc, tf, runs)
    rows = [(first >> posting_codec.SEGMENT_BITS, n, d, t) for first, n, d, t in encoded]
    assert len(rows) == runs.size and set(starts.tolist()) <= set(runs.tolist())
    assert all(len(d) + len(t) <= posting_codec.RUN_BYTES + 8 for _, _, d, t in rows)  # a row stays on its page
    decoded, counts = postings.decode_runs(rows)
    assert decoded.tolist() == doc.tolist()
    assert counts.tolist() == np.minimum(tf, posting_codec.MAX_TF).astype(float).tolist()
    one_by_one = [postings.decode_runs([row]) for row in rows]
    assert np.concatenate([d for d, _ in one_by_one]).tolist() == decoded.tolist()
    assert [row[0] for row in encoded] == doc[runs].tolist() and [row[1] for row in rows] == np.diff(
        np.append(runs, count)
    ).tolist()


def test_session_ranges_round_trip() -> None:
    offsets = np.array([0, 1, 2, 7, 9, 10, 16_383], dtype=np.int64)
    assert postings.range_docs(3, postings.ranges_of(offsets)).tolist() == ((3 << 14) + offsets).tolist()
