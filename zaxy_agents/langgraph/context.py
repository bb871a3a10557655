"""The memory context an agent conditions on: a Memory Checkout rendered for the model, kept in graph state.

The checkout node / middleware store a :class:`MemoryContext` under the ``memory_context`` state key instead
of adding messages: the packet changes every turn, and a message list that keeps being rewritten costs
tokens, breaks prompt caches and defeats the checkpointer's append-only deltas. The model sees it through
the system message — :func:`with_memory` for hand-written model nodes, automatically with the middleware —
placed after the developer's system prompt, so the stable tier stays at a byte-stable position.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict

from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage, SystemMessage

from zaxy_agents.checkpoints.transcript import is_memory_derived

STATE_KEY = "memory_context"

# How the model should treat memory, by the packet's answerability verdict.
DIRECTIVES = {
    "answer_from_memory": "Memory covers this request: rely on it and cite the eventloom:// citations you use.",
    "refresh_recommended": (
        "Memory is only partial for this request: verify with memory_query (or ask the user) before relying on "
        "it, and cite the eventloom:// citations you use."
    ),
    "ask_user": (
        "Memory holds nothing specific to this request: do not invent remembered facts; ask the user for what you need."
    ),
}


class MemoryContext(TypedDict):
    """One checkout, as stored in state (JSON-serialisable, so any checkpointer can save it)."""

    prompt: str  # what goes into the system message ("" when there is nothing to show)
    query: str
    message_id: str | None  # the user message it was checked out for (one checkout per user turn)
    session: str
    answerability: str
    confidence: float
    citations: list[str]
    required_action: dict[str, Any] | None
    warnings: NotRequired[list[str]]


def render_for_model(packet: Any) -> str:
    """The packet's prompt closed by a one-line directive that follows its answerability verdict.

    The directive goes last so the packet's stable tier keeps its byte-stable position right after the system
    prompt. When memory holds nothing at all (no citation in the packet) only the directive is sent: a packet
    of empty headings costs tokens and tells the model nothing.
    """
    directive = DIRECTIVES.get(packet.quality.answerability, "")
    if not packet.provenance:
        return f"# Memory Checkout\n- {directive}\n"
    return f"{packet.prompt.rstrip()}\n- {directive}\n"


def memory_context(packet: Any, *, session: str, message_id: str | None) -> MemoryContext:
    action = packet.quality.required_action
    context = MemoryContext(
        prompt=render_for_model(packet),
        query=packet.query,
        message_id=message_id,
        session=session,
        answerability=packet.quality.answerability,
        confidence=packet.quality.confidence,
        citations=sorted({item.citation for item in packet.provenance}),
        required_action=action.model_dump(exclude_none=True) if action is not None else None,
    )
    if packet.warnings:
        context["warnings"] = list(packet.warnings)
    return context


def with_memory(state: Mapping[str, Any] | Sequence[AnyMessage], system_prompt: str | None = None) -> list[BaseMessage]:
    """The messages to send to the model: one system message (``system_prompt``, then a leading system message
    already in the list, then the memory context) followed by the conversation.

    ``state`` is the graph state (with ``messages`` and the checkout node's ``memory_context``) or a plain
    message list. ``llm.invoke(with_memory(state, "You are ..."))`` is the one-line change to a model node.
    """
    if isinstance(state, Mapping):
        messages = list(state.get("messages") or [])
        context = state.get(STATE_KEY) or {}
    else:
        messages, context = list(state), {}
    leading = messages[0] if messages and isinstance(messages[0], SystemMessage) else None
    rest = messages[1:] if leading is not None else messages
    text = "\n\n".join(
        part for part in (system_prompt, leading.text if leading else None, context.get("prompt")) if part
    )
    return ([SystemMessage(text)] if text else []) + rest


def merge_system_message(system: SystemMessage | None, memory_text: str) -> SystemMessage:
    """``system`` with the memory context appended (content blocks are kept as blocks)."""
    if system is None:
        return SystemMessage(memory_text)
    content = system.content
    if isinstance(content, str):
        merged: Any = f"{content}\n\n{memory_text}" if content else memory_text
    else:
        merged = [*content, {"type": "text", "text": memory_text}]
    return SystemMessage(content=merged, additional_kwargs=system.additional_kwargs, id=system.id, name=system.name)


def latest_user_message(messages: Sequence[Any]) -> HumanMessage | None:
    """The newest human message that memory did not inject: the current task."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and not is_memory_derived(message):
            return message
    return None
