"""``event_from_envelope`` builds the Event of a just-sealed envelope without ``model_construct``'s generic loop
(eventloom/models.py): the instance must be the one ``Event.model_construct`` builds, attribute by attribute, for
envelopes with and without every optional field, with extra keys, a security block, and a required field missing
(which takes ``model_construct`` itself); and real appends return those Events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from zaxy_agents.eventloom.models import Event, SecurityBlock, event_from_envelope
from zaxy_agents.fabric import MemoryFabric

BASE: dict[str, Any] = {
    "id": "ev_1",
    "session": "s",
    "seq": 3,
    "type": "transcript.turn",
    "actor": "agent",
    "timestamp": "2026-01-01T00:00:00Z",
    "payload": {"text": "hello", "n": [1, 2]},
    "prev_hash": "ab" * 32,
    "hash": "cd" * 32,
}
OPTIONAL: dict[str, Any] = {
    "spec": 2,
    "salt": "00ff",
    "batch": [1, 3],
    "content_digest": "ef" * 32,
    "erased": {"reason": "request"},
}


def _reference(envelope: dict[str, Any]) -> Event:
    security = envelope.get("security")
    fields = dict(envelope)
    fields["security"] = None if security is None else SecurityBlock.model_construct(**security)
    return Event.model_construct(**fields)


def _same(fast: Event, slow: Event) -> None:
    assert type(fast) is type(slow) is Event
    assert list(fast.__dict__.items()) == list(slow.__dict__.items())  # values and declaration order
    assert fast.__pydantic_fields_set__ == slow.__pydantic_fields_set__
    assert type(fast.__pydantic_fields_set__) is type(slow.__pydantic_fields_set__)
    assert fast.__pydantic_extra__ == slow.__pydantic_extra__
    assert fast.__pydantic_private__ == slow.__pydantic_private__
    assert fast == slow and repr(fast) == repr(slow)
    assert fast.model_dump() == slow.model_dump() and fast.envelope() == slow.envelope()
    assert fast.model_fields_set == slow.model_fields_set


@pytest.mark.parametrize(
    "envelope",
    [
        BASE,
        {**BASE, "schema_version": 1, "unknown": "x"},  # extra keys: ignored by both
        {**BASE, **OPTIONAL},
        {**BASE, "spec": None, "salt": "aa"},  # an optional field given as None is still "set"
        {**BASE, "security": {"redacted_paths": ["$.payload.key"], "redaction_version": 1}},
        {**BASE, "security": {"redacted_paths": [], "other": 1}},  # the block keeps extra keys
        {key: value for key, value in BASE.items() if key != "hash"},  # a required field missing
        {key: value for key, value in BASE.items() if key not in ("actor", "id")},
    ],
)
def test_the_fast_path_builds_what_model_construct_builds(envelope: dict[str, Any]) -> None:
    before = dict(envelope)
    _same(event_from_envelope(envelope), _reference(envelope))
    assert envelope == before  # the caller's envelope is left as it was


def test_appended_events_equal_their_constructed_envelopes(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom", durability="batch", use_graph=False) as memory:
        one = memory.append("s", "note.added", {"text": "the api key is sk-abcdefghijklmnopqrstuvwxyz012345"})
        many = memory.append_many("s", [{"type": "note.added", "payload": {"text": f"note {i}"}} for i in range(3)])
        stored = {envelope["seq"]: envelope for envelope in memory.log.replay_envelopes("s")}
        for event in [one, *many]:
            _same(event, _reference(stored[event.seq]))  # what was written, constructed the reference way
            assert event == next(memory.log.replay("s", event.seq, event.seq))  # and validated when read back
        assert one.security is not None  # the secret was redacted: a security block was built
