"""Changing any byte of any line is detected by verify, and the first broken seq is reported."""

from __future__ import annotations

from pathlib import Path

from zaxy_agents.eventloom.jsonl_log import JsonlEventLog


def _build(log_dir: Path) -> bytes:
    with JsonlEventLog(log_dir) as log:
        log.append_many(
            "s",
            [{"type": "fact.asserted", "payload": {"fact": f"fact {i}", "n": i, "ok": i % 2 == 0}} for i in range(4)],
        )
    return (log_dir / "s.jsonl").read_bytes()


def test_every_single_byte_change_is_detected(log_dir: Path) -> None:
    original = _build(log_dir)
    path = log_dir / "s.jsonl"
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


def test_removed_and_reordered_lines_are_detected(log_dir: Path) -> None:
    lines = _build(log_dir).splitlines(keepends=True)
    path = log_dir / "s.jsonl"
    path.write_bytes(b"".join([lines[0], lines[2], lines[3]]))
    with JsonlEventLog(log_dir) as log:
        report = log.verify("s")
    assert not report.ok and report.first_broken_seq == 2 and "seq" in report.reason
    path.write_bytes(b"".join([lines[1], lines[0], lines[2], lines[3]]))
    with JsonlEventLog(log_dir) as log:
        assert log.verify("s").first_broken_seq == 1


def test_recomputed_hash_with_broken_link_is_detected(log_dir: Path) -> None:
    """Re-hashing a modified event is not enough: the next event's prev_hash no longer matches."""
    import json

    from zaxy_agents.eventloom.canonical import encode_line, event_hash

    lines = _build(log_dir).splitlines(keepends=True)
    envelope = json.loads(lines[1])
    envelope["payload"]["fact"] = "rewritten history"
    envelope["hash"] = event_hash(envelope)
    lines[1] = encode_line(envelope)
    (log_dir / "s.jsonl").write_bytes(b"".join(lines))
    with JsonlEventLog(log_dir) as log:
        report = log.verify("s")
    assert not report.ok and report.first_broken_seq == 3 and "prev_hash" in report.reason


def test_appending_to_a_tampered_tail_is_refused(log_dir: Path) -> None:
    import pytest

    from zaxy_agents.errors import IntegrityError

    original = _build(log_dir)
    index = original.rfind(b"fact 3")
    tampered = original[:index] + b"fact 9" + original[index + 6 :]
    (log_dir / "s.jsonl").write_bytes(tampered)
    with JsonlEventLog(log_dir) as log, pytest.raises(IntegrityError):
        log.append("s", "note.added", {})
    assert (log_dir / "s.jsonl").read_bytes() == tampered
