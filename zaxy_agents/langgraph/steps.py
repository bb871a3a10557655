"""The four memory steps behind both the LangGraph nodes and ``ZaxyMemoryMiddleware``.

Each step takes the conversation and the run's config and returns a state update (or nothing); the nodes and
the middleware only adapt them to their calling conventions, so both styles behave identically.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from zaxy_agents.checkout.tokens import DEFAULT_ENCODING
from zaxy_agents.checkpoints.transcript import MEMORY_SOURCE, is_memory_derived, message_id
from zaxy_agents.conversation.citations import find_citations
from zaxy_agents.errors import InvalidRequestError, ZaxyError
from zaxy_agents.eventloom.models import Event
from zaxy_agents.fabric import MemoryFabric

from .compaction import MessageTokenCounter, plan_compaction
from .context import MemoryContext, latest_user_message, memory_context
from .scoping import MemoryScope, ResolvedScope

logger = logging.getLogger(__name__)

MAX_CHECKOUT_QUERY_CHARS = 2000
RECOVERY_ID_PREFIX = "zaxy-memory-recovery-"


def _configurable(config: Any) -> dict[str, Any]:
    return dict((config or {}).get("configurable") or {})


class CheckoutStep:
    """A budgeted Memory Checkout for the current user request, once per user turn."""

    def __init__(
        self,
        fabric: MemoryFabric,
        scope: MemoryScope,
        *,
        max_tokens: int = 1200,
        purpose: str | dict[str, Any] | None = None,
        encoding: str = DEFAULT_ENCODING,
        record: bool = True,
        every_call: bool = False,
        retrieval_profile: str | None = None,
        cues: Mapping[str, str] | None = None,
    ) -> None:
        """``cues``: the agent's context (mission or task, workspace or repo, tool, phase), checked here so a bad
        one fails when the graph is built, not on every turn."""
        self.fabric, self.scope = fabric, scope
        self.max_tokens, self.purpose, self.encoding = max_tokens, purpose, encoding
        self.record, self.every_call = record, every_call
        self.retrieval_profile = retrieval_profile
        self.cues = fabric.checked_cues(dict(cues) if isinstance(cues, Mapping) else cues)

    def run(
        self, messages: Sequence[BaseMessage], config: Any, previous: MemoryContext | None = None
    ) -> MemoryContext | None:
        """A new context, or ``None`` when ``previous`` was made for the same user message."""
        request = latest_user_message(messages)
        request_id = request.id if request is not None else None
        if previous and not self.every_call and request_id is not None and previous.get("message_id") == request_id:
            return None
        resolved = self.scope.resolve(self.fabric, config)
        query = " ".join(str(request.text).split())[:MAX_CHECKOUT_QUERY_CHARS] if request is not None else ""
        try:
            if query:
                packet = self.fabric.checkout(
                    query,
                    session=resolved.session,
                    scope=resolved.recall,
                    max_tokens=self.max_tokens,
                    purpose=self.purpose,
                    encoding=self.encoding,
                    retrieval_profile=self.retrieval_profile,
                    cues=self.cues,
                )
            else:
                packet = self.fabric.bootstrap(
                    resolved.session,
                    scope=resolved.recall,
                    max_tokens=self.max_tokens,
                    purpose=self.purpose,
                    encoding=self.encoding,
                )
            if self.record:
                self.fabric.record_checkout(resolved.session, packet, message_id=request_id)
        except ZaxyError as exc:  # memory never breaks the agent; the failure is visible in state and logs
            logger.warning("memory checkout failed: %s", exc)
            return MemoryContext(
                prompt="",
                query=query,
                message_id=request_id,
                session=resolved.session,
                answerability="ask_user",
                confidence=0.0,
                citations=[],
                required_action=None,
                warnings=[f"checkout failed: {exc.code}: {exc.message}"],
            )
        return memory_context(packet, session=resolved.session, message_id=request_id)


class CaptureStep:
    """Record turns and tool results not yet in the thread's session (idempotent by message / tool call id)."""

    def __init__(self, fabric: MemoryFabric, scope: MemoryScope, *, redact: Any = None) -> None:
        self.fabric, self.scope, self.redact = fabric, scope, redact

    def run(self, messages: Sequence[BaseMessage], config: Any, resolved: ResolvedScope | None = None) -> list[Event]:
        resolved = resolved or self.scope.resolve(self.fabric, config)
        configurable = _configurable(config)
        return self.fabric.capture_messages(
            resolved.session,
            messages,
            thread_id=resolved.thread_id or "",
            # An attached ZaxyCheckpointer records each message when its step is saved: leaving turns to it
            # means the two never race to write the same message id.
            turns=not resolved.checkpointer_captures,
            checkpoint_ns=str(configurable.get("checkpoint_ns") or ""),
            checkpoint_id=str(configurable.get("checkpoint_id") or ""),
            redact=self.redact,
        )


class CompactionStep:
    """Above ``max_tokens``: record, trim to ``keep_tokens`` and inject a cited recovery packet."""

    def __init__(
        self,
        fabric: MemoryFabric,
        scope: MemoryScope,
        capture: CaptureStep,
        *,
        max_tokens: int,
        keep_tokens: int | None = None,
        recovery_tokens: int = 1500,
        purpose: str | dict[str, Any] | None = None,
        encoding: str = DEFAULT_ENCODING,
    ) -> None:
        keep = keep_tokens if keep_tokens is not None else max_tokens // 2
        if keep <= 0 or recovery_tokens < 200 or keep + recovery_tokens >= max_tokens:
            raise InvalidRequestError(
                f"compaction budgets do not fit: keep {keep} + recovery {recovery_tokens} must stay below "
                f"max_tokens {max_tokens} (and recovery_tokens >= 200)",
                field="max_tokens",
                remediation="Raise max_tokens or lower keep_tokens / recovery_tokens; otherwise every model call "
                "would compact again.",
            )
        self.fabric, self.scope, self.capture = fabric, scope, capture
        self.max_tokens, self.keep_tokens, self.recovery_tokens = max_tokens, keep, recovery_tokens
        self.purpose, self.encoding = purpose, encoding
        self.count = MessageTokenCounter(encoding)

    def run(self, messages: Sequence[BaseMessage], config: Any) -> list[BaseMessage] | None:
        """The ``messages`` update (remove all, then pinned + recovery + kept), or ``None`` under budget."""
        tokens_before = self.count(messages)
        if tokens_before <= self.max_tokens:
            return None
        plan = plan_compaction(messages, self.keep_tokens, self.count)
        if not plan.removed:
            return None
        resolved = self.scope.resolve(self.fabric, config)
        # The log must hold what is about to leave the context before the recovery packet is built from it.
        self.capture.run(messages, config, resolved)
        request = latest_user_message(messages)
        note = (
            f"To stay within {self.max_tokens} tokens, {len(plan.removed)} earlier messages "
            f"({plan.removed_tokens} tokens) were removed from this conversation; they remain in the Eventloom."
        )
        recovery = self.fabric.compaction_recovery(
            resolved.session,
            str(request.text) if request is not None else "",
            scope=resolved.recall,
            max_tokens=self.recovery_tokens,
            purpose=self.purpose,
            encoding=self.encoding,
            note=note,
            exclude_message_ids={message_id(m, i) for i, m in enumerate(plan.kept)},
        )
        compaction_id = plan.compaction_id
        injected: list[BaseMessage] = []
        if recovery.text:
            injected.append(
                HumanMessage(
                    content=recovery.text,
                    id=RECOVERY_ID_PREFIX + compaction_id,
                    additional_kwargs={"lc_source": MEMORY_SOURCE, "zaxy_kind": "recovery"},
                )
            )
        after = [*plan.pinned, *injected, *plan.kept]
        self.fabric.record_compaction(
            resolved.session,
            compaction_id,
            {
                "thread_id": resolved.thread_id,
                "trigger": "token_budget",
                "summary": f"{note} Recovery packet: {len(recovery.citations)} cited items.",
                "max_tokens": self.max_tokens,
                "keep_tokens": self.keep_tokens,
                "encoding": self.encoding,
                "tokens_before": tokens_before,
                "tokens_after": self.count(after),
                "messages_before": len(messages),
                "messages_removed": len(plan.removed),
                "removed_message_ids": [message_id(m, i) for i, m in enumerate(plan.removed)][:200],
                "recovery": recovery.summary(),
            },
        )
        return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *after]


class FeedbackStep:
    """Citations in this turn's answers become ``memory_feedback`` for the memory they name — only citations
    memory offered (the checkout in ``memory_context``, a recovery packet, results of recalling tools such as
    memory_query), so an answer quoting what the agent just wrote, or a made-up citation, reinforces nothing."""

    def __init__(self, fabric: MemoryFabric, scope: MemoryScope, *, signal: str = "used") -> None:
        self.fabric, self.scope, self.signal = fabric, scope, signal

    def run(self, messages: Sequence[BaseMessage], config: Any, context: MemoryContext | None = None) -> list[Event]:
        answers: list[tuple[int, AIMessage, list[str]]] = []  # this turn's answers that cite anything, newest first
        for position in range(len(messages) - 1, -1, -1):
            message = messages[position]
            if isinstance(message, HumanMessage) and not is_memory_derived(message):
                break  # only this turn's answers
            if isinstance(message, AIMessage) and (cited := find_citations(str(message.text))):
                answers.append((position, message, cited))
        if not answers:  # most answers cite nothing: no scope to resolve, no conversation to scan
            return []
        resolved = self.scope.resolve(self.fabric, config)
        offered = set((context or {}).get("citations") or [])
        for message in messages:
            if _recalled(message):
                offered.update(find_citations(str(message.text)))
        events: list[Event] = []
        for position, message, cited in answers:
            citations = [c for c in cited if c in offered]
            if citations:
                events += self.fabric.feedback_from_citations(
                    citations, message_id=message_id(message, position), scope=resolved.recall, signal=self.signal
                )
        return events


def _recalled(message: BaseMessage) -> bool:
    """Memory shown to the model: a recovery packet, or the result of a tool that recalls memory."""
    if isinstance(message, HumanMessage):
        return is_memory_derived(message)
    artifact = getattr(message, "artifact", None)
    return is_memory_derived(message) and isinstance(artifact, dict) and bool(artifact.get("recall"))
