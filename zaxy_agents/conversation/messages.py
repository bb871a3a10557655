"""Event drafts from LangChain messages: ``transcript.turn`` per message, ``tool.call.completed`` per tool result.

Turns use exactly the payload ZaxyCheckpointer writes (same ``message_id``), so a graph that runs both the
checkpointer and the capture node records each message once. Tool results follow the hooks' vocabulary
(``tool``, ``tool_use_id``, ``status``, ``argument_keys``; argument values are never stored — they are in the
assistant turn's ``tool_calls``). Messages memory itself injected are skipped (see
:func:`zaxy_agents.checkpoints.transcript.is_memory_derived`). Secrets are removed by the Eventloom's
redaction before hashing; ``redact`` lets a caller remove more (names, customer data) first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from zaxy_agents.checkpoints.transcript import is_memory_derived, message_id, turn_payload

from .events import TOOL_CALL_COMPLETED, TRANSCRIPT_TURN

MAX_TURN_TEXT_CHARS = 200_000
RESULT_SUMMARY_CHARS = 300

Redactor = Callable[[str], str]


def turn_drafts(
    messages: Sequence[Any],
    known: set[str],
    *,
    thread_id: str,
    checkpoint_ns: str = "",
    checkpoint_id: str = "",
    channel: str = "messages",
    actor: str = "langgraph",
    redact: Redactor | None = None,
) -> list[dict[str, Any]]:
    """One ``transcript.turn`` draft per message whose id is not in ``known`` (``known`` is not modified)."""
    drafts, seen = [], set(known)
    for position, message in enumerate(messages):
        if not isinstance(message, BaseMessage) or is_memory_derived(message):
            continue
        identifier = message_id(message, position)
        if identifier in seen:
            continue
        seen.add(identifier)
        payload = turn_payload(
            message,
            identifier,
            thread_id=thread_id,
            checkpoint_ns=checkpoint_ns,
            checkpoint_id=checkpoint_id,
            channel=channel,
        )
        if redact is not None:
            payload["text"] = redact(payload["text"])
        if len(payload["text"]) > MAX_TURN_TEXT_CHARS:
            payload["text"], payload["truncated"] = payload["text"][:MAX_TURN_TEXT_CHARS], True
        drafts.append({"type": TRANSCRIPT_TURN, "payload": payload, "actor": actor})
    return drafts


def tool_call_drafts(
    messages: Sequence[Any],
    known: set[str],
    *,
    thread_id: str,
    actor: str = "langgraph",
    redact: Redactor | None = None,
) -> list[dict[str, Any]]:
    """One ``tool.call.completed`` draft per tool result whose ``tool_call_id`` is not in ``known``."""
    new: dict[str, Any] = {}  # tool results not recorded yet, by call id (the first of each)
    for message in tool_results(messages):
        call_id = str(message.tool_call_id)
        if call_id not in known:
            new.setdefault(call_id, message)
    if not new:  # most turns: the conversation is not scanned again for the calls
        return []
    calls = {str(call.get("id")): call for call in _tool_calls(messages) if call.get("id")}
    drafts = []
    for call_id, message in new.items():
        call = calls.get(call_id, {})
        args = call.get("args")
        result = " ".join(str(message.text).split())
        if redact is not None:
            result = redact(result)
        failed = message.status == "error"
        payload: dict[str, Any] = {
            "tool": str(call.get("name") or message.name or "unknown"),
            "tool_use_id": call_id,
            "status": "error" if failed else "ok",
            "ok": not failed,
            "argument_keys": sorted(map(str, args)) if isinstance(args, dict) else [],
            "result_summary": result
            if len(result) <= RESULT_SUMMARY_CHARS
            else result[: RESULT_SUMMARY_CHARS - 1] + "…",
            "thread_id": thread_id,
            "client": "langgraph",
        }
        if message.id:
            payload["message_id"] = str(message.id)
        drafts.append({"type": TOOL_CALL_COMPLETED, "payload": payload, "actor": actor})
    return drafts


def tool_results(messages: Iterable[Any]) -> Iterable[ToolMessage]:
    """The results of the agent's own tool calls (not memory's: those are never echoed into the log)."""
    for message in messages:
        if isinstance(message, ToolMessage) and not is_memory_derived(message) and message.tool_call_id:
            yield message


def _tool_calls(messages: Iterable[Any]) -> Iterable[dict[str, Any]]:
    for message in messages:
        if isinstance(message, AIMessage):
            yield from message.tool_calls
