"""The keyword lane keeps the main tables' decoded postings and the docs' versions for one state of those tables
(``created`` and the write sequence of the last write that reached them, ``main_stamp``): the next question sharing
words reads them from memory, also after a small write (it goes to the tail, which never changes them); a write to
the main tables (a large batch, a merge of the tail, an erasure) or a rebuild starts afresh. Answers equal a fresh
index's over the same file every time."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.retrieval.test_ingest_fast_paths import _entity_batches, _EntityBatch
from zaxy_agents.retrieval.derived import open_standalone
from zaxy_agents.retrieval.entity_index import EntityKeywordIndex, KeywordReads, main_stamp

QUERIES = ("bada retry", "service", "rare3 zaba", "w7 T-12 service")
SCOPES = (None, ["s0"], ["s1", "s2"])


def _answers(index: EntityKeywordIndex) -> list[object]:
    return [index.search(query, 30, scope) for query in QUERIES for scope in SCOPES]


def _same_as_fresh(tmp_path: Path, answers: list[object]) -> None:
    fresh_index = EntityKeywordIndex()
    fresh = open_standalone(tmp_path, fresh_index)
    try:
        assert answers == _answers(fresh_index)
    finally:
        fresh.close()


def _big(number: int) -> list[dict]:
    """A batch large enough to go to the main tables (with the tail before it)."""
    rows = _entity_batches(1, 300)[0]
    return [dict(r, id=f"big{number}-{i}", source_event_seq=10_000 * number + i) for i, r in enumerate(rows)]


def _empty(number: int) -> list[dict]:
    """A write whose entities analyse to no term (stop words only)."""
    return [{"id": f"empty{number}", "entity_type": "fact", "session_id": "s0", "source_event_seq": 90_000 + number,
             "name": "the", "summary": "of"}]  # fmt: skip


def test_questions_share_the_reads_of_one_main_state_across_tail_writes(tmp_path: Path) -> None:
    index = EntityKeywordIndex()
    derived = open_standalone(tmp_path, index)
    try:
        batches = _entity_batches(12, 40)
        derived.on_batch(_EntityBatch(_big(1)))  # to the main tables
        first = _answers(index)
        reads = index._reads
        held = {key: entry for key, entry in reads.postings.entries.items() if entry is not None}
        assert held and reads.versions
        with pytest.raises(ValueError):  # shared between questions: read-only
            next(iter(held.values())).docs[0] = 0
        assert _answers(index) == first and index._reads is reads  # no write: the same reads, from memory
        assert all(reads.postings.entries[key] is entry for key, entry in held.items())
        for number, rows in enumerate(batches):
            derived.on_batch(_EntityBatch(rows))  # a tail row: the main tables' reads are kept
            answers = _answers(index)
            assert index._reads is reads, number
            assert all(reads.postings.entries[key] is entry for key, entry in held.items())
            _same_as_fresh(tmp_path, answers)
            if number in (3, 8):  # an erasure, a merge: each a new state of the main tables
                if number == 3:
                    derived.erase("s1", [r["source_event_seq"] for r in rows if r["session_id"] == "s1"])
                else:
                    derived.on_batch(_EntityBatch(_big(2)))
                answers = _answers(index)
                assert isinstance(index._reads, KeywordReads) and index._reads is not reads
                reads = index._reads
                held = {key: entry for key, entry in reads.postings.entries.items() if entry is not None}
                _same_as_fresh(tmp_path, answers)
    finally:
        derived.close()


def test_a_write_without_terms_leaves_no_tail_row(tmp_path: Path) -> None:
    """``main_stamp`` dates the main tables from the tail's first row: that holds because every tail row holds
    postings (a write without any goes the main tables' way, writing nothing, and moves the stamp)."""
    index = EntityKeywordIndex()
    derived = open_standalone(tmp_path, index)
    try:
        derived.on_batch(_EntityBatch(_big(1)))
        before = _answers(index)
        derived.on_batch(_EntityBatch(_empty(1)))
        assert index.reader().execute("SELECT count(*) FROM entity_keyword_tail").fetchone()[0] == 0
        _same_as_fresh(tmp_path, _answers(index))  # one more doc (N): every score moves
        derived.on_batch(_EntityBatch(_big(2)))
        derived.on_batch(_EntityBatch(_entity_batches(1, 20)[0]))  # a tail row
        answers = _answers(index)
        assert answers != before
        _same_as_fresh(tmp_path, answers)
    finally:
        derived.close()


def test_main_stamp() -> None:
    assert main_stamp(7, 0, None) == 7  # no postings in the tail: the last write reached the main tables
    assert main_stamp(9, 40, 6) == 5  # tail rows from 6 on: the main tables as write 5 left them
    assert main_stamp(9, 40, None) == 9  # inconsistent stats: a stamp that moves with every write
