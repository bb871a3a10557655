"""Contract: bad input gets a clear, structured error naming the field, and nothing is written (every backend)."""

from __future__ import annotations

import pytest

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.storage.conformance.harness import Harness


@pytest.mark.parametrize(
    "session", ["../etc", "a/b", "..", ".", "", "x" * 129, "with space", "tab\t", "ü", "a\\b", None, 5]
)
def test_bad_session_ids_are_rejected(elog: EventLog, session: object) -> None:
    with pytest.raises(InvalidRequestError) as info:
        elog.append(session, "note.added", {})  # type: ignore[arg-type]
    assert info.value.field == "session"
    assert "A-Z" in info.value.remediation or "directory" in info.value.message
    with pytest.raises(InvalidRequestError):
        elog.head(session)  # type: ignore[arg-type]
    assert elog.sessions() == []


@pytest.mark.parametrize("event_type", ["Task.Created", "task", "task..done", "1task.x", "task.", "a.b c", ""])
def test_bad_event_types_are_rejected(elog: EventLog, event_type: str) -> None:
    with pytest.raises(InvalidRequestError) as info:
        elog.append("s", event_type, {})
    assert info.value.field == "type"
    assert elog.head("s") is None


@pytest.mark.parametrize("payload", [[1, 2], "text", 3, True])
def test_non_object_payloads_are_rejected(elog: EventLog, payload: object) -> None:
    with pytest.raises(InvalidRequestError) as info:
        elog.append("s", "note.added", payload)  # type: ignore[arg-type]
    assert info.value.field == "payload"
    assert elog.head("s") is None


@pytest.mark.parametrize(
    "payload", [{"x": float("nan")}, {"x": object()}, {1: "int key"}, {"x": {2: 3}}, {"x": "lone \ud800 surrogate"}]
)
def test_non_json_payloads_are_rejected(elog: EventLog, payload: dict) -> None:
    with pytest.raises(InvalidRequestError) as info:
        elog.append("s", "note.added", payload)
    assert info.value.field == "payload"
    assert elog.head("s") is None


def test_huge_payload_is_rejected_with_the_limit(backend: Harness) -> None:
    with backend.open(max_payload_bytes=4096) as small:
        with pytest.raises(InvalidRequestError) as info:
            small.append("s", "note.added", {"blob": "x" * 5000})
        assert "4096" in info.value.message and info.value.field == "payload"
        assert small.head("s") is None
        small.append("s", "note.added", {"blob": "x" * 3000})


def test_default_limit_is_one_mebibyte(elog: EventLog) -> None:
    with pytest.raises(InvalidRequestError):
        elog.append("s", "note.added", {"blob": "x" * (1024 * 1024 + 1)})


@pytest.mark.parametrize("actor", ["", "   ", None, "x" * 300, "a\nb"])
def test_actor_is_required_and_bounded(elog: EventLog, actor: object) -> None:
    with pytest.raises(InvalidRequestError) as info:
        elog.append("s", "note.added", {}, actor=actor)  # type: ignore[arg-type]
    assert info.value.field == "actor"


def test_error_shape_is_structured() -> None:
    error = InvalidRequestError("bad", field="payload", remediation="fix it")
    assert error.to_dict() == {
        "error": {"code": "invalid_request", "message": "bad", "remediation": "fix it", "field": "payload"}
    }
