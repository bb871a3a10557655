"""The verbatim lane's lookups (term ids and frequencies, speaker terms, thread rows) survive this process's small
writes: after an agent's turn the entries it did not touch are carried to the new write sequence, the terms and
speaker terms it wrote are read again and its threads' rows are taken as written. Checked on a real memory against
the same searches with a fresh cache, and the carried thread rows against the table; a merge of the tail, an
erasure, another process's commit and a rebuild leave no record, so the next search starts a fresh cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval import verbatim_write
from zaxy_agents.retrieval.verbatim_scoring import GroupRows
from zaxy_agents.retrieval.verbatim_search import ReadCache

QUESTIONS = ("who deploys the billing service", "what did ada say about zebra crossings", "where is the vault key")


def _turn(text: str, speaker: str, segment: str) -> dict[str, Any]:
    return {"role": "user", "speaker": speaker, "text": text, "segment": segment}


def _seed(memory: MemoryFabric) -> None:
    for n in range(40):
        memory.append(
            "chat", "transcript.turn", _turn(f"turn {n}: billing service deploy step {n}", "bob", f"s{n % 3}")
        )
    memory.append("ops", "fact.asserted", {"subject": "vault", "fact": "the vault key is in the safe"})
    memory.project()


def _hits(memory: MemoryFabric) -> list[list[tuple[str, int, float]]]:
    index = memory.retriever.verbatim
    return [[(h.session, h.seq, round(h.score, 9)) for h in index.search(q, 8, sessions=None)] for q in QUESTIONS]


def _fresh_hits(memory: MemoryFabric) -> list[list[tuple[str, int, float]]]:
    index = memory.retriever.verbatim
    kept, index._read_cache = index._read_cache, None
    try:
        return _hits(memory)
    finally:
        index._read_cache = kept


def _rows_match_the_table(memory: MemoryFabric, cache: ReadCache) -> None:
    loaded = np.flatnonzero(cache.groups.loaded)
    table = GroupRows()
    table.fill(memory.projector.derived.reader(), loaded)
    for name in ("docs", "lengths", "first", "last"):
        assert np.array_equal(getattr(cache.groups, name)[loaded], getattr(table, name)[loaded]), name


def test_a_turn_carries_the_lookups_it_did_not_touch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with MemoryFabric.from_path(tmp_path / "loom", use_graph=False) as memory:
        _seed(memory)
        index = memory.retriever.verbatim
        first = _hits(memory)
        before = index._read_cache
        assert isinstance(before, ReadCache) and before.terms["zebra"] is None  # asked before it was written
        assert before.terms["vault"] is not None and before.speakers["ada"] is None  # not a speaker yet
        # a turn by a new speaker, with a new word, in a new thread and in a thread already read
        memory.append("chat", "transcript.turn", _turn("ada: zebra crossings need a billing deploy", "ada", "s9"))
        memory.append("chat", "transcript.turn", _turn("the billing service deploy is done", "bob", "s1"))
        memory.project()
        made: list[tuple[Any, Any]] = []
        carry = ReadCache.carried
        monkeypatch.setattr(
            ReadCache, "carried", lambda self, delta: made.append((delta, carry(self, delta))) or made[-1][1]
        )
        stale = dict(before.terms)
        index = memory.retriever.verbatim
        index.search(QUESTIONS[0], 8, sessions=None)  # the first question, from the carried lookups
        [(delta, carried)] = made
        assert isinstance(carried, ReadCache) and index._read_cache is carried and carried.wseq > before.wseq
        assert {"zebra", "ada"} <= delta.terms and "ada" in delta.speakers
        # the first question asks neither: "vault" was carried over, "zebra" (written) dropped
        assert "vault" in carried.terms and "zebra" not in carried.terms and "zebra" in stale
        assert "ada" not in carried.speakers
        after = _hits(memory)
        assert carried.terms["zebra"] is not None and carried.speakers["ada"] is not None  # read again
        assert after == _fresh_hits(memory)
        assert after != first and any(session == "chat" for session, _, _ in after[1][:1])
        _rows_match_the_table(memory, carried)


def test_a_turn_carries_the_main_postings_read_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The main tables' decoded postings of the terms asked before are carried whole (a tail write never changes
    them) and shared read-only; the turn's own postings come from the tail: the same hits as a fresh cache."""
    with MemoryFabric.from_path(tmp_path / "loom", use_graph=False) as memory:
        with monkeypatch.context() as seeding:
            seeding.setattr(verbatim_write, "TAIL_LIMIT", 8)  # the seed's turns end up in the main tables
            _seed(memory)
        index = memory.retriever.verbatim
        _hits(memory)
        before = index._read_cache
        assert isinstance(before, ReadCache)
        held = {key: entry for key, entry in before.postings.entries.items() if entry is not None}
        assert len(held) >= 3  # (field, term id, sessions) -> the term's main postings
        with pytest.raises(ValueError):  # shared between queries: nobody may write into them
            next(iter(held.values())).docs[0] = 0
        memory.append("chat", "transcript.turn", _turn("the billing service deploy is done", "bob", "s1"))
        memory.project()
        after = _hits(memory)
        carried = index._read_cache
        assert carried is not before and carried.wseq > before.wseq
        assert all(carried.postings.entries.get(key) is entry for key, entry in held.items())  # not read again
        assert after == _fresh_hits(memory)
        assert ("chat", 41) in {(session, seq) for session, seq, _ in after[0]}  # the turn, found in the tail


@pytest.mark.parametrize("write", ["merge", "erasure", "another process", "rebuild"])
def test_writes_without_a_record_start_a_fresh_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: str
) -> None:
    path = tmp_path / "loom"
    with MemoryFabric.from_path(path, use_graph=False) as memory:
        _seed(memory)
        index = memory.retriever.verbatim
        _hits(memory)
        before = index._read_cache
        assert isinstance(before, ReadCache)
        if write == "merge":
            monkeypatch.setattr(verbatim_write, "TAIL_LIMIT", 41)  # the next write merges the tail first
            memory.append("chat", "transcript.turn", _turn("zebra crossings after the merge", "ada", "s0"))
        elif write == "erasure":
            memory.erase_events("ops", [1])
        elif write == "rebuild":  # every table rebuilt from the log: a new creation stamp, the same write sequence
            memory.reproject(digest=False)
        else:
            with MemoryFabric.from_path(path, use_graph=False) as other:
                other.append("chat", "transcript.turn", _turn("zebra crossings from elsewhere", "cy", "s0"))
                other.project()
        memory.project()
        carried: list[Any] = []
        carry = ReadCache.carried
        monkeypatch.setattr(ReadCache, "carried", lambda self, delta: carried.append(delta) or carry(self, delta))
        after = _hits(memory)
        assert carried == []  # no recorded chain from the old write sequence: nothing carried
        assert isinstance(index._read_cache, ReadCache) and index._read_cache is not before
        assert after == _fresh_hits(memory)
        assert write in ("erasure", "rebuild") or after[1][0][0] == "chat"  # the new turn is found
