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


def test_load_all_equals_the_blocks_gathered_on_demand(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A whole-memory query loads every feature block in ordered scans; the records equal those a lookup of each
    block loads, with blocks missing from the table (left empty), some already loaded, and after new writes."""
    import sqlite3

    db = sqlite3.connect(tmp_path / "f.sqlite")
    for statement in feat.schema("t"):
        db.execute(statement)
    writer = feat.FeatureWriter("t", db)
    rng = np.random.default_rng(3)
    blocks = [n for n in range(3 * feat.LOAD_ALL + 7) if n % 11]  # gaps: blocks never written
    for number in blocks:
        writer.set(number * feat.BLOCK + int(rng.integers(feat.BLOCK)), "group", int(rng.integers(1, 10**6)))
    writer.flush(1)
    docs = np.arange((blocks[-1] + 1) * feat.BLOCK, dtype=np.int64)
    expected = feat.FeatureCache("t").gather(db, docs)
    cache = feat.FeatureCache("t")
    cache.gather(db, docs[5 * feat.BLOCK : 9 * feat.BLOCK])  # some loaded before
    cache.load_all(db)
    assert cache.loaded[blocks].all() and not cache.loaded[[n for n in range(blocks[-1]) if n % 11 == 0]].any()
    assert cache.gather(db, docs).tobytes() == expected.tobytes()
    writer.set(17 * feat.BLOCK + 1, "group", 42)  # written since: reloaded by lookup
    writer.flush(2)
    cache.refresh(db, 2)
    cache.load_all(db)
    assert cache.loaded[17] and cache.gather(db, docs)["group"][17 * feat.BLOCK + 1] == 42


def test_put_many_writes_what_a_put_per_doc_writes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Records put by slices per block (a bulk batch) leave the same blocks as one put per doc, whatever the
    batch's start and length against the block boundaries."""
    import sqlite3

    rng = np.random.default_rng(5)
    for first, count in ((0, 1), (3, feat.BLOCK), (feat.BLOCK - 1, 2), (700, 3 * feat.BLOCK + 5), (256, 0)):
        records = np.zeros(count, dtype=feat.FEATURE)
        records["session"] = rng.integers(0, 9, count)
        records["next"] = rng.integers(-1, 10**6, count)
        written = []
        for many in (False, True):
            db = sqlite3.connect(tmp_path / f"{first}-{count}-{many}.sqlite")
            for statement in feat.schema("t"):
                db.execute(statement)
            writer = feat.FeatureWriter("t", db)
            if many:
                writer.put_many(first, records)
            else:
                for offset in range(count):
                    writer.put(first + offset, records[offset])
            written.append({n: b.tobytes() for n, b in writer.flush(1).items()})
            db.close()
        assert written[0] == written[1] and len(written[0]) == -(-(first % feat.BLOCK + count) // feat.BLOCK) * (
            count > 0
        )


def test_gathers_below_the_loaded_prefix_skip_the_check_and_never_serve_a_rewritten_block(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``FeatureCache.complete``: every block below it is loaded, so a gather of docs below it reads no block; a
    block written since (``refresh``) moves it back, and the gather then reads that block again (its new record,
    never the old one); a reset (a lower write sequence) moves it to 0."""
    import sqlite3

    db = sqlite3.connect(tmp_path / "f.sqlite")
    for statement in feat.schema("t"):
        db.execute(statement)
    writer = feat.FeatureWriter("t", db)
    for number in range(40):
        writer.set(number * feat.BLOCK, "group", number + 1)
    writer.flush(1)
    cache = feat.FeatureCache("t")
    cache.refresh(db, 1)
    loads = []
    original = cache._load
    cache._load = lambda db, missing: (loads.append(missing.tolist()), original(db, missing))[1]  # type: ignore[method-assign]
    cache.load_all(db)
    assert cache.complete == 40 and len(loads) == 1
    docs = np.arange(0, 40 * feat.BLOCK, feat.BLOCK, dtype=np.int64)
    assert cache.gather(db, docs, "group").tolist() == list(range(1, 41))
    assert len(loads) == 1  # all below the prefix: nothing read
    writer = feat.FeatureWriter("t", db)
    writer.set(17 * feat.BLOCK, "group", 1000)
    writer.flush(2)
    cache.refresh(db, 2)
    assert cache.complete == 17
    assert cache.gather(db, docs[:10], "group").tolist() == list(range(1, 11))  # below 17: nothing read
    assert len(loads) == 1
    assert cache.gather(db, docs, "group").tolist() == [*range(1, 18), 1000, *range(19, 41)]
    assert loads[-1] == [17] and cache.complete == 40
    cache.refresh(db, 1)  # a lower write sequence (a reset): nothing is known
    assert cache.complete == 0
    assert cache.gather(db, docs[:3], "group").tolist() == [1, 2, 3] and loads[-1] == [0, 1, 2]
