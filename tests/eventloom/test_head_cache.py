"""The files log remembers each session's head per file version (inode, size, mtime): a whole-memory checkout asks
every session's head up to three times. Another writer's append, a rewrite of the same size and a replaced file
must all be seen at once."""

from __future__ import annotations

import os
from pathlib import Path

from zaxy_agents.storage.files.jsonl_log import JsonlEventLog


def test_a_head_read_before_another_writers_append_is_not_served_after_it(tmp_path: Path) -> None:
    reader, writer = JsonlEventLog(tmp_path), JsonlEventLog(tmp_path)
    writer.append("s", "note.added", {"i": 1})
    assert reader.head("s").seq == 1
    assert [summary.event_count for summary in reader.sessions()] == [1]
    last = writer.append_many("s", [{"type": "note.added", "payload": {"i": i}} for i in (2, 3)])[-1]
    head = reader.head("s")
    assert (head.seq, head.hash) == (3, last.hash)
    assert [(summary.event_count, summary.head_hash) for summary in reader.sessions()] == [(3, last.hash)]


def test_a_same_size_rewrite_and_a_replaced_file_are_read_again(tmp_path: Path) -> None:
    log = JsonlEventLog(tmp_path)
    log.append("s", "note.added", {"text": "aaaa"})
    first = log.head("s")
    other = JsonlEventLog(tmp_path / "other")
    twin = other.append("s", "note.added", {"text": "bbbb"})
    assert twin.hash != first.hash
    path, source = tmp_path / "s.jsonl", tmp_path / "other" / "s.jsonl"
    assert path.stat().st_size == source.stat().st_size  # same size, other content
    stat = path.stat()
    path.write_bytes(source.read_bytes())  # rewritten in place: same inode and size, a new mtime
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert log.head("s").hash == twin.hash
    replaced = tmp_path / "s.jsonl.new"
    replaced.write_bytes(path.read_bytes())
    log.append("s", "note.added", {"text": "cccc"})
    os.replace(replaced, path)  # a new inode with the older content (what a restore does)
    assert log.head("s").hash == twin.hash
    path.unlink()
    assert log.head("s") is None
    assert log.sessions() == []
