"""The keyword lane keeps the main tables' decoded postings and the docs' versions for one state of the index
(``created``, ``wseq``): the next question sharing words reads them from memory; any write (a tail row, a merge,
an erasure) or a rebuild starts afresh. Answers equal a fresh index's over the same file every time."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.retrieval.test_ingest_fast_paths import _entity_batches, _EntityBatch
from zaxy_agents.retrieval.derived import open_standalone
from zaxy_agents.retrieval.entity_index import EntityKeywordIndex, KeywordReads

QUERIES = ("bada retry", "service", "rare3 zaba", "w7 T-12 service")
SCOPES = (None, ["s0"], ["s1", "s2"])


def _answers(index: EntityKeywordIndex) -> list[object]:
    return [index.search(query, 30, scope) for query in QUERIES for scope in SCOPES]


def test_questions_share_the_reads_of_one_state_and_a_write_starts_afresh(tmp_path: Path) -> None:
    index = EntityKeywordIndex()
    derived = open_standalone(tmp_path, index)
    try:
        batches = _entity_batches(12, 40)
        big = [dict(r, id=f"big{i}", source_event_seq=1000 + i) for i, r in enumerate(_entity_batches(1, 300)[0])]
        derived.on_batch(_EntityBatch(big))  # to the main tables
        first = _answers(index)
        reads = index._reads
        held = {key: entry for key, entry in reads.postings.entries.items() if entry is not None}
        assert held and reads.versions
        with pytest.raises(ValueError):  # shared between questions: read-only
            next(iter(held.values())).docs[0] = 0
        assert _answers(index) == first and index._reads is reads  # no write: the same reads, from memory
        assert all(reads.postings.entries[key] is entry for key, entry in held.items())
        for number, rows in enumerate(batches):  # tail rows, an erasure, a merge: each a new state
            derived.on_batch(_EntityBatch(rows))
            if number == 5:
                derived.erase("s1", [r["source_event_seq"] for r in rows if r["session_id"] == "s1"])
            answers = _answers(index)
            assert isinstance(index._reads, KeywordReads) and index._reads is not reads
            reads = index._reads
            fresh_index = EntityKeywordIndex()
            fresh = open_standalone(tmp_path, fresh_index)
            try:
                assert answers == _answers(fresh_index)
            finally:
                fresh.close()
    finally:
        derived.close()
