"""The ``store.*`` events ZaxyStore writes (contract documented in docs/langgraph.md).

``store.item.put``      namespace, key, value, index, ttl_minutes, expires_at and, when the store has a
                        vector index, the texts it embeds (``texts``: ``[{"path", "text"}]``).
``store.item.deleted``  namespace, key, reason (``"delete"`` or ``"ttl_expired"``).
``store.item.touched``  namespace, key, expires_at: a read refreshed the item's TTL.
``store.item.chunk``    a slice of a value too large for one event (see :mod:`.values`).

A put may also carry ``key_order`` (the value's key order where it is not sorted) or, for a chunked value,
``value_chunks`` and a ``text`` preview instead of ``value``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from zaxy_agents.errors import InvalidRequestError

ITEM_PUT = "store.item.put"
ITEM_DELETED = "store.item.deleted"
ITEM_TOUCHED = "store.item.touched"
STORE_EVENT_TYPES = frozenset({ITEM_PUT, ITEM_DELETED, ITEM_TOUCHED})
DEFAULT_STORE_SESSION = "langgraph-store"


def put_payload(
    namespace: tuple[str, ...],
    key: str,
    value: dict[str, Any] | None,
    *,
    index: Literal[False] | list[str] | None,
    texts: list[tuple[str, str]] | None,
    ttl_minutes: float | None,
    expires_at: float | None,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "namespace": list(namespace),
        "key": key,
        "value": value,
        "index": index if index is False or index is None else list(index),
        "ttl_minutes": ttl_minutes,
        "expires_at": None if expires_at is None else format_time(expires_at),
    }
    if texts is not None:
        payload["texts"] = [{"path": path, "text": text} for path, text in texts]
    return payload


def deleted_payload(namespace: tuple[str, ...], key: str, reason: str) -> dict[str, Any]:
    return {"namespace": list(namespace), "key": key, "reason": reason}


def touched_payload(namespace: tuple[str, ...], key: str, expires_at: float) -> dict[str, Any]:
    return {"namespace": list(namespace), "key": key, "expires_at": format_time(expires_at)}


def format_time(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    """Event timestamps (``...Z``) as tz-aware UTC datetimes."""
    return datetime.fromisoformat(text)


def parse_epoch(text: str | None) -> float | None:
    return None if text is None else parse_time(text).timestamp()


def plain_value(value: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of an item value as plain JSON (tuples become lists), or a clear error.

    Copying decouples the store from later mutation of the caller's object; the walk doubles as validation,
    so a value that cannot be written never produces half an event.
    """
    if not isinstance(value, Mapping):
        raise InvalidRequestError(
            f"store values must be mappings, got {type(value).__name__}",
            field="value",
            remediation='Wrap the value in a dict, for example {"content": ...}.',
        )
    return _plain(value, "value")


def _plain(value: Any, path: str) -> Any:
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise _not_json(path, f"non-finite number {value!r}")
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _not_json(path, f"non-string key {key!r}")
            out[key] = _plain(item, f"{path}.{key}")
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(item, f"{path}[{i}]") for i, item in enumerate(value)]
    raise _not_json(path, f"a {type(value).__name__} is not JSON")


def _not_json(path: str, why: str) -> InvalidRequestError:
    return InvalidRequestError(
        f"{path}: {why}",
        field=path,
        remediation="Store JSON values only: objects with string keys, lists, strings, finite numbers, "
        "booleans and null (convert datetimes and models first, e.g. model.model_dump(mode='json')).",
    )
