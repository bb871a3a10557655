"""Deterministic extractors: what each event type projects, and how bad payloads degrade."""

from __future__ import annotations

import pytest

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric.features import builtin_features
from zaxy_agents.projection.model import typed_label


def envelope(event_type: str, payload: dict, seq: int = 1) -> dict:
    return {
        "type": event_type,
        "payload": payload,
        "seq": seq,
        "session": "s",
        "actor": "agent",
        "hash": "a" * 64,
        "prev_hash": "0" * 64,
        "timestamp": "2026-01-01T00:00:00.000000Z",
        "id": "evt_1",
    }


def kinds(extraction) -> list[tuple[str, str, str]]:
    return [(e.entity_type, e.name, e.mode) for e in extraction.entities]


def test_every_required_type_has_an_extractor() -> None:
    table = builtin_features().extractors.registered_types()
    for event_type in [
        "transcript.turn",
        "fact.asserted",
        "task.created",
        "task.updated",
        "task.completed",
        "decision.recorded",
        "tool.call.completed",
        "command.completed",
        "file.edit.applied",
        "document.chunk",
        "memory.reinforced",
        "memory.feedback",
        "memory.invalidated",
        "inference.edge.generated",
        "hook.*",
        "session.ended",
    ]:
        assert event_type in table, event_type


def test_task_links_observations() -> None:
    result = builtin_features().extractors.extract(
        envelope("command.completed", {"command": "pytest -q", "exit_code": 1, "task_id": "T-9"})
    )
    assert ("task", "T-9", "reference") in kinds(result)
    assert [(r.source.name, r.relation_type) for r in result.relations] == [("T-9", "observed_command")]
    edit = builtin_features().extractors.extract(
        envelope("file.edit.applied", {"path": "src/a.py", "operation": "edit", "task_id": "T-9"})
    )
    assert [r.relation_type for r in edit.relations] == ["edited_file", "observed_file_edit"]
    file, observation = edit.entities[-2:]
    assert (file.entity_type, file.source_path, observation.entity_type) == ("file", "src/a.py", "file_edit")
    assert edit.relations[1].target.name == observation.name  # the task observed the edit (seed 002)
    camel = builtin_features().extractors.extract(
        envelope("command.completed", {"command": "make", "exit_code": 0, "taskId": "T-9"})
    )
    assert [(r.source.name, r.relation_type) for r in camel.relations] == [("T-9", "observed_command")]
    call = builtin_features().extractors.extract(
        envelope("tool.call.completed", {"tool": "grep", "argument_keys": ["pattern"], "task_id": "T-9"})
    )
    assert {r.relation_type for r in call.relations} == {"invoked_tool", "observed_tool_call"}
    checkpoint = builtin_features().extractors.extract(
        envelope("task.checkpoint", {"task_id": "T-9", "note": "half done"})
    )
    assert [r.relation_type for r in checkpoint.relations] == ["has_checkpoint"]


def test_fact_identity_uses_subject_and_predicate() -> None:
    result = builtin_features().extractors.extract(
        envelope("fact.asserted", {"subject": "user", "predicate": "city", "object": "Lisbon"})
    )
    assert ("fact", "user city", "assert") in kinds(result)
    assert result.entities[-1].summary == "user city Lisbon"


def test_document_chunk_cites_its_source() -> None:
    result = builtin_features().extractors.extract(
        envelope(
            "document.chunk",
            {
                "path": "docs/a.md",
                "chunk_index": 2,
                "text": "hello",
                "line_start": 10,
                "line_end": 20,
                "checksum": "abc",
            },
        )
    )
    chunk = result.entities[-1]
    assert (chunk.name, chunk.source_path, chunk.line_start, chunk.line_end) == ("docs/a.md#2", "docs/a.md", 10, 20)


def test_unknown_type_projects_one_generic_entity() -> None:
    result = builtin_features().extractors.extract(envelope("weather.observed", {"sky": "clear", "temp": 21}))
    assert kinds(result) == [("event", "weather.observed #1", "assert")]
    assert "clear" in result.searchable_text and not result.failures


def test_unusable_payload_is_reported_not_dropped() -> None:
    result = builtin_features().extractors.extract(envelope("task.created", {"priority": "high"}))
    assert kinds(result) == [("event", "task.created #1", "assert")]
    assert result.failures and "task_id or title" in result.failures[0]


def test_bookkeeping_events_are_silent() -> None:
    for event_type in ["checkpoint.saved", "memory.ref.updated", "eventloom.torn_tail_recovered"]:
        result = builtin_features().extractors.extract(envelope(event_type, {"x": 1}))
        assert not result.entities and not result.searchable_text


@pytest.mark.parametrize("bad", ["CallsSymbol", "calls-symbol", "calls__symbol", "_x", "x" * 61, "has_event", "1a"])
def test_typed_labels_accept_only_strict_snake_case(bad: str) -> None:
    with pytest.raises(InvalidRequestError) as info:
        typed_label(bad)
    assert info.value.field == "relation_type"


def test_typed_label_maps_to_upper() -> None:
    assert typed_label("calls_symbol") == "CALLS_SYMBOL"
