"""How checkpoint data is written into JSON event payloads.

Checkpoint bodies and metadata go in as JSON when they are JSON (tuples become lists, as in the PostgreSQL
saver), so the log stays readable and filterable; anything else, and every channel value and pending write,
goes through the saver's serde (``dumps_typed``) and is stored base64-encoded. Redaction does not see inside
serde bytes: use LangGraph's ``EncryptedSerializer`` for sensitive graph state.

Key safety: the log redacts values under credential-like keys. Below the top level, checkpoint data is keyed
by channel, node and namespace names that a graph author chose (a channel may well be called ``token``), so
nested objects are written as ``{"__map__": [[key, value], ...]}``: a name never sits in key position where
redaction would replace its value. Top-level metadata keys (copied from ``config``) stay keys, so a
credential passed in ``configurable`` is still redacted.
"""

from __future__ import annotations

import base64
import hashlib
import math
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol


class NotJSON(Exception):
    """A value that plain JSON cannot hold without changing it."""


MAP = "__map__"


def to_json(value: Any, depth: int = 0) -> Any:
    """The key-safe JSON form of ``value`` (tuples as lists, nested objects as ``__map__`` pairs)."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        if type(value) is not int:
            raise NotJSON(type(value).__name__)
        return value
    if isinstance(value, float):
        if type(value) is not float or not math.isfinite(value):
            raise NotJSON(repr(value))
        return value
    if isinstance(value, dict):
        if any(not isinstance(key, str) for key in value):
            raise NotJSON("non-string key")
        if depth == 0:
            return {key: to_json(item, 1) for key, item in value.items()}
        return {MAP: [[key, to_json(item, depth + 1)] for key, item in value.items()]}
    if isinstance(value, (list, tuple)):
        return [to_json(item, depth + 1) for item in value]
    raise NotJSON(type(value).__name__)


def from_json(value: Any, depth: int = 0) -> Any:
    """Inverse of :func:`to_json` (a fresh structure callers may mutate)."""
    if isinstance(value, dict):
        if depth == 0:
            return {key: from_json(item, 1) for key, item in value.items()}
        return {key: from_json(item, depth + 1) for key, item in value[MAP]}
    if isinstance(value, list):
        return [from_json(item, depth + 1) for item in value]
    return value


def copy_json(value: Any) -> Any:
    """A deep copy of a plain-JSON value (callers may mutate what they get back)."""
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    return value


def encode_mapping(
    value: dict[str, Any], serde: SerializerProtocol
) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
    """``(key-safe json, None)`` for a JSON-able mapping, else ``(None, {"type", "data"})`` via the serde."""
    try:
        return to_json(value), None
    except NotJSON:
        kind, data = serde.dumps_typed(value)
        return None, {"type": kind, "data": b64(data)}


def decode_typed(typed: dict[str, str], serde: SerializerProtocol) -> Any:
    return serde.loads_typed((typed["type"], unb64(typed["data"])))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str) -> bytes:
    return base64.b64decode(text)


def blob_ref(encoding: str, kind: str, data: bytes, base: str | None = None) -> str:
    """Content address of a stored blob (sha256 over encoding, base, serde type and bytes)."""
    digest = hashlib.sha256()
    for part in (encoding.encode(), (base or "").encode(), kind.encode()):
        digest.update(part)
        digest.update(b"\x00")
    digest.update(data)
    return digest.hexdigest()
