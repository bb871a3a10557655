"""Postings keyed by segment (``postings.SEGMENT_BITS``) answer exactly like one segment: the entity keyword index
with erasures between its writes, and the posting store's reads, counts and occurrence checks, scoped and not."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from zaxy_agents.retrieval import postings
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


@pytest.mark.parametrize("few", [16, 0])
def test_entity_keyword_answers_do_not_depend_on_segments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, few: int
) -> None:
    one = _entity_answers(tmp_path / "one")
    monkeypatch.setattr(postings, "SEGMENT_BITS", 2)  # 4 versions per segment: ~40 segments
    monkeypatch.setattr(postings, "FEW_SESSIONS", few)
    many = _entity_answers(tmp_path / "many")
    db = sqlite3.connect(tmp_path / "many" / "derived.sqlite")
    try:
        assert db.execute("SELECT count(DISTINCT seg) FROM entity_keyword_post").fetchone()[0] > 20
    finally:
        db.close()
    assert many == one and sum(map(len, one)) > 50


def test_store_reads_across_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postings, "SEGMENT_BITS", 3)
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
        store.append_arrays(db, np.zeros(term.size, np.int64), term, sessions, owner, tf, compact=write % 3 == 0)
    assert db.execute("SELECT count(DISTINCT seg) FROM p_post").fetchone()[0] > 10
    for scope in (None, [0], [1, 3], [0, 1, 2, 3]):
        for few in (16, 0):
            monkeypatch.setattr(postings, "FEW_SESSIONS", few)
            found = store.read(db, 0, list(range(10)), scope)
            for t in range(10):
                want = sorted(p for (term, s), ps in expected.items() if term == t and (scope is None or s in scope)
                              for p in ps)  # fmt: skip
                entry = found.get(t)
                got = (
                    []
                    if entry is None
                    else sorted(zip(entry.docs.tolist(), entry.tfs.astype(int).tolist(), strict=True))
                )
                assert got == want
                assert store.count(db, 0, t, scope) == len(want)
                assert store.occurs(db, 0, t, scope) == bool(want)


class _CheckEveryKey(postings.PostingStore):
    """The compaction check before it skipped the keys of sessions new to their segment: every touched key."""

    def _known_pairs(self, db: sqlite3.Connection, pairs: np.ndarray) -> np.ndarray:
        return pairs


def test_compaction_skips_only_keys_that_cannot_be_crowded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A write checks for crowded keys only in sessions already in the key's segment: the stored runs are exactly
    those of checking every key, and crowded keys are still merged (new sessions arrive in every write, old ones
    come back, and segments roll over)."""
    monkeypatch.setattr(postings, "SEGMENT_BITS", 6)
    tables = []
    for store in (postings.PostingStore("p"), _CheckEveryKey("p")):
        db = sqlite3.connect(":memory:")
        for statement in postings.schema("p"):
            db.execute(statement)
        doc, draws = 0, np.random.default_rng(5)
        for write in range(60):
            sessions = np.concatenate(([write + 100], draws.choice(3, int(draws.integers(1, 4)), replace=False)))
            per_doc = [draws.choice(6, int(draws.integers(1, 4)), replace=False) for _ in sessions]
            term = np.concatenate(per_doc)
            owner = np.repeat(np.arange(doc, doc + sessions.size), [len(t) for t in per_doc])
            session = np.repeat(sessions, [len(t) for t in per_doc])
            doc += sessions.size
            store.append_arrays(db, np.zeros(term.size, np.int64), term, session, owner,
                                draws.integers(1, 4, term.size), compact=True)  # fmt: skip
        tables.append(db.execute("SELECT * FROM p_post ORDER BY field, seg, term, session, first").fetchall())
        crowded = db.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM p_post WHERE n < {postings.RUN_SIZE} "
            f"GROUP BY field, seg, term, session HAVING count(*) >= {postings.MERGE_RUNS})"
        ).fetchone()[0]
        assert crowded == 0
        merged = db.execute("SELECT count(*) FROM p_post WHERE n > 1 AND session < 3").fetchone()[0]
        assert merged > 0  # the returning sessions' runs were merged
    assert tables[0] == tables[1]


@pytest.mark.parametrize("count", [99, 100, 1234])
def test_a_write_stores_exactly_its_encoded_runs(count: int) -> None:
    """Runs go in by multi-row INSERTs of ``RUNS_PER_INSERT`` plus the rest one by one: every run once, as encoded."""
    rng = np.random.default_rng(count)
    session = rng.integers(0, 5000, count)
    term, doc, tf = rng.integers(0, 7, count), np.arange(count, dtype=np.int64), rng.integers(1, 300, count)
    field = np.zeros(count, np.int64)
    db = sqlite3.connect(":memory:")
    for statement in postings.schema("p"):
        db.execute(statement)
    postings.PostingStore("p").append_arrays(db, field, term, session, doc, tf)
    order = np.lexsort((doc, session, term, doc >> postings.SEGMENT_BITS, field))
    keys = np.stack((field, doc >> postings.SEGMENT_BITS, term, session), axis=1)[order]
    starts = np.concatenate(([0], np.flatnonzero(np.any(np.diff(keys, axis=0) != 0, axis=1)) + 1))
    expected = postings.encode_runs(
        field[order], term[order], session[order], doc[order], tf[order], starts, segments=True
    )
    assert db.execute("SELECT * FROM p_post ORDER BY field, seg, term, session, first").fetchall() == sorted(expected)


def test_every_crowded_key_of_a_large_write_is_merged() -> None:
    """A write touching hundreds of keys (inserted into the check's temporary table 100 per statement) merges every
    key that gathered ``MERGE_RUNS`` small runs."""
    db = sqlite3.connect(":memory:")
    for statement in postings.schema("p"):
        db.execute(statement)
    store, keys = postings.PostingStore("p"), 250
    for write in range(postings.MERGE_RUNS):
        term, session = np.arange(keys) % 50, np.arange(keys) // 50
        doc = np.full(keys, write, np.int64)
        store.append_arrays(db, np.zeros(keys, np.int64), term, session, doc, np.ones(keys, np.int64), compact=True)
    runs = db.execute("SELECT count(*), sum(n) FROM p_post").fetchone()
    assert runs == (keys, keys * postings.MERGE_RUNS)  # one merged run per key, every posting kept
