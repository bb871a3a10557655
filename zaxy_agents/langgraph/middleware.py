"""``ZaxyMemoryMiddleware``: memory for ``langchain.agents.create_agent`` in one line.

```python
agent = create_agent(model, tools, middleware=[ZaxyMemoryMiddleware(memory, compact_at=60_000)],
                     checkpointer=ZaxyCheckpointer(memory), store=ZaxyStore(memory))
```

Around each model call (inside the model's own step: the agent gets no extra graph steps, so no extra
checkpoints) it checks memory out for the current user request, once per user message; the packet is added to
the system message for that call only (the run keeps it under ``memory_context``: private, never a message and
never checkpointed, see :class:`ZaxyAgentState`). After the call it captures new turns and tool results and turns
the answer's citations into feedback. With ``compact_at`` it also compacts an oversized conversation before the
model (a step of its own, since it rewrites the message list; a cited recovery packet instead of
``SummarizationMiddleware``'s model-written summary: no extra model call, nothing lost that the log holds). With
``tools=True`` (default) the memory tools are registered too. The same steps back the plain nodes in :mod:`.nodes`.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, PrivateStateAttr
from langchain_core.messages import AIMessage
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import Command

from zaxy_agents.checkout.tokens import DEFAULT_ENCODING
from zaxy_agents.checkpoints import DEFAULT_SESSION_PREFIX
from zaxy_agents.fabric import MemoryFabric

from .context import STATE_KEY, MemoryContext, merge_system_message
from .scoping import MemoryScope
from .steps import CaptureStep, CheckoutStep, CompactionStep, FeedbackStep
from .tools import memory_tools


class ZaxyAgentState(AgentState):
    """Agent state plus the current checkout: private (not part of the agent's input or output schema) and
    run-scoped (``UntrackedValue``: never written to a checkpoint). The tool loop's later model calls in the same
    run reuse it; the durable record of each checkout is its ``metacognition.checkout`` event in the thread's
    session (query, citations, verdict, message id). Checkpointing the rendered packet too would store kilobytes
    per turn, twice (the step's writes and the saved checkpoint), that the log already holds."""

    memory_context: NotRequired[Annotated[MemoryContext, UntrackedValue, PrivateStateAttr]]


class ZaxyMemoryMiddleware(AgentMiddleware):
    """Checkout before the model, capture and feedback after it, compaction with a cited recovery packet.

    Args:
        fabric: the shared :class:`MemoryFabric` (use the same one for ZaxyStore / ZaxyCheckpointer).
        checkout_tokens: budget of the checkout packet added to the system message (``None``: no checkout).
        purpose: checkout purpose preset (``coding``, ``research``, ...) or policy.
        retrieval_profile: which 2.2 ranking features the checkout applies (``plain``, ``balanced``, ``full``;
            default ``balanced``, see docs/retrieval.md); the memory tools' own argument overrides it per call.
        cues: the agent's context, ``{mission|task, workspace|repo, tool, phase: str}``: memories recorded with the
            same cues rank higher under the ``full`` profile (docs/retrieval.md, "cue overlap"); also the memory
            tools' default cues. Checked when the middleware is built (a structured error names the bad cue).
        scope / session / session_prefix: scoping, see :mod:`zaxy_agents.langgraph.scoping`.
        compact_at: compact when the conversation exceeds this many tokens (tiktoken ``encoding``);
            ``None`` (default) never compacts.
        keep_tokens: newest tokens kept by a compaction (default ``compact_at // 2``).
        recovery_tokens: budget of the recovery packet injected by a compaction.
        capture: record turns and tool results after each model call.
        feedback: turn citations in answers into ``memory.reinforced`` feedback (``feedback_signal``).
        tools: register the memory tools (memory_checkout, memory_append, memory_query, memory_feedback,
            memory_invalidate) with the agent.
        every_call: check memory out before every model call, not once per user message.
        redact: extra redaction applied to captured text before the Eventloom's own.
    """

    state_schema = ZaxyAgentState

    def __init__(
        self,
        fabric: MemoryFabric,
        *,
        checkout_tokens: int | None = 1200,
        purpose: str | dict[str, Any] | None = None,
        scope: Sequence[str] = (),
        session: str | None = None,
        session_prefix: str = DEFAULT_SESSION_PREFIX,
        compact_at: int | None = None,
        keep_tokens: int | None = None,
        recovery_tokens: int = 1500,
        capture: bool = True,
        feedback: bool = True,
        feedback_signal: str = "used",
        tools: bool = True,
        every_call: bool = False,
        record_checkouts: bool = True,
        encoding: str = DEFAULT_ENCODING,
        redact: Callable[[str], str] | None = None,
        retrieval_profile: str | None = None,
        cues: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.fabric = fabric
        checked = fabric.checked_cues(dict(cues) if isinstance(cues, Mapping) else cues)
        self.memory_scope = MemoryScope(session=session, scope=tuple(scope), session_prefix=session_prefix)
        capture_step = CaptureStep(fabric, self.memory_scope, redact=redact)
        self._checkout = (
            CheckoutStep(
                fabric,
                self.memory_scope,
                max_tokens=checkout_tokens,
                purpose=purpose,
                encoding=encoding,
                record=record_checkouts,
                every_call=every_call,
                retrieval_profile=retrieval_profile,
                cues=checked,
            )
            if checkout_tokens is not None
            else None
        )
        self._capture = capture_step if capture else None
        self._feedback = FeedbackStep(fabric, self.memory_scope, signal=feedback_signal) if feedback else None
        self._compaction = (
            CompactionStep(
                fabric,
                self.memory_scope,
                capture_step,
                max_tokens=compact_at,
                keep_tokens=keep_tokens,
                recovery_tokens=recovery_tokens,
                purpose=purpose,
                encoding=encoding,
            )
            if compact_at is not None
            else None
        )
        self.tools = (
            memory_tools(fabric, scope=scope, session=session, session_prefix=session_prefix, cues=checked)
            if tools
            else []
        )

    def __new__(cls, *args: Any, compact_at: int | None = None, **kwargs: Any) -> ZaxyMemoryMiddleware:
        # Compaction rewrites the message list, which needs a node of its own before the model; without it every
        # step runs inside the model call, so the agent gets no extra graph steps (each one a checkpoint).
        if compact_at is not None and not issubclass(cls, _CompactionHook):
            cls = _with_compaction(cls)
        return super().__new__(cls)

    # ------------------------------------------------------------------ the model call
    def _checkout_for(self, request: ModelRequest) -> MemoryContext | None:
        """A new checkout for this call, or ``None`` when the state's context was made for the same user message."""
        if self._checkout is None:
            return None
        state = request.state or {}
        return self._checkout.run(list(state.get("messages", request.messages)), get_config(), state.get(STATE_KEY))

    def _after(self, request: ModelRequest, response: ModelResponse, context: MemoryContext | None) -> None:
        """Capture the turn's new messages and tool results; turn the answer's citations into feedback."""
        if self._capture is None and self._feedback is None:
            return
        config = get_config()
        messages = [*(request.state or {}).get("messages", request.messages), *response.result]
        if self._capture is not None:
            self._capture.run(messages, config)
        if self._feedback is not None:
            self._feedback.run(messages, config, context)

    @staticmethod
    def _with_memory(request: ModelRequest, context: MemoryContext | None) -> ModelRequest:
        if not context or not context.get("prompt"):
            return request
        return request.override(system_message=merge_system_message(request.system_message, context["prompt"]))

    @staticmethod
    def _respond(response: ModelResponse, context: MemoryContext | None) -> Any:
        """The model's response, plus the new context for state (``memory_context``) when one was made."""
        if context is None:
            return response
        return ExtendedModelResponse(model_response=response, command=Command(update={STATE_KEY: context}))

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> Any:
        context = self._checkout_for(request)
        current = context or (request.state or {}).get(STATE_KEY)
        response = _as_response(handler(self._with_memory(request, current)))
        self._after(request, response, current)
        return self._respond(response, context)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        context = await asyncio.to_thread(self._checkout_for, request)
        current = context or (request.state or {}).get(STATE_KEY)
        response = _as_response(await handler(self._with_memory(request, current)))
        await asyncio.to_thread(self._after, request, response, current)
        return self._respond(response, context)


class _CompactionHook:
    """Compaction before the model, as a step of its own (it rewrites the message list): mixed into
    ``ZaxyMemoryMiddleware`` (or a subclass of it) when it is built with ``compact_at``."""

    _compaction: CompactionStep | None

    def before_model(self, state: dict[str, Any], runtime: Runtime) -> dict[str, Any] | None:
        assert self._compaction is not None
        compacted = self._compaction.run(list(state["messages"]), get_config())
        return {"messages": compacted} if compacted is not None else None

    async def abefore_model(self, state: dict[str, Any], runtime: Runtime) -> dict[str, Any] | None:
        return await asyncio.to_thread(self.before_model, state, runtime)


@functools.cache
def _with_compaction(cls: type[ZaxyMemoryMiddleware]) -> type[ZaxyMemoryMiddleware]:
    """``cls`` with the compaction step (same name, so the agent's node names do not change)."""
    return type(cls.__name__, (_CompactionHook, cls), {"__module__": cls.__module__, "__qualname__": cls.__qualname__})


def _as_response(result: Any) -> ModelResponse:
    return ModelResponse(result=[result]) if isinstance(result, AIMessage) else result
