"""Contract: logs move between backends byte for byte. Export verifies with the embedded verifier and the
stand-alone verifier of docs/eventloom.md; import verifies in the target; both refuse broken logs."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.eventloom.test_docs_verifier import _doc_verifier
from zaxy_agents.errors import ConflictError, IntegrityError, NotFoundError
from zaxy_agents.eventloom.refs import MemoryRefs
from zaxy_agents.storage.conformance.harness import Harness
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog
from zaxy_agents.storage.transfer import export_session, export_sessions, import_file, import_paths

PAYLOADS = [
    {"fact": "naïve café ☕", "n": 1.25, "nested": {"b": [1, None, True]}},
    {"password": "hunter2", "text": "token sk-abcdefghijklmnopqrstuvwx"},
    {"big": 2**60, "tiny": 1e-7, "quote": 'say "hi"\n\tand \\ leave', "control": "\x01"},
]


def _fill(log, session: str = "s", extra: int = 30) -> None:
    for payload in PAYLOADS:
        log.append(session, "fact.asserted", payload)
    log.append_many(session, [{"type": "note.added", "payload": {"i": i}} for i in range(extra)])
    MemoryRefs(log).set(session, "refs/tags/v1", 2)


def test_export_is_byte_identical_and_verifies_everywhere(backend: Harness, tmp_path: Path) -> None:
    with backend.open() as log:
        _fill(log)
        result = export_session(log, "s", tmp_path / "out" / "s.jsonl")
    data = (tmp_path / "out" / "s.jsonl").read_bytes()
    assert data == b"".join(backend.stored_lines("s"))
    assert result.events == 34 and result.sha256 == hashlib.sha256(data).hexdigest() and result.size_bytes == len(data)
    _doc_verifier()(tmp_path / "out" / "s.jsonl", "s")
    with JsonlEventLog(tmp_path / "out") as embedded:
        assert embedded.verify("s").ok and embedded.verify("s").head_hash == result.head_hash
        assert MemoryRefs(embedded).get("s", "refs/tags/v1").seq == 2


def test_import_then_export_round_trips_byte_for_byte(backend: Harness, tmp_path: Path) -> None:
    source = tmp_path / "source"
    with JsonlEventLog(source) as embedded:
        _fill(embedded, "a")
        _fill(embedded, "b", extra=3)
    with backend.open() as log:
        results = import_paths(log, [source])
        assert [(r.session, r.imported, r.skipped) for r in results] == [("a", 34, 0), ("b", 7, 0)]
        assert log.verify("a").ok and log.verify("b").ok
        event = log.get("a", 1)
        assert event.payload == PAYLOADS[0]
        assert log.resolve(event.citation) == event
        exported = export_sessions(log, tmp_path / "back")
        again = import_file(log, source / "a.jsonl")  # idempotent: everything is already there
        assert (again.imported, again.skipped) == (0, 34)
        # the imported session keeps chaining with new appends
        assert log.append("a", "note.added", {"after": "import"}).seq == 35
    for name in ("a", "b"):
        assert (tmp_path / "back" / f"{name}.jsonl").read_bytes() == (source / f"{name}.jsonl").read_bytes()
    assert {r.sha256 for r in exported} == {r.sha256 for r in results}


def test_import_refuses_a_tampered_file_and_writes_nothing(backend: Harness, tmp_path: Path) -> None:
    source = tmp_path / "source"
    with JsonlEventLog(source) as embedded:
        _fill(embedded)
    path = source / "s.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"i":7', b'"i":8'))
    with backend.open() as log:
        with pytest.raises(IntegrityError) as info:
            import_file(log, path)
        assert "seq 11" in info.value.message
        assert log.head("s") is None and log.sessions() == []


def test_import_skips_a_torn_tail_but_keeps_a_complete_last_event(backend: Harness, tmp_path: Path) -> None:
    source = tmp_path / "source"
    with JsonlEventLog(source) as embedded:
        embedded.append_many("s", [{"type": "note.added", "payload": {"i": i}} for i in range(3)])
    path = source / "s.jsonl"
    complete = path.read_bytes()
    path.write_bytes(complete + b'{"actor":"agent","hash":"ab')
    with backend.open() as log:
        result = import_file(log, path)
        assert result.imported == 3 and result.warnings and "torn" in result.warnings[0]
    path.write_bytes(complete[:-1])  # last event lacks only its newline
    other = tmp_path / "other"
    with JsonlEventLog(other) as target:
        assert import_file(target, path).imported == 3
        assert (other / "s.jsonl").read_bytes() == complete


def test_import_continues_a_session_or_refuses_a_diverged_one(backend: Harness, tmp_path: Path) -> None:
    source = tmp_path / "source"
    with JsonlEventLog(source) as embedded:
        embedded.append_many("s", [{"type": "note.added", "payload": {"i": i}} for i in range(5)])
    with backend.open() as log:
        log.append("s", "note.added", {"i": "different"})
        with pytest.raises(ConflictError) as info:
            import_file(log, source / "s.jsonl")
        assert "seq 1" in info.value.message
        assert log.head("s").seq == 1


def test_export_refuses_a_broken_log_and_leaves_no_file(backend: Harness, tmp_path: Path) -> None:
    with backend.open() as log:
        _fill(log, extra=2)
    lines = backend.stored_lines("s")
    lines[1] = lines[1].replace(b"hunter2", b"hunter3").replace(b"[REDACTED]", b"[REDACTEX]")
    backend.rewrite("s", lines)
    with backend.open() as log:
        with pytest.raises(IntegrityError) as info:
            export_session(log, "s", tmp_path / "out" / "s.jsonl")
        assert "seq 2" in info.value.message
        with pytest.raises(NotFoundError):
            export_session(log, "missing", tmp_path / "out" / "missing.jsonl")
    assert list((tmp_path / "out").glob("*")) == []


def test_export_does_not_overwrite_without_permission(backend: Harness, tmp_path: Path) -> None:
    with backend.open() as log:
        log.append("s", "note.added", {})
        export_session(log, "s", tmp_path / "s.jsonl")
        with pytest.raises(ConflictError):
            export_session(log, "s", tmp_path / "s.jsonl")
        assert export_session(log, "s", tmp_path / "s.jsonl", overwrite=True).events == 1
