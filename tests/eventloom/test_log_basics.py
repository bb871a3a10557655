"""Contract: appends, batches, replay ranges, heads, sessions, citations and refs on every backend."""

from __future__ import annotations

import pytest

from zaxy_agents.errors import InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.canonical import GENESIS_HASH
from zaxy_agents.eventloom.citations import format_citation, parse_citation
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.eventloom.refs import MemoryRefs
from zaxy_agents.storage.conformance.harness import Harness


def test_backend_implements_the_protocol(elog: EventLog) -> None:
    assert isinstance(elog, EventLog)


def test_append_assigns_contiguous_seqs_and_chains_hashes(elog: EventLog) -> None:
    first = elog.append("s1", "task.created", {"title": "a"}, actor="agent")
    second = elog.append("s1", "task.completed", {"title": "a"}, actor="agent")
    assert (first.seq, second.seq) == (1, 2)
    assert first.prev_hash == GENESIS_HASH
    assert second.prev_hash == first.hash
    assert first.timestamp.endswith("Z") and "T" in first.timestamp
    assert first.citation == f"eventloom://s1/events/1#{first.hash[:12]}"
    assert first.id != second.id
    assert elog.get("s1", 2) == second


def test_append_many_is_one_contiguous_batch(elog: EventLog) -> None:
    elog.append("s", "note.added", {"i": 0})
    events = elog.append_many("s", [{"type": "note.added", "payload": {"i": i}} for i in range(1, 6)])
    assert [e.seq for e in events] == [2, 3, 4, 5, 6]
    assert elog.append_many("s", []) == []
    assert elog.verify("s").ok


def test_append_many_validates_everything_before_writing(elog: EventLog) -> None:
    elog.append("s", "note.added", {"i": 0})
    with pytest.raises(InvalidRequestError) as info:
        elog.append_many("s", [{"type": "note.added", "payload": {}}, {"type": "BAD TYPE", "payload": {}}])
    assert info.value.field == "events[1].type"
    with pytest.raises(InvalidRequestError) as info:
        elog.append_many("s", [{"type": "note.added", "colour": "red"}])
    assert info.value.field == "events[0]"
    assert elog.head("s").seq == 1


def test_replay_streams_bounded_ranges(backend: Harness, elog: EventLog) -> None:
    elog.append_many("s", [{"type": "note.added", "payload": {"i": i}} for i in range(1, 2001)])
    assert [e.seq for e in elog.replay("s", 1000, 1003)] == [1000, 1001, 1002, 1003]
    assert [e.payload["i"] for e in elog.replay("s", 1998)] == [1998, 1999, 2000]
    assert list(elog.replay("s", 2500)) == []
    assert list(elog.replay("missing")) == []
    assert sum(1 for _ in elog.replay("s")) == 2000
    assert [e["seq"] for e in elog.replay_envelopes("s", 1999)] == [1999, 2000]
    with backend.open() as fresh:  # a fresh reader, nothing cached
        assert [e.seq for e in fresh.replay("s", 1537, 1538)] == [1537, 1538]
        assert fresh.get("s", 1).payload == {"i": 1}


def test_replay_rejects_bad_ranges(elog: EventLog) -> None:
    elog.append("s", "note.added", {})
    with pytest.raises(InvalidRequestError) as info:
        list(elog.replay("s", 0))
    assert info.value.field == "from_seq"
    with pytest.raises(InvalidRequestError) as info:
        list(elog.replay("s", 5, 2))
    assert info.value.field == "to_seq"


def test_get_names_what_is_missing(elog: EventLog) -> None:
    elog.append("s", "note.added", {})
    with pytest.raises(NotFoundError) as info:
        elog.get("s", 2)
    assert info.value.field == "seq"
    with pytest.raises(NotFoundError):
        elog.get("other", 1)
    with pytest.raises(NotFoundError):
        elog.verify("other")


def test_head_and_sessions_come_from_the_tail(elog: EventLog) -> None:
    assert elog.head("empty") is None
    assert elog.sessions() == []
    elog.append("b", "note.added", {})
    elog.append_many("a", [{"type": "note.added", "payload": {}}] * 3)
    summaries = {s.session: s for s in elog.sessions()}
    assert set(summaries) == {"a", "b"}
    assert summaries["a"].event_count == 3 and summaries["b"].event_count == 1
    assert summaries["a"].head_hash == elog.head("a").hash
    assert summaries["a"].size_bytes > 0 and summaries["a"].modified
    assert elog.head("a").seq == 3
    assert elog.has_session("a") and not elog.has_session("empty")


def test_resolve_returns_the_event_and_refuses_a_wrong_hash(elog: EventLog) -> None:
    event = elog.append("s", "fact.asserted", {"fact": "x"})
    assert elog.resolve(event.citation) == event
    assert elog.resolve(parse_citation(event.citation)) == event
    wrong = format_citation("s", 1, "f" * 64)
    with pytest.raises(NotFoundError) as info:
        elog.resolve(wrong)
    assert info.value.field == "citation"
    with pytest.raises(NotFoundError):
        elog.resolve(format_citation("s", 9, event.hash))
    with pytest.raises(InvalidRequestError):
        parse_citation("eventloom://../events/1#abc")


def test_events_survive_reopen_and_keep_chaining(backend: Harness) -> None:
    with backend.open() as first:
        a = first.append("s", "note.added", {"n": 1})
    with backend.open() as second:
        b = second.append("s", "note.added", {"n": 2})
        assert b.seq == 2 and b.prev_hash == a.hash
        assert second.verify("s").ok


def test_two_log_objects_in_one_process_interleave_safely(backend: Harness) -> None:
    with backend.open() as one, backend.open() as two:
        for i in range(50):
            (one if i % 2 else two).append("s", "note.added", {"i": i})
        assert one.verify("s").ok and one.head("s").seq == 50 and two.head("s").seq == 50


def test_unicode_and_numbers_round_trip_exactly(elog: EventLog) -> None:
    payload = {"text": "naïve café ☕ 𝄞", "n": 1.5, "big": 2**53, "tiny": 1e-05, "nested": {"b": [1, None, True]}}
    event = elog.append("s", "fact.asserted", payload, actor='ägent "x" \\ y')
    assert elog.get("s", 1).payload == payload == event.payload
    assert elog.get("s", 1) == event and event.actor == 'ägent "x" \\ y'
    nul = elog.append("s", "fact.asserted", {"nul": "a\x00b", "ctl": "\x01\x1f", "sep": "\u2028"})
    assert elog.get("s", 2) == nul and nul.payload["nul"] == "a\x00b"
    assert elog.verify("s").ok


def test_batch_durability_is_accepted_and_other_modes_refused(backend: Harness) -> None:
    with backend.open(durability="batch") as batch_log:
        batch_log.append("s", "note.added", {"n": 1})
        with backend.open() as reader:
            assert reader.head("s").seq == 1
        batch_log.sync()
    with pytest.raises(InvalidRequestError):
        backend.open(durability="sometimes")


def test_refs_are_events_and_resolve(elog: EventLog) -> None:
    refs = MemoryRefs(elog)
    for i in range(3):
        elog.append("s", "note.added", {"i": i})
    head = refs.get("s", "HEAD")
    assert head.seq == 3 and head.symbolic
    tagged = refs.set("s", "refs/tags/v1", 2)
    assert tagged.seq == 2
    assert elog.head("s").seq == 4  # the ref update is itself an event
    assert refs.get("s", "refs/tags/v1").hash == elog.get("s", 2).hash
    refs.set("s", "refs/tags/v1", 1)
    assert MemoryRefs(elog).get("s", "refs/tags/v1").seq == 1  # rebuilt from the log by a fresh reader
    refs.delete("s", "refs/tags/v1")
    with pytest.raises(NotFoundError):
        refs.get("s", "refs/tags/v1")
    with pytest.raises(InvalidRequestError):
        refs.set("s", "refs/heads/../x")
    names = [r.name for r in refs.list("s")]
    assert names == ["HEAD"]
