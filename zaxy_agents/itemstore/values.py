"""Item values exactly as the caller gave them: key order, and values far larger than one event.

Key order. The log stores canonical JSON (keys sorted) so its hashes are reproducible; InMemoryStore,
SqliteStore and PostgresStore hand back a value's keys in the order they were put. A ``store.item.put`` whose
value has an object whose keys are not already sorted carries ``key_order``: ``[[path, [keys...]], ...]``
(``path`` a list of object keys and list indexes from the value's root), and replay restores that order.

Large values. A value whose JSON is longer than one event may hold is written as ``store.item.chunk`` events
(``namespace``, ``key``, ``part``, ``parts``, ``data``: a slice of the value's JSON text in its own key order,
or ``data_base64`` when the log's secret redaction would otherwise rewrite the slice) followed by the
``store.item.put`` with ``value_chunks`` (``parts``, ``chars``, ``sha256`` of the text) instead of ``value``
and a bounded ``text`` preview for retrieval. All of them go in one atomic append. The value is redacted as a
whole first, so chunking never lets a secret through that an inline value would have had redacted.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.key_order import key_order, restore_key_order
from zaxy_agents.eventloom.redaction import policy_for, redact_text, redact_value, text_has_markers

__all__ = ["key_order", "restore_key_order"]

ITEM_CHUNK = "store.item.chunk"
# Far above what an agent stores (PostgresStore's jsonb stops at 255 MB); a value is held in memory whole.
MAX_VALUE_BYTES = 128 * 1024 * 1024
PREVIEW_CHARS = 4_000
# Room in an event for the envelope and the other fields of a chunk or put payload.
_HEADROOM = 16 * 1024


def dumps(value: Any) -> str:
    """JSON text in the value's own key order (what the derived state keeps and what chunks slice)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def chunk_chars(max_payload_bytes: int) -> int:
    """Characters per chunk so that a chunk event stays under the log's payload limit (JSON escaping of a
    character takes at most 6 bytes)."""
    return max(1024, (max_payload_bytes - _HEADROOM) // 6)


def check_size(text: str) -> None:
    size = len(text.encode("utf-8"))
    if size > MAX_VALUE_BYTES:
        raise InvalidRequestError(
            f"the value is {size} bytes of JSON, above the store's limit of {MAX_VALUE_BYTES} bytes",
            field="value",
            remediation="Store large documents in pieces (one item per section) or keep a reference to a file.",
        )


def redacted_text(value: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The whole value redacted (as the log would redact an inline value) and its JSON text."""
    value, _paths = redact_value(value, policy=policy_for("store.item.put"))  # the store's policy (values by default)
    return value, dumps(value)


def chunk_payloads(namespace: list[str], key: str, text: str, size: int) -> tuple[list[dict[str, Any]], dict]:
    """The ``store.item.chunk`` payloads for ``text`` and the put's ``value_chunks`` descriptor."""
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    payloads = []
    for part, piece in enumerate(pieces):
        payload: dict[str, Any] = {"namespace": namespace, "key": key, "part": part, "parts": len(pieces)}
        if text_has_markers(piece) and redact_text(piece)[1]:
            payload["data_base64"] = base64.b64encode(piece.encode("utf-8")).decode("ascii")
        else:
            payload["data"] = piece
        payloads.append(payload)
    descriptor = {"parts": len(pieces), "chars": len(text), "sha256": hashlib.sha256(text.encode()).hexdigest()}
    return payloads, descriptor


def chunk_text(payload: dict[str, Any]) -> str:
    if "data_base64" in payload:
        return base64.b64decode(payload["data_base64"]).decode("utf-8")
    return str(payload["data"])


def join_chunks(pieces: dict[int, str], descriptor: dict[str, Any]) -> str:
    """The value's JSON text from its chunks, checked against the put's descriptor."""
    parts = int(descriptor["parts"])
    if sorted(pieces) != list(range(parts)):
        raise ValueError(f"chunks {sorted(pieces)} do not make up {parts} parts")
    text = "".join(pieces[i] for i in range(parts))
    if hashlib.sha256(text.encode()).hexdigest() != descriptor["sha256"]:
        raise ValueError("the joined chunks do not match the put's sha256")
    return text
