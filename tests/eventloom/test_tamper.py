"""Contract: changing any stored byte of any event is detected by verify, at the first broken seq."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zaxy_agents.errors import IntegrityError
from zaxy_agents.eventloom.canonical import encode_line, event_hash
from zaxy_agents.storage.conformance.harness import Harness
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog


def _build(backend: Harness, count: int = 4) -> list[bytes]:
    with backend.open() as log:
        log.append_many(
            "s",
            [
                {"type": "fact.asserted", "payload": {"fact": f"fact {i}", "n": i, "ok": i % 2 == 0}}
                for i in range(count)
            ],
        )
    return backend.stored_lines("s")


def test_every_single_byte_change_of_every_event_is_detected(backend: Harness) -> None:
    lines = _build(backend, count=3)
    undetected = []
    with backend.open() as log:
        for seq, line in enumerate(lines, start=1):
            body = line[:-1]
            for position in range(len(body)):
                tampered = bytearray(body)
                tampered[position] ^= 0x01
                backend.replace_line("s", seq, bytes(tampered))
                report = log.verify("s")
                if report.ok or report.first_broken_seq != seq:
                    undetected.append((seq, position, report))
            backend.replace_line("s", seq, body)
        assert log.verify("s").ok
    assert undetected == []


def test_removed_and_reordered_events_are_detected(backend: Harness) -> None:
    lines = _build(backend)
    backend.rewrite("s", [lines[0], lines[2], lines[3]])
    with backend.open() as log:
        report = log.verify("s")
    assert not report.ok and report.first_broken_seq == 2 and "seq" in report.reason
    backend.rewrite("s", [lines[1], lines[0], lines[2], lines[3]])
    with backend.open() as log:
        assert log.verify("s").first_broken_seq == 1


def test_recomputed_hash_with_broken_link_is_detected(backend: Harness) -> None:
    """Re-hashing a modified event is not enough: the next event's prev_hash no longer matches."""
    lines = _build(backend)
    envelope = json.loads(lines[1])
    envelope["payload"]["fact"] = "rewritten history"
    envelope["hash"] = event_hash(envelope)
    lines[1] = encode_line(envelope)
    backend.rewrite("s", lines)
    with backend.open() as log:
        report = log.verify("s")
    assert not report.ok and report.first_broken_seq == 3 and "prev_hash" in report.reason


def test_appending_to_a_tampered_tail_is_refused(backend: Harness) -> None:
    lines = _build(backend)
    lines[-1] = lines[-1].replace(b"fact 3", b"fact 9")
    backend.rewrite("s", lines)
    with backend.open() as log, pytest.raises(IntegrityError):
        log.append("s", "note.added", {})
    assert backend.stored_lines("s") == lines


def test_jsonl_every_byte_of_the_file_including_newlines(log_dir: Path) -> None:
    """JSONL only: flipping any byte of the file, line terminators included, is detected."""
    with JsonlEventLog(log_dir) as log:
        log.append_many("s", [{"type": "fact.asserted", "payload": {"fact": f"fact {i}"}} for i in range(4)])
    path = log_dir / "s.jsonl"
    original = path.read_bytes()
    line_starts = [0, *[i + 1 for i, b in enumerate(original) if b == 0x0A][:-1]]
    undetected = []
    for position in range(len(original)):
        tampered = bytearray(original)
        tampered[position] ^= 0x01
        path.write_bytes(bytes(tampered))
        with JsonlEventLog(log_dir) as log:
            report = log.verify("s")
        expected_seq = sum(1 for start in line_starts if start <= position)
        if report.ok or report.first_broken_seq is None or report.first_broken_seq > expected_seq:
            undetected.append((position, report))
    path.write_bytes(original)
    assert undetected == []
