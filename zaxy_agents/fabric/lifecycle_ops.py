"""Fabric operations for the agent lifecycle: finished turns, subagent clean-up, skills, checkout marks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zaxy_agents.agent_lifecycle.skills import skill_payload
from zaxy_agents.agent_lifecycle.subagents import cleaned_draft, cleanup_drafts, integrity_report, open_tasks
from zaxy_agents.agent_lifecycle.turns import changes_since, turn_drafts
from zaxy_agents.errors import InvalidRequestError, ZaxyError
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.projection.model import entity_key

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from zaxy_agents.eventloom.models import Event

    from .checkout_ops import CheckoutService
    from .log_ops import LogService
    from .projection_ops import ProjectionService


class LifecycleService(FabricService):
    """Service: the agent-lifecycle part of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def __init__(
        self, core: FabricCore, events: LogService, projection: ProjectionService, checkouts: CheckoutService
    ) -> None:
        super().__init__(core)
        self.events = events
        self.projection = projection
        self.checkouts = checkouts
        self._checkout_marks: dict[str, int] = {}  # session -> log position its last checkout reflected

    # ------------------------------------------------------------------ checkout marks
    def mark_checkout(self, session: str, seq: int) -> None:
        """Remember (in this process) the log position a checkout of ``session`` reflected."""
        self._checkout_marks[session] = seq

    def last_checkout(self, session: str) -> int | None:
        return self._checkout_marks.get(session)

    # ------------------------------------------------------------------ turns
    def after_turn(
        self,
        session: str,
        *,
        user_text: str | None = None,
        assistant_text: str | None = None,
        tools_used: list[dict[str, Any]] | None = None,
        turn_id: str | None = None,
        since_seq: int | None = None,
        role: str | None = None,
        content: str | None = None,
        assemble_tokens: int | None = None,
    ) -> dict[str, Any]:
        """Record a finished turn (``role``/``content``, user and assistant text, tools used) and report what
        changed since the last checkout of ``session`` (or since ``since_seq``; with neither, since just before
        this turn). With ``assemble_tokens`` the context for the next model call is assembled too (the turn's text
        as the question, the session's latest events replayed), as the seed's ``context_after_turn`` does."""
        validate_session_id(session)
        drafts = turn_drafts(
            user_text=user_text,
            assistant_text=assistant_text,
            tools_used=tools_used,
            turn_id=turn_id,
            role=role,
            content=content,
        )
        head = self.log.head(session)
        before = head.seq if head is not None else 0
        if since_seq is not None and not 0 <= since_seq <= before:
            raise InvalidRequestError(
                f"since_seq {since_seq} is outside the session (head {before})",
                field="since_seq",
                remediation="Pass a seq from an earlier checkout of this session, or omit it.",
            )
        marked = self.last_checkout(session)
        if since_seq is not None:
            since, basis = since_seq, "argument"
        elif marked is not None and marked <= before:
            since, basis = marked, "last_checkout"
        else:
            since, basis = before, "this_turn"
        events = self.events.append_many(session, drafts)
        self.projection.project([session])
        changes = changes_since(self.log, self.projection.projector.catalog, session, since)
        result = {"recorded": [event.citation for event in events], "since": {"seq": since, "basis": basis}, **changes}
        question = next((text for text in (content, user_text, assistant_text) if text and text.strip()), None)
        if assemble_tokens is not None and question is not None:
            assembled = self.checkouts.context_assemble(question[:4000], session=session, max_tokens=assemble_tokens)
            result["context"] = {
                key: assembled[key] for key in ("prompt", "context_counts", "citations", "budget", "assembly_policy")
            }
        return result

    # ------------------------------------------------------------------ subagents
    def subagent_cleanup(
        self,
        session: str,
        *,
        subagent_id: str,
        status: str,
        summary: str,
        subagent_session: str | None = None,
        task_ids: list[str] | None = None,
        open_items: str = "handover",
    ) -> dict[str, Any]:
        """Record a subagent's completion in ``session`` and close or hand over the tasks it left open.

        ``subagent.cleaned`` goes to the subagent's session (``session`` when it had none) with the integrity of
        that session's chain, verified first; ``subagent.completed`` to ``session``. Returns the handoff bundle.
        """
        validate_session_id(session)
        source = (
            session if subagent_session is None else validate_session_id(subagent_session, field="subagent_session")
        )
        if not subagent_id or not subagent_id.strip():
            raise InvalidRequestError("subagent_id is required", field="subagent_id", remediation="Name the subagent.")
        self.projection.project([source])
        tasks = open_tasks(self.projection.projector.catalog, source, task_ids, implicit=source != session)
        own, parent, completion = cleanup_drafts(
            parent_session=session,
            subagent_session=source,
            subagent_id=subagent_id,
            status=status,
            summary=summary,
            disposition=open_items,
            tasks=tasks,
        )
        # A subagent that never wrote has no log: its integrity is "empty", not an error.
        integrity = integrity_report(self.log.verify(source) if self.log.head(source) is not None else None)
        cleaned = cleaned_draft(
            parent_session=session, subagent_id=subagent_id, status=status, summary=summary, integrity=integrity
        )
        if source != session:
            written = self.events.append_many(source, [*own, cleaned])
            recorded = self.events.append_many(session, parent)
            cleaned_event, task_events = written[-1], written[:-1] + recorded[:-1]
        else:
            recorded = self.events.append_many(session, [*own, cleaned, *parent])
            cleaned_event = recorded[len(own)]
            task_events = recorded[: len(own)] + recorded[len(own) + 1 : -1]
        return {
            **completion,
            "event": recorded[-1].citation,
            "cleaned_event": cleaned_event.citation,
            "task_events": [event.citation for event in task_events],
            "integrity": integrity,
            "handoff": {
                "summary": summary,
                "integrity_status": integrity["status"],
                "parent_session_id": session,
                "subagent_session_id": source,
                "closed": completion["closed"],
                "handed_over": completion["handed_over"],
            },
        }

    # ------------------------------------------------------------------ skills
    def record_skill(
        self,
        session: str,
        action: str,
        skill_id: str,
        *,
        actor: str = "agent",
        **fields: Any,
    ) -> Event:
        """Append one skill lifecycle event (seed 003): proposed, validated, revised, deprecated, contradicted,
        applied or outcome_recorded. ``fields``: version, name, summary, procedure, applicability, citations,
        task, success_score, feedback, evidence, reason, failure_modes, rollback, contradiction_reason,
        supersedes_version. Every action but ``proposed`` needs a current skill; citations must resolve."""
        validate_session_id(session)
        self.projection.project([session])
        version = self.projection.projector.catalog.current(entity_key(session, "skill", str(skill_id).strip()))
        current = version.properties if version is not None else None
        for index, citation in enumerate(fields.get("citations") or []):
            try:
                self.log.resolve(citation)
            except ZaxyError as exc:
                exc.field = f"citations[{index}]"
                raise
        event_type, payload = skill_payload(action, skill_id, current, **fields)
        return self.events.append(session, event_type, payload, actor=actor)
