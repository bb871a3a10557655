"""Postings keyed by segment (``posting_codec.SEGMENT_BITS``) answer exactly like one segment: the entity keyword index
with erasures between its writes, and the posting store's reads, counts and occurrence checks, scoped and not."""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from zaxy_agents.retrieval import posting_codec, postings
from zaxy_agents.retrieval.derived import open_standalone
from zaxy_agents.retrieval.entity_index import EntityKeywordIndex

from .test_ingest_fast_paths import _entity_batches, _EntityBatch

QUERIES = ["bada retry", "service port", "zaba", "w3 w17 deploy", "T-12 kolo"]
SCOPES = [None, ["s0"], ["s1", "s2"], ["s0", "s1", "s2"]]


def _entity_answers(folder: Path) -> list[list[tuple[str, float]]]:
    index = EntityKeywordIndex()
    listeners = open_standalone(folder, index)
    try:
        for number, rows in enumerate(_entity_batches(24, 7)):
            listeners.on_batch(_EntityBatch(rows))
            if number in (5, 11, 17):
                session = f"s{number % 3}"
                listeners.erase(session, [r["source_event_seq"] for r in rows if r["session_id"] == session])
        return [
            [(version, round(score, 9)) for version, score in index.search(q, 20, scope)]
            for q in QUERIES
            for scope in SCOPES
        ]
    finally:
        listeners.close()


@pytest.mark.parametrize("run_bytes", [768, 5])
def test_entity_keyword_answers_do_not_depend_on_segments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_bytes: int
) -> None:
    one = _entity_answers(tmp_path / "one")
    monkeypatch.setattr(posting_codec, "SEGMENT_BITS", 2)  # 4 versions per segment: ~40 segments
    monkeypatch.setattr(posting_codec, "RUN_BYTES", run_bytes)  # 5: a few postings per run, many runs per key
    many = _entity_answers(tmp_path / "many")
    db = sqlite3.connect(tmp_path / "many" / "derived.sqlite")
    try:
        assert db.execute("SELECT count(DISTINCT seg) FROM entity_keyword_post").fetchone()[0] > 20
    finally:
        db.close()
    assert many == one and sum(map(len, one)) > 50


@pytest.mark.parametrize(("run_bytes", "seal_bytes"), [(384, 900), (4, 6)])
def test_store_reads_across_segments(monkeypatch: pytest.MonkeyPatch, run_bytes: int, seal_bytes: int) -> None:
    """Reads, counts and occurrence checks equal a plain list of postings, scoped and not, before and after docs
    of one session are removed (the erasure path)."""
    monkeypatch.setattr(posting_codec, "SEGMENT_BITS", 3)
    monkeypatch.setattr(posting_codec, "RUN_BYTES", run_bytes)
    monkeypatch.setattr(postings, "SEAL_BYTES", seal_bytes)  # 6: sealed terms in rows of a few runs
    rng = np.random.default_rng(4)
    store = postings.PostingStore("p")
    db = sqlite3.connect(":memory:")
    for statement in postings.schema("p"):
        db.execute(statement)
    expected: dict[tuple[int, int], list[tuple[int, int]]] = {}  # (term, session) -> [(doc, tf)]
    doc = 0
    for write in range(30):
        size = int(rng.integers(1, 12))
        docs = np.arange(doc, doc + size)
        doc += size
        per_doc = [rng.choice(9, int(rng.integers(1, 5)), replace=False) for _ in range(size)]
        term = np.concatenate(per_doc)
        owner = np.repeat(docs, [len(t) for t in per_doc])
        tf = rng.integers(1, 4, term.size)
        for t, d, f in zip(term.tolist(), owner.tolist(), tf.tolist(), strict=True):
            expected.setdefault((t, write % 4), []).append((d, f))
        sessions = np.full(term.size, write % 4, np.int64)
        store.append_arrays(db, np.zeros(term.size, np.int64), term, sessions, owner, tf)
    assert db.execute("SELECT count(DISTINCT seg) FROM p_post").fetchone()[0] > 10
    _check(store, db, expected)
    gone = np.array(sorted({d for (_, s), ps in expected.items() if s == 1 for d, _ in ps})[::3], dtype=np.int64)
    lost = store.remove_docs(db, 1, gone)
    removed: dict[int, int] = {}
    for (t, s), ps in expected.items():
        if s == 1:
            kept = [p for p in ps if p[0] not in set(gone.tolist())]
            removed[t] = len(ps) - len(kept)
            expected[(t, s)] = kept
    assert {t: n[0] for t, n in lost.items()} == {t: n for t, n in removed.items() if n}
    _check(store, db, expected)


def _check(store: postings.PostingStore, db: sqlite3.Connection, expected: dict) -> None:
    for scope in (None, [0], [1, 3], [0, 1, 2, 3]):
        found = store.read(db, 0, list(range(10)), scope)
        for t in range(10):
            want = sorted(p for (term, s), ps in expected.items() if term == t and (scope is None or s in scope)
                          for p in ps)  # fmt: skip
            entry = found.get(t)
            got = [] if entry is None else list(zip(entry.docs.tolist(), entry.tfs.astype(int).tolist(), strict=True))
            assert got == want  # docs ascending
            assert store.count(db, 0, t, scope) == len(want)
            assert store.occurs(db, 0, t, scope) == bool(want)


def test_sealed_segments_hold_one_row_per_term_and_seal_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many small writes over many sessions leave each (field, segment, term) of a segment behind the writes one
    row per ``SEAL_BYTES`` of postings, not one per write or session; the active segment keeps its runs."""
    monkeypatch.setattr(posting_codec, "SEGMENT_BITS", 9)
    monkeypatch.setattr(postings, "SEAL_BYTES", 40)  # most terms are frequent: rows of consecutive runs
    rng = np.random.default_rng(9)
    store, db = postings.PostingStore("p"), sqlite3.connect(":memory:")
    for statement in postings.schema("p"):
        db.execute(statement)
    doc = 0
    for _ in range(200):
        size = int(rng.integers(1, 30))
        term = rng.integers(0, 40, size * 3)
        owner = np.repeat(np.arange(doc, doc + size), 3)
        keep = np.unique(np.stack((owner, term), axis=1), axis=0)
        store.append_arrays(db, np.zeros(len(keep), np.int64), keep[:, 1], keep[:, 0] % 97, keep[:, 0],
                            rng.integers(1, 3, len(keep)))  # fmt: skip
        doc += size
    rows = db.execute("SELECT seg, term, first, length(docs) + length(tfs) FROM p_post ORDER BY seg, term, first")
    by_key: dict[tuple[int, int], list[int]] = {}
    for seg, term, _, size in rows.fetchall():
        by_key.setdefault((seg, term), []).append(size)
    active = max(seg for seg, _ in by_key)
    assert active >= 5
    sealed = {key: sizes for key, sizes in by_key.items() if key[0] < active - 1}  # the last write may straddle
    assert sum(map(len, sealed.values())) < 3 * len(sealed)  # hundreds of writes, few rows
    assert any(len(sizes) > 1 for sizes in sealed.values())
    for sizes in sealed.values():  # rows of up to SEAL_BYTES: no overflow page; a row and the next one's first run
        assert all(size <= postings.SEAL_BYTES for size in sizes)  # would not have fitted
        assert all(a + b > postings.SEAL_BYTES for a, b in itertools.pairwise(sizes))
    assert sum(map(len, by_key.values())) > sum(map(len, sealed.values())) + len(by_key) - len(sealed)
