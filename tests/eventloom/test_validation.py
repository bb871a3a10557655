"""Bad input gets a clear, structured error naming the field, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.jsonl_log import JsonlEventLog


@pytest.mark.parametrize(
    "session", ["../etc", "a/b", "..", ".", "", "x" * 129, "with space", "tab\t", "ü", "a\\b", None, 5]
)
def test_bad_session_ids_are_rejected(log: JsonlEventLog, log_dir: Path, session: object) -> None:
    with pytest.raises(InvalidRequestError) as info:
        log.append(session, "note.added", {})  # type: ignore[arg-type]
    assert info.value.field == "session"
    assert "A-Z" in info.value.remediation or "directory" in info.value.message
    assert not log_dir.exists() or not any(log_dir.rglob("*.jsonl"))


@pytest.mark.parametrize("event_type", ["Task.Created", "task", "task..done", "1task.x", "task.", "a.b c", ""])
def test_bad_event_types_are_rejected(log: JsonlEventLog, event_type: str) -> None:
    with pytest.raises(InvalidRequestError) as info:
        log.append("s", event_type, {})
    assert info.value.field == "type"
    assert log.head("s") is None


@pytest.mark.parametrize("payload", [[1, 2], "text", 3, True])
def test_non_object_payloads_are_rejected(log: JsonlEventLog, payload: object) -> None:
    with pytest.raises(InvalidRequestError) as info:
        log.append("s", "note.added", payload)  # type: ignore[arg-type]
    assert info.value.field == "payload"
    assert log.head("s") is None


@pytest.mark.parametrize("payload", [{"x": float("nan")}, {"x": object()}, {1: "int key"}, {"x": {2: 3}}])
def test_non_json_payloads_are_rejected(log: JsonlEventLog, payload: dict) -> None:
    with pytest.raises(InvalidRequestError) as info:
        log.append("s", "note.added", payload)
    assert info.value.field == "payload"
    assert log.head("s") is None


def test_huge_payload_is_rejected_with_the_limit(log_dir: Path) -> None:
    with JsonlEventLog(log_dir, max_payload_bytes=4096) as small:
        with pytest.raises(InvalidRequestError) as info:
            small.append("s", "note.added", {"blob": "x" * 5000})
        assert "4096" in info.value.message and info.value.field == "payload"
        assert small.head("s") is None
        small.append("s", "note.added", {"blob": "x" * 3000})


def test_default_limit_is_one_mebibyte(log: JsonlEventLog) -> None:
    with pytest.raises(InvalidRequestError):
        log.append("s", "note.added", {"blob": "x" * (1024 * 1024 + 1)})


@pytest.mark.parametrize("actor", ["", "   ", None, "x" * 300, "a\nb"])
def test_actor_is_required_and_bounded(log: JsonlEventLog, actor: object) -> None:
    with pytest.raises(InvalidRequestError) as info:
        log.append("s", "note.added", {}, actor=actor)  # type: ignore[arg-type]
    assert info.value.field == "actor"


def test_error_shape_is_structured() -> None:
    error = InvalidRequestError("bad", field="payload", remediation="fix it")
    assert error.to_dict() == {
        "error": {"code": "invalid_request", "message": "bad", "remediation": "fix it", "field": "payload"}
    }
