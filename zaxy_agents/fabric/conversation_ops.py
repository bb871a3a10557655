"""Fabric operations for agent conversations: capture messages, record checkouts and compactions, build the
recovery packet, and turn an answer's citations into feedback.

The LangGraph nodes, middleware and tools call these. Every write is idempotent through a per-session
:class:`~zaxy_agents.conversation.ConversationLedger` read from the log (same message id, tool call id,
compaction id or (message, citation) pair -> one event), so a step that runs again records nothing twice.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from zaxy_agents.checkout.recovery import RecoveryPacket, build_recovery_packet
from zaxy_agents.checkout.tokens import DEFAULT_ENCODING, get_encoding
from zaxy_agents.conversation.events import COMPACTED, TRANSCRIPT_TURN
from zaxy_agents.conversation.items import ItemHistory
from zaxy_agents.conversation.ledger import ConversationLedger
from zaxy_agents.errors import ZaxyError
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.eventloom.models import Event
from zaxy_agents.eventloom.validation import validate_session_id

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from zaxy_agents.checkout.models import CheckoutPacket
    from zaxy_agents.conversation.messages import Redactor
    from zaxy_agents.eventloom.protocol import EventLog
    from zaxy_agents.projection.records import EntityVersion

    from .checkout_ops import CheckoutService
    from .erase_ops import EraseService
    from .log_ops import LogService
    from .projection_ops import ProjectionService
    from .workingset_ops import WorkingSetService

CHECKOUT_RECORDED = "metacognition.checkout"  # bookkeeping: the projection keeps metacognition.* out of recall
MAX_LEDGERS = 256
MAX_RECORDED_QUERY_CHARS = 500
# Entities an event only refers to (a fact's topic, a turn's speaker): feedback goes to what the event asserts.
REFERENCE_ENTITY_TYPES = frozenset({"topic", "participant", "tool", "document", "session"})


class ConversationService(FabricService):
    """Service: the agent-conversation part of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def __init__(
        self,
        core: FabricCore,
        events: LogService,
        projection: ProjectionService,
        checkouts: CheckoutService,
        working_sets: WorkingSetService,
        erasure: EraseService,
    ) -> None:
        """``erasure``: the per-session ledgers (ids read from the log) forget a session an erasure scrubbed, so
        this process answers "already recorded?" as a fresh one would."""
        super().__init__(core)
        self.events = events
        self.projection = projection
        self.checkouts = checkouts
        self.working_sets = working_sets
        self._conversation_lock = threading.RLock()
        self._ledgers: OrderedDict[str, ConversationLedger] = OrderedDict()  # LRU, at most MAX_LEDGERS
        self._group_commit: EventLog | None = None
        erasure.on_erase(self._forget_ledger)

    # ------------------------------------------------------------------ ledgers
    def _forget_ledger(self, session: str) -> None:
        with self._conversation_lock:
            self._ledgers.pop(session, None)

    def _ledger(self, session: str) -> ConversationLedger:
        """The caught-up ledger of ``session`` (caller holds ``_conversation_lock``); LRU-bounded."""
        ledgers = self._ledgers
        ledger = ledgers.get(session)
        if ledger is None:
            ledger = ledgers[session] = ConversationLedger(self.log, session)
            while len(ledgers) > MAX_LEDGERS:
                ledgers.popitem(last=False)
        else:
            ledgers.move_to_end(session)
        return ledger.catch_up()

    def item_history(self, session: str, *, framework: str, describe: Any, actor: str | None = None) -> ItemHistory:
        """A conversation kept as a framework's exact items (see :mod:`zaxy_agents.conversation.items`): what
        the OpenAI Agents SDK session and the Pydantic AI message history adapters read and write."""
        validate_session_id(session)
        return ItemHistory(self.log, session, framework, describe, actor or framework)

    # ------------------------------------------------------------------ capture
    def capture_messages(
        self,
        session: str,
        messages: Sequence[Any],
        *,
        thread_id: str,
        turns: bool = True,
        tool_calls: bool = True,
        checkpoint_ns: str = "",
        checkpoint_id: str = "",
        redact: Redactor | None = None,
        actor: str = "langgraph",
    ) -> list[Event]:
        """Record LangChain ``messages`` not yet in ``session``: ``transcript.turn`` per message (same payload and
        ``message_id`` as ZaxyCheckpointer) and ``tool.call.completed`` per tool result. One atomic append."""
        from zaxy_agents.conversation.messages import tool_call_drafts, tool_results, turn_drafts  # lazy

        validate_session_id(session)
        if not turns and not (tool_calls and any(True for _ in tool_results(messages))):
            return []  # nothing this call could record: the session's ledger is not even read
        with self._conversation_lock:
            ledger = self._ledger(session)
            drafts: list[dict[str, Any]] = []
            if turns:
                drafts += turn_drafts(
                    messages,
                    ledger.message_ids,
                    thread_id=thread_id,
                    checkpoint_ns=checkpoint_ns,
                    checkpoint_id=checkpoint_id,
                    actor=actor,
                    redact=redact,
                )
            if tool_calls:
                drafts += tool_call_drafts(
                    messages, ledger.tool_call_ids, thread_id=thread_id, actor=actor, redact=redact
                )
            if not drafts:
                return []
            events = self.events.append_many(session, drafts)
            ledger.absorb(events)
            return events

    # ------------------------------------------------------------------ checkouts and compactions
    def record_checkout(
        self, session: str, packet: CheckoutPacket, *, message_id: str | None = None, actor: str = "langgraph"
    ) -> Event:
        """Audit what memory an agent was shown (``metacognition.checkout``; kept out of recall)."""
        payload: dict[str, Any] = {
            "query": packet.query[:MAX_RECORDED_QUERY_CHARS],
            "answerability": packet.quality.answerability,
            "confidence": packet.quality.confidence,
            "citations": sorted({item.citation for item in packet.provenance}),
            "scope": packet.scope,
            "purpose": packet.purpose.name,
            "budget_requested": packet.diagnostics.budget_requested,
            "budget_used": packet.diagnostics.budget_used,
            "stable_prefix_sha256": packet.diagnostics.stable_prefix_sha256,
        }
        if packet.quality.required_action is not None:
            payload["required_action"] = packet.quality.required_action.tool
        if message_id:
            payload["message_id"] = message_id
        # An audit record, not state the turn depends on: written at once (safe if the process dies) and made
        # durable by the log's group commit, so the model call never waits for its fsync.
        return self._group_commit_log().append(session, CHECKOUT_RECORDED, payload, actor=actor)

    def _group_commit_log(self) -> EventLog:
        if self._group_commit is None:
            self._group_commit = self.backend.group_commit_log(self.log)
        return self._group_commit

    def compaction_recovery(
        self,
        session: str,
        query: str,
        *,
        scope: list[str] | None = None,
        max_tokens: int = 1500,
        purpose: str | dict[str, Any] | None = None,
        encoding: str = DEFAULT_ENCODING,
        note: str = "",
        exclude_message_ids: Collection[str] = (),
    ) -> RecoveryPacket:
        """The cited recovery packet for ``session`` as the log holds it now (call it before removing messages).

        Combines the log-derived working set (open tasks, decisions, unknowns, facts, files, commands, prompts)
        with a Memory Checkout for ``query`` (the current task) over ``scope``; packed under ``max_tokens``.
        Turns of ``exclude_message_ids`` (the messages the conversation keeps) are not repeated in it.
        """
        validate_session_id(session)
        working = self.working_sets.working_set(session) if self.log.has_session(session) else None
        packet = self.checkouts.checkout(
            query[:4000],
            session=session,
            scope=scope,
            max_tokens=max(64, max_tokens),
            purpose=purpose,
            encoding=encoding,
        )
        turns = [item.citation for item in working.prompts] if working is not None else []
        turns += [item.citation for item in packet.evidence if item.event_type == TRANSCRIPT_TURN]
        return build_recovery_packet(
            working,
            packet,
            max_tokens=max_tokens,
            encoder=get_encoding(encoding),
            note=note,
            exclude=self._turn_citations_of(turns, set(exclude_message_ids)),
        )

    def _turn_citations_of(self, citations: Sequence[str], message_ids: set[str]) -> set[str]:
        """Those of ``citations`` whose ``transcript.turn`` carries one of ``message_ids``."""
        if not message_ids:
            return set()
        matched = set()
        for citation in set(citations):
            try:
                payload = self.events.resolve(citation).payload
            except ZaxyError:
                continue
            if payload.get("message_id") in message_ids:
                matched.add(citation)
        return matched

    def record_compaction(
        self, session: str, compaction_id: str, payload: dict[str, Any], *, actor: str = "langgraph"
    ) -> Event | None:
        """Append ``transcript.compacted`` once per ``compaction_id`` (``None`` when it is already recorded)."""
        validate_session_id(session)
        with self._conversation_lock:
            ledger = self._ledger(session)
            if compaction_id in ledger.compaction_ids:
                return None
            event = self.events.append(session, COMPACTED, {**payload, "compaction_id": compaction_id}, actor=actor)
            ledger.absorb([event])
            return event

    # ------------------------------------------------------------------ feedback from answers
    def cited_entities(self, citation: str) -> list[EntityVersion]:
        """Current entities the cited event asserts (not the ones it merely refers to); [] when none is current.

        Raises ``not_found`` when the citation does not resolve to the same content.
        """
        parsed = parse_citation(citation)
        self.events.resolve(parsed)
        self.projection.project([parsed.session])
        catalog = self.projection.projector.catalog
        versions = catalog.event_versions(parsed.session, parsed.seq)
        return [v for v in versions if catalog.is_current(v.id) and v.entity_type not in REFERENCE_ENTITY_TYPES]

    def feedback_from_citations(
        self,
        citations: Sequence[str],
        *,
        message_id: str,
        scope: Sequence[str] | None = None,
        signal: str = "used",
        actor: str = "agent",
    ) -> list[Event]:
        """Record ``signal`` for every current entity behind ``citations`` (those an answer used), once per
        (message, citation). Citations outside ``scope``, unresolvable ones and ones whose memory is no longer
        current are skipped: feedback is about memory the agent could legitimately have been shown."""
        allowed = set(scope) if scope is not None else None
        events: list[Event] = []
        for citation in citations:
            try:
                parsed = parse_citation(citation)
            except ZaxyError:
                continue
            if allowed is not None and parsed.session not in allowed:
                continue
            with self._conversation_lock:
                if not self.log.has_session(parsed.session):
                    continue
                ledger = self._ledger(parsed.session)
                if (message_id, str(parsed)) in ledger.feedback:
                    continue
                try:
                    entities = self.cited_entities(str(parsed))
                except ZaxyError:
                    continue
                for entity in entities:
                    event = self.checkouts.feedback(
                        entity.session,
                        entity.name,
                        entity.entity_type,
                        signal,
                        citation=str(parsed),
                        message_id=message_id,
                        actor=actor,
                    )
                    ledger.absorb([event])
                    events.append(event)
        return events
