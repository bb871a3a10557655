"""Messages flowing through a graph become ``transcript.turn`` memory events (one per new message).

Detection is structural: in a checkpoint, any channel whose value is a list holding LangChain messages is a
conversation. A message is new when it was not in the parent checkpoint's version of that list and its id
was never captured in the thread, so re-saving, forking, or replaying a thread never duplicates a turn.

Messages that memory itself put into the conversation (a recovery packet after compaction, the output of a
memory tool) are marked ``lc_source: "zaxy_memory"`` and never captured: they restate cited events, and
recording them again would make memory cite its own echoes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from langchain_core.messages import BaseMessage

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool"}
MEMORY_SOURCE = "zaxy_memory"  # ``lc_source`` of messages and tool artifacts derived from memory


def is_memory_derived(message: BaseMessage) -> bool:
    """True for messages Zaxy memory injected (``additional_kwargs`` or a tool artifact with ``lc_source``)."""
    if message.additional_kwargs.get("lc_source") == MEMORY_SOURCE:
        return True
    artifact = getattr(message, "artifact", None)
    return isinstance(artifact, dict) and artifact.get("lc_source") == MEMORY_SOURCE


def new_messages(
    value: list[Any], base: tuple[Any, ...] | None, base_is_prefix: bool, captured: set[str]
) -> list[tuple[int, BaseMessage, str]]:
    """``(position, message, message id)`` for messages of ``value`` that are not in ``base`` nor captured.

    When ``base`` is a prefix of ``value`` only the appended tail is examined.
    """
    if base is not None and base_is_prefix:
        start, known = len(base), set()
    else:
        start, known = 0, {message_id(m, i) for i, m in enumerate(base or ()) if isinstance(m, BaseMessage)}
    found = []
    for position in range(start, len(value)):
        message = value[position]
        if not isinstance(message, BaseMessage) or is_memory_derived(message):
            continue
        identifier = message_id(message, position)
        if identifier in captured or identifier in known:
            continue
        found.append((position, message, identifier))
    return found


def message_id(message: BaseMessage, position: int) -> str:
    """The message's own id, or a stable one from its position and content (reducers without ids)."""
    if message.id:
        return str(message.id)
    digest = hashlib.sha256(f"{position}\x00{message.type}\x00{_text(message)}".encode()).hexdigest()[:24]
    return f"anon-{digest}"


def turn_payload(
    message: BaseMessage,
    identifier: str,
    *,
    thread_id: str,
    checkpoint_ns: str,
    checkpoint_id: str,
    channel: str,
) -> dict[str, Any]:
    role = getattr(message, "role", None) if message.type == "chat" else None
    payload: dict[str, Any] = {
        "role": role or _ROLES.get(message.type, message.type),
        "text": _text(message),
        "message_id": identifier,
        "thread_id": thread_id,
        "checkpoint_ns": checkpoint_ns,
        "checkpoint_id": checkpoint_id,
        "channel": channel,
        "message_type": message.type,
    }
    if message.name:
        payload["name"] = message.name
    tool_calls = getattr(message, "tool_calls", None)
    if tool_calls:
        payload["tool_calls"] = [
            {"name": call.get("name"), "args": _jsonable(call.get("args")), "id": call.get("id")} for call in tool_calls
        ]
    tool_call_id = getattr(message, "tool_call_id", None)
    if tool_call_id:
        payload["tool_call_id"] = str(tool_call_id)
    return payload


def captured_ids(payloads: Iterable[dict[str, Any]]) -> set[str]:
    return {str(p["message_id"]) for p in payloads if p.get("message_id")}


def _text(message: BaseMessage) -> str:
    try:
        return str(message.text)
    except Exception:  # content blocks of an unknown shape: keep a readable rendering
        return message.content if isinstance(message.content, str) else json.dumps(_jsonable(message.content))


def _jsonable(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return str(value)
