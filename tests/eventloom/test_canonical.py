"""Property tests for canonical encoding and the event hash."""

from __future__ import annotations

import hashlib
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from zaxy_agents.eventloom.canonical import GENESIS_HASH, canonical_bytes, encode_line, event_hash

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
payloads = st.dictionaries(st.text(max_size=10), json_values, max_size=6)


def _envelope(payload: dict, seq: int = 1) -> dict:
    return {
        "actor": "agent",
        "id": "evt_x",
        "payload": payload,
        "prev_hash": GENESIS_HASH,
        "seq": seq,
        "session": "s",
        "timestamp": "2026-01-01T00:00:00.000000Z",
        "type": "fact.asserted",
    }


@given(payloads)
@settings(max_examples=300)
def test_canonical_round_trip_is_a_fixed_point(payload: dict) -> None:
    encoded = canonical_bytes(payload)
    assert canonical_bytes(json.loads(encoded)) == encoded


@given(payloads)
@settings(max_examples=200)
def test_hash_ignores_key_insertion_order(payload: dict) -> None:
    reversed_payload = dict(reversed(list(payload.items())))
    assert event_hash(_envelope(payload)) == event_hash(_envelope(reversed_payload))


@given(payloads, st.text(min_size=1, max_size=8))
@settings(max_examples=200)
def test_hash_changes_when_payload_changes(payload: dict, key: str) -> None:
    changed = {**payload, key: ["changed", payload.get(key)]}
    assert event_hash(_envelope(payload)) != event_hash(_envelope(changed))


@given(payloads)
@settings(max_examples=200)
def test_stored_line_round_trips_and_rehashes(payload: dict) -> None:
    envelope = _envelope(payload)
    envelope["hash"] = event_hash(envelope)
    line = encode_line(envelope)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    decoded = json.loads(line)
    assert decoded == envelope
    assert event_hash(decoded) == envelope["hash"]
    assert encode_line(decoded) == line


def test_hash_matches_the_documented_recipe() -> None:
    """An outside tool following docs/eventloom.md gets the same digest."""
    envelope = _envelope({"text": "café ☕", "n": 1.5, "list": [1, None, True]})
    manual = json.dumps(envelope, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    assert event_hash(envelope) == hashlib.sha256(manual).hexdigest()
    assert b"caf\xc3\xa9" in manual  # raw UTF-8, never \u escapes


def test_security_block_is_hashed_only_when_present() -> None:
    plain = _envelope({"a": 1})
    with_none = {**plain, "security": None}
    assert event_hash(plain) == event_hash(with_none)
    with_block = {**plain, "security": {"redacted_paths": ["payload.a"], "redaction_version": 1}}
    assert event_hash(plain) != event_hash(with_block)
