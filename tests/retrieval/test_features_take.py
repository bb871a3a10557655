"""Feature records gathered as raw items equal NumPy's field-by-field copy (every field, any doc order)."""

from __future__ import annotations

import numpy as np

from zaxy_agents.retrieval import features as feat


def test_take_equals_fancy_indexing() -> None:
    rng = np.random.default_rng(7)
    records = np.zeros(5000, dtype=feat.FEATURE)
    for name in feat.FEATURE.names:
        records[name] = rng.integers(-1, 1000, records.size).astype(feat.FEATURE[name])
    docs = rng.integers(0, records.size, 1200)
    taken = feat.take(records, docs)
    assert taken.dtype == feat.FEATURE and taken.shape == (docs.size,)
    assert taken.tobytes() == records[docs].tobytes()
    target = np.zeros(docs.size, dtype=feat.FEATURE)
    feat.raw(target)[::2] = feat.raw(taken[::2].copy())
    assert target[::2].tobytes() == records[docs][::2].tobytes()
    assert not any(target[1::2].tobytes())  # untouched rows stay zero
