"""Plain LangGraph nodes that give any ``StateGraph`` memory: checkout, capture, compaction, feedback.

```python
from zaxy_agents.langgraph.nodes import ZaxyMemoryState, capture_node, checkout_node, with_memory

builder = StateGraph(ZaxyMemoryState)  # MessagesState + memory_context
builder.add_node("checkout", checkout_node(memory, max_tokens=1200))
builder.add_node("model", lambda state: {"messages": [llm.invoke(with_memory(state, "You are ..."))]})
builder.add_node("capture", capture_node(memory))
builder.add_edge(START, "checkout")
builder.add_edge("checkout", "model")
builder.add_edge("model", "capture")
builder.add_edge("capture", END)
```

Each factory returns a function ``(state, config) -> update``. Scoping (which session a thread writes to,
which sessions it recalls from) is the same for every node and tool: see :mod:`.scoping`. See
docs/langgraph.md for each node's behaviour and the events it writes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NotRequired

from langchain_core.runnables import RunnableConfig
from langgraph.graph import MessagesState

from zaxy_agents.checkout.tokens import DEFAULT_ENCODING
from zaxy_agents.checkpoints import DEFAULT_SESSION_PREFIX
from zaxy_agents.fabric import MemoryFabric

from .context import STATE_KEY, MemoryContext, with_memory
from .scoping import MemoryScope
from .steps import CaptureStep, CheckoutStep, CompactionStep, FeedbackStep

__all__ = [
    "MemoryContext",
    "ZaxyMemoryState",
    "capture_node",
    "checkout_node",
    "compaction_node",
    "feedback_node",
    "with_memory",
]

Node = Callable[[dict[str, Any], RunnableConfig], dict[str, Any]]


class ZaxyMemoryState(MessagesState):
    """``MessagesState`` plus the checkout node's ``memory_context`` (add the key to your own state instead if
    you have one: ``memory_context: NotRequired[MemoryContext]``)."""

    memory_context: NotRequired[MemoryContext]


def _scope(session: str | None, scope: Sequence[str], session_prefix: str) -> MemoryScope:
    return MemoryScope(session=session, scope=tuple(scope), session_prefix=session_prefix)


def checkout_node(
    fabric: MemoryFabric,
    *,
    max_tokens: int = 1200,
    purpose: str | dict[str, Any] | None = None,
    scope: Sequence[str] = (),
    session: str | None = None,
    session_prefix: str = DEFAULT_SESSION_PREFIX,
    encoding: str = DEFAULT_ENCODING,
    record: bool = True,
    every_call: bool = False,
    retrieval_profile: str | None = None,
    cues: Mapping[str, str] | None = None,
) -> Node:
    """Before the model: a Memory Checkout for the latest user request, stored as ``state["memory_context"]``.

    Runs once per user message (``every_call=True``: before every model call of a tool loop too). The
    rendered packet (stable tier first, closed by a directive that follows ``quality.answerability``) reaches
    the model through :func:`with_memory`. ``record`` appends a ``metacognition.checkout`` audit event.
    """
    step = CheckoutStep(
        fabric,
        _scope(session, scope, session_prefix),
        max_tokens=max_tokens,
        purpose=purpose,
        encoding=encoding,
        record=record,
        every_call=every_call,
        retrieval_profile=retrieval_profile,
        cues=cues,
    )

    def zaxy_checkout(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        context = step.run(state.get("messages") or [], config, state.get(STATE_KEY))
        return {STATE_KEY: context} if context is not None else {}

    return zaxy_checkout


def capture_node(
    fabric: MemoryFabric,
    *,
    scope: Sequence[str] = (),
    session: str | None = None,
    session_prefix: str = DEFAULT_SESSION_PREFIX,
    redact: Callable[[str], str] | None = None,
) -> Node:
    """After the model (or tools): record new turns (``transcript.turn``) and tool results
    (``tool.call.completed``). Idempotent; with a ZaxyCheckpointer attached, turns are left to it."""
    step = CaptureStep(fabric, _scope(session, scope, session_prefix), redact=redact)

    def zaxy_capture(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        step.run(state.get("messages") or [], config)
        return {}

    return zaxy_capture


def compaction_node(
    fabric: MemoryFabric,
    *,
    max_tokens: int,
    keep_tokens: int | None = None,
    recovery_tokens: int = 1500,
    purpose: str | dict[str, Any] | None = None,
    scope: Sequence[str] = (),
    session: str | None = None,
    session_prefix: str = DEFAULT_SESSION_PREFIX,
    encoding: str = DEFAULT_ENCODING,
    redact: Callable[[str], str] | None = None,
) -> Node:
    """Before the model: when the messages exceed ``max_tokens`` (tiktoken), record a ``transcript.compacted``
    event, keep the newest ``keep_tokens`` (default half) and inject a cited recovery packet of at most
    ``recovery_tokens`` in place of the removed messages."""
    memory_scope = _scope(session, scope, session_prefix)
    step = CompactionStep(
        fabric,
        memory_scope,
        CaptureStep(fabric, memory_scope, redact=redact),
        max_tokens=max_tokens,
        keep_tokens=keep_tokens,
        recovery_tokens=recovery_tokens,
        purpose=purpose,
        encoding=encoding,
    )

    def zaxy_compaction(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        update = step.run(state.get("messages") or [], config)
        return {"messages": update} if update is not None else {}

    return zaxy_compaction


def feedback_node(
    fabric: MemoryFabric,
    *,
    signal: str = "used",
    scope: Sequence[str] = (),
    session: str | None = None,
    session_prefix: str = DEFAULT_SESSION_PREFIX,
) -> Node:
    """After the model: every ``eventloom://`` citation in this turn's answers that memory offered (the checkout
    in ``memory_context``, a recovery packet, memory_query / memory_checkout results) and that lies in scope
    becomes ``signal`` feedback (``memory.reinforced`` for ``used``), once per message and citation."""
    step = FeedbackStep(fabric, _scope(session, scope, session_prefix), signal=signal)

    def zaxy_feedback(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        step.run(state.get("messages") or [], config, state.get(STATE_KEY))
        return {}

    return zaxy_feedback
