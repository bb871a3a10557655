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
    row per ``SEAL_BYTES`` of postings, not one per write or session: the rows the per-run layout's seal built, byte
    for byte (each write's runs of a term concatenated in doc order, cut before a run that would pass
    ``SEAL_BYTES``); the segments the writes can still reach hold one open row per write."""
    monkeypatch.setattr(posting_codec, "SEGMENT_BITS", 9)
    monkeypatch.setattr(posting_codec, "RUN_BYTES", 16)  # several runs per write and term
    monkeypatch.setattr(postings, "SEAL_BYTES", 40)  # most terms are frequent: rows of consecutive runs
    rng = np.random.default_rng(9)
    store, db = postings.PostingStore("p"), sqlite3.connect(":memory:")
    for statement in postings.schema("p"):
        db.execute(statement)
    doc = 0
    runs: dict[tuple[int, int], list[tuple[int, int, bytes, bytes]]] = {}  # (seg, term) -> every write's runs
    writes: list[set[int]] = []  # the segments of each write
    for _ in range(200):
        size = int(rng.integers(1, 30))
        term = rng.integers(0, 40, size * 3)
        owner = np.repeat(np.arange(doc, doc + size), 3)
        keep = np.unique(np.stack((owner, term), axis=1), axis=0)
        tfs = rng.integers(1, 3, len(keep))
        store.append_arrays(db, np.zeros(len(keep), np.int64), keep[:, 1], keep[:, 0] % 97, keep[:, 0], tfs)
        order = np.lexsort((keep[:, 0], keep[:, 1], keep[:, 0] >> 9))
        docs, terms, counts = keep[order, 0], keep[order, 1], tfs[order]
        segs = docs >> 9
        starts = np.flatnonzero(np.concatenate(([True], (np.diff(segs) != 0) | (np.diff(terms) != 0))))
        cut = posting_codec.run_starts(starts, docs, counts)
        for at, run in zip(cut.tolist(), posting_codec.encode_runs(docs, counts, cut), strict=True):
            runs.setdefault((int(segs[at]), int(terms[at])), []).append(run)
        writes.append(set(segs.tolist()))
        doc += size
    opened = db.execute("SELECT seg, count(*) FROM p_post_open GROUP BY seg").fetchall()
    active = max(seg for seg, _ in opened)
    assert active >= 5
    assert dict(opened) == {seg: sum(seg in w for w in writes) for seg, _ in opened}  # one row per write
    rows = db.execute("SELECT seg, term, first, n, docs, tfs FROM p_post ORDER BY seg, term, first").fetchall()
    expected = []
    for (seg, term), found in sorted(runs.items()):
        if seg in dict(opened):
            continue
        group: list[tuple[int, int, bytes, bytes]] = []
        for run in found:
            if group and sum(len(r[2]) + len(r[3]) for r in group) + len(run[2]) + len(run[3]) > postings.SEAL_BYTES:
                expected.append(_row(seg, term, group))
                group = []
            group.append(run)
        expected.append(_row(seg, term, group))
    assert rows == expected
    by_key: dict[tuple[int, int], list[int]] = {}
    for seg, term, _, _, docs, tfs in rows:
        by_key.setdefault((seg, term), []).append(len(docs) + len(tfs))
    assert max(seg for seg, _ in by_key) < active and len(by_key) > 100
    assert sum(map(len, by_key.values())) < 3 * len(by_key)  # hundreds of writes, few rows
    assert any(len(sizes) > 1 for sizes in by_key.values())
    for sizes in by_key.values():  # rows of up to SEAL_BYTES (but a lone run): no overflow page; a row and the next
        assert all(a + b > postings.SEAL_BYTES for a, b in itertools.pairwise(sizes))  # one's first run would not fit


def _row(seg: int, term: int, runs: list[tuple[int, int, bytes, bytes]]) -> tuple[object, ...]:
    return (seg, term, runs[0][0], sum(r[1] for r in runs), b"".join(r[2] for r in runs), b"".join(r[3] for r in runs))
