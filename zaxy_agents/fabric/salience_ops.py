"""Fabric operations for the salience ledger (seed 004 2.2): pin, unpin, restore, and the encoding gate.

Each writes an ordinary event (``memory.pinned`` / ``memory.unpinned`` / ``memory.restored``, or the caller's
event with an ``encoding_gate`` tag), so salience, pins and tags are rebuilt by replay; none changes ranking
unless the retrieval profile uses them (docs/retrieval.md).
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

from zaxy_agents.errors import InvalidRequestError, NotFoundError, ZaxyError
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.instants import format_instant
from zaxy_agents.projection.model import entity_key
from zaxy_agents.salience.contracts import PINNED_EVENT, PROMOTED_EVENT, RESTORED_EVENT, UNPINNED_EVENT
from zaxy_agents.salience.gate import Candidate, classify

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from zaxy_agents.eventloom.models import Event

    from .belief_ops import BeliefService
    from .log_ops import LogService
    from .projection_ops import ProjectionService
    from .retrieval_ops import RetrievalService

GATE_NEIGHBOURS = 5  # existing memories a new one is compared with
METADATA_FIELDS = frozenset({"encoding_gate", "cues"})  # where an event was written, not what it says
GATE_FIELD = "encoding_gate"
GATE_ACTOR = "zaxy-gate"


class SalienceService(FabricService):
    """Service: pinning, restoring and the write-time encoding gate of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def __init__(
        self,
        core: FabricCore,
        events: LogService,
        projection: ProjectionService,
        retrieval: RetrievalService,
        beliefs: BeliefService,
    ) -> None:
        super().__init__(core)
        self.events = events
        self.projection = projection
        self.retrieval = retrieval
        self.beliefs = beliefs

    def pin(
        self,
        session: str,
        entity_name: str,
        entity_type: str = "fact",
        *,
        reason: str | None = None,
        actor: str = "agent",
    ) -> Event:
        """Exempt a memory from the attenuation floor (until :meth:`unpin`)."""
        return self._mark(PINNED_EVENT, session, entity_name, entity_type, reason, actor, current=True)

    def unpin(self, session: str, entity_name: str, entity_type: str = "fact", *, actor: str = "agent") -> Event:
        return self._mark(UNPINNED_EVENT, session, entity_name, entity_type, None, actor, current=True)

    def restore(
        self,
        session: str,
        entity_name: str,
        entity_type: str = "fact",
        *,
        reason: str | None = None,
        actor: str = "agent",
    ) -> Event:
        """Strong reinforcement that lifts an attenuated memory back above the floor (its recency restarts)."""
        return self._mark(RESTORED_EVENT, session, entity_name, entity_type, reason, actor, current=True)

    def reinforce_promotion(self, promotion: Event, evidence: list[dict[str, Any]]) -> list[Event]:
        """Seed 004's strong reinforcement for a promoted Coordinate finding: one ``memory.promoted`` per session
        its evidence lives in, naming the memories (entities) the cited events asserted. Coordinate calls this
        (through the port the fabric injects) only after an accepted promotion was written; evidence that asserted
        nothing reinforces nothing."""
        targets: dict[str, list[dict[str, str]]] = {}
        sessions = sorted({ref["session"] for ref in evidence if isinstance(ref.get("session"), str)})
        if sessions:
            self.projection.project(sessions)
        catalog = self.projection.projector.catalog
        for ref in evidence:
            session, seq = ref.get("session"), ref.get("seq")
            if not isinstance(session, str) or not isinstance(seq, int):
                continue
            memories = targets.setdefault(session, [])
            for version in catalog.event_versions(session, seq):
                target = {"entity_name": version.name, "entity_type": version.entity_type}
                if target not in memories and len(version.name) <= 500 and len(version.entity_type) <= 64:
                    memories.append(target)  # (a name MemoryTarget cannot carry is left out, not truncated)
        finding_id = str(promotion.payload.get("finding_id", ""))
        return [
            self.events.append(
                session,
                PROMOTED_EVENT,
                {
                    "memories": memories[:200],
                    "mission_id": str(promotion.payload.get("mission_id", "")),
                    "finding_id": finding_id,
                    "promotion_ref": promotion.citation,
                },
                actor=promotion.actor,
            )
            for session, memories in targets.items()
            if memories
        ]

    def encoding_gate(self, session: str, event_type: str, payload: dict[str, Any]) -> dict[str, Any]:
        """What the gate would tag this event (``{tag, similarity, against?}``) without appending it."""
        validate_session_id(session)
        if not isinstance(payload, dict):
            raise InvalidRequestError("payload must be a JSON object", field="payload", remediation="Pass a dict.")
        envelope = {
            "seq": 0,
            "timestamp": format_instant(_dt.datetime.now(_dt.UTC)),
            "type": event_type,
            "actor": "gate",
            "session": session,
            "payload": payload,
            "prev_hash": "",
            "hash": "",
            "id": "",
        }
        try:
            extraction = self.features.extractors.extract(envelope)
        except Exception:  # an event the projection cannot read is news to it (the append records the failure)
            return classify(event_type, "", [])
        text = extraction.searchable_text
        asserted = next((e for e in extraction.entities if e.mode == "assert"), None)
        name, entity_type = (asserted.name, asserted.entity_type) if asserted is not None else (None, None)
        if not text.strip() or not self.log.has_session(session):
            return classify(event_type, text, [], name, entity_type)
        probe = text[:4000]
        hits = self.retrieval.query(probe, sessions=[session], k=GATE_NEIGHBOURS, retrieval_profile="plain").hits
        seen = {hit.citation for hit in hits}  # plus copies from the exact-source lane (it holds the whole text)
        copies = self.retrieval.verbatim(probe, sessions=[session], k=GATE_NEIGHBOURS).hits
        hits += [h for h in copies if h.citation not in seen and h.score_explanation.get("exact_match") == "phrase"]
        candidates = [
            Candidate(
                hit.citation,
                hit.event_type,
                hit.text,
                hit.status,
                hit.entity["name"] if hit.entity else None,
                hit.entity["entity_type"] if hit.entity else None,
            )
            for hit in hits
        ]
        tag = classify(event_type, text, candidates, name, entity_type)
        if "reinforces" in tag and not self._same_payload(tag["against"], payload):
            del tag["reinforces"]  # the same words but other fields (a rationale, a validity time): not a copy
        return tag

    def _same_payload(self, citation: str, payload: dict[str, Any]) -> bool:
        """Whether the event at ``citation`` recorded ``payload`` (context metadata aside): only a true copy folds."""
        try:
            old = self.log.resolve(parse_citation(citation)).payload
        except ZaxyError:
            return False
        return _content(old) == _content(payload)

    def append_gated(
        self, session: str, type: str, payload: dict[str, Any] | None = None, *, actor: str = "agent"
    ) -> Event:
        """Append through the encoding gate: the event is always appended, tagged ``encoding_gate`` =
        ``{tag: novel | reinforcing | redundant, similarity, against?}`` in its payload (never dropped)."""
        body = dict(payload or {})
        if GATE_FIELD in body:
            raise InvalidRequestError(
                f"payload.{GATE_FIELD} is written by the gate",
                field=f"payload.{GATE_FIELD}",
                remediation="Leave it out.",
            )
        body[GATE_FIELD] = tag = self.encoding_gate(session, type, body)
        event = self.events.append(session, type, body, actor=actor)
        if "interferes_with" in tag:  # proactive interference: a review-gated proposal citing both
            old = self.log.resolve(tag["interferes_with"])
            self.beliefs.propose_belief_update(
                session,
                claim=event.payload.get("fact") or tag["interferes_with"],
                rationale=f"a new fact interferes with a current one: {tag['interferes_with']} vs {event.citation}",
                confidence=0.5,
                citations=[old.citation, event.citation],
                phase="execution",
                actor=GATE_ACTOR,
            )
        return event

    def _mark(
        self,
        event_type: str,
        session: str,
        name: str,
        entity_type: str,
        reason: str | None,
        actor: str,
        *,
        current: bool,
    ) -> Event:
        validate_session_id(session)
        self.projection.project([session])
        catalog = self.projection.projector.catalog
        key = entity_key(session, entity_type, name)
        if (catalog.current(key) if current else catalog.latest(key)) is None:
            raise NotFoundError(
                f"no current {entity_type} {name!r} in session {session!r}",
                field="entity_name",
                remediation="Use the entity name and type a checkout or query showed.",
            )
        payload: dict[str, Any] = {"entity_name": name, "entity_type": entity_type}
        if reason:
            payload["reason"] = reason
        return self.events.append(session, event_type, payload, actor=actor)


def _content(payload: Any) -> Any:
    return {k: v for k, v in payload.items() if k not in METADATA_FIELDS} if isinstance(payload, dict) else payload
