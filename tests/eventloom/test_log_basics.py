"""Appends, batches, replay ranges, heads, sessions, citations and refs on a real JSONL log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zaxy_agents.errors import InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.canonical import GENESIS_HASH
from zaxy_agents.eventloom.citations import format_citation, parse_citation
from zaxy_agents.eventloom.jsonl_log import JsonlEventLog
from zaxy_agents.eventloom.refs import MemoryRefs


def test_append_assigns_contiguous_seqs_and_chains_hashes(log: JsonlEventLog) -> None:
    first = log.append("s1", "task.created", {"title": "a"}, actor="agent")
    second = log.append("s1", "task.completed", {"title": "a"}, actor="agent")
    assert (first.seq, second.seq) == (1, 2)
    assert first.prev_hash == GENESIS_HASH
    assert second.prev_hash == first.hash
    assert first.timestamp.endswith("Z") and "T" in first.timestamp
    assert first.citation == f"eventloom://s1/events/1#{first.hash[:12]}"
    assert first.id != second.id


def test_append_many_is_one_contiguous_batch(log: JsonlEventLog) -> None:
    log.append("s", "note.added", {"i": 0})
    events = log.append_many("s", [{"type": "note.added", "payload": {"i": i}} for i in range(1, 6)])
    assert [e.seq for e in events] == [2, 3, 4, 5, 6]
    assert log.verify("s").ok


def test_append_many_validates_everything_before_writing(log: JsonlEventLog, log_dir: Path) -> None:
    log.append("s", "note.added", {"i": 0})
    with pytest.raises(InvalidRequestError) as info:
        log.append_many("s", [{"type": "note.added", "payload": {}}, {"type": "BAD TYPE", "payload": {}}])
    assert info.value.field == "events[1].type"
    assert log.head("s").seq == 1


def test_replay_streams_bounded_ranges(log: JsonlEventLog) -> None:
    log.append_many("s", [{"type": "note.added", "payload": {"i": i}} for i in range(1, 2001)])
    assert [e.seq for e in log.replay("s", 1000, 1003)] == [1000, 1001, 1002, 1003]
    assert [e.payload["i"] for e in log.replay("s", 1998)] == [1998, 1999, 2000]
    assert list(log.replay("s", 2500)) == []
    assert sum(1 for _ in log.replay("s")) == 2000
    # a fresh reader (no cached offsets) seeks by binary search
    fresh = JsonlEventLog(log.root)
    assert [e.seq for e in fresh.replay("s", 1537, 1538)] == [1537, 1538]
    assert fresh.get("s", 1).payload == {"i": 1}
    fresh.close()


def test_replay_rejects_bad_ranges(log: JsonlEventLog) -> None:
    log.append("s", "note.added", {})
    with pytest.raises(InvalidRequestError) as info:
        list(log.replay("s", 0))
    assert info.value.field == "from_seq"
    with pytest.raises(InvalidRequestError):
        list(log.replay("s", 5, 2))


def test_head_and_sessions_come_from_the_tail(log: JsonlEventLog) -> None:
    assert log.head("empty") is None
    log.append("b", "note.added", {})
    log.append_many("a", [{"type": "note.added", "payload": {}}] * 3)
    summaries = {s.session: s for s in log.sessions()}
    assert summaries["a"].event_count == 3 and summaries["b"].event_count == 1
    assert log.head("a").seq == 3


def test_resolve_returns_the_event_and_refuses_a_wrong_hash(log: JsonlEventLog) -> None:
    event = log.append("s", "fact.asserted", {"fact": "x"})
    assert log.resolve(event.citation) == event
    wrong = format_citation("s", 1, "f" * 64)
    with pytest.raises(NotFoundError) as info:
        log.resolve(wrong)
    assert info.value.field == "citation"
    with pytest.raises(NotFoundError):
        log.resolve(format_citation("s", 9, event.hash))
    with pytest.raises(InvalidRequestError):
        parse_citation("eventloom://../events/1#abc")


def test_events_survive_reopen_and_keep_chaining(log_dir: Path) -> None:
    with JsonlEventLog(log_dir) as first:
        a = first.append("s", "note.added", {"n": 1})
    with JsonlEventLog(log_dir) as second:
        b = second.append("s", "note.added", {"n": 2})
        assert b.seq == 2 and b.prev_hash == a.hash
        assert second.verify("s").ok


def test_two_log_objects_in_one_process_interleave_safely(log_dir: Path) -> None:
    one, two = JsonlEventLog(log_dir), JsonlEventLog(log_dir)
    for i in range(50):
        (one if i % 2 else two).append("s", "note.added", {"i": i})
    assert one.verify("s").ok and one.head("s").seq == 50
    one.close()
    two.close()


def test_batch_durability_writes_immediately_and_syncs(log_dir: Path) -> None:
    with JsonlEventLog(log_dir, durability="batch", group_commit_seconds=0.01) as batch_log:
        batch_log.append("s", "note.added", {"n": 1})
        with JsonlEventLog(log_dir) as reader:
            assert reader.head("s").seq == 1
        batch_log.sync()
    with pytest.raises(InvalidRequestError):
        JsonlEventLog(log_dir, durability="sometimes")


def test_file_is_canonical_jsonl(log: JsonlEventLog, log_dir: Path) -> None:
    log.append("s", "note.added", {"b": 1, "a": "é"})
    line = (log_dir / "s.jsonl").read_bytes()
    assert line.endswith(b"\n")
    assert line.startswith(b'{"actor":"agent","hash":"')
    assert "é".encode() in line
    assert json.loads(line)["payload"] == {"a": "é", "b": 1}


def test_refs_are_events_and_resolve(log: JsonlEventLog) -> None:
    refs = MemoryRefs(log)
    for i in range(3):
        log.append("s", "note.added", {"i": i})
    head = refs.get("s", "HEAD")
    assert head.seq == 3 and head.symbolic
    tagged = refs.set("s", "refs/tags/v1", 2)
    assert tagged.seq == 2
    assert log.head("s").seq == 4  # the ref update is itself an event
    assert refs.get("s", "refs/tags/v1").hash == log.get("s", 2).hash
    refs.set("s", "refs/tags/v1", 1)
    assert MemoryRefs(log).get("s", "refs/tags/v1").seq == 1  # rebuilt from the log by a fresh reader
    refs.delete("s", "refs/tags/v1")
    with pytest.raises(NotFoundError):
        refs.get("s", "refs/tags/v1")
    with pytest.raises(InvalidRequestError):
        refs.set("s", "refs/heads/../x")
    names = [r.name for r in refs.list("s")]
    assert names == ["HEAD"]
