"""Fabric operations for causal memory: walking causal edges and recording outcome explanations.

Why a module of its own: causal reads walk the catalog's proposed causal edges (:mod:`zaxy_agents.causal`), and an
explanation is one ``outcome.explained`` event whose producer proposes the edge; neither touches consolidation or
procedures (:mod:`.cognitive_ops`), which keeps the shared evidence checks (``evidence_resolves``,
``resolve_source``) this service uses. Nothing here makes memory authoritative: edges stay ``proposed``. See
docs/cognitive.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zaxy_agents.causal.contracts import OUTCOME_EXPLAINED_EVENT
from zaxy_agents.causal.explanations import endpoint
from zaxy_agents.causal.taxonomy import CAUSAL_RELATIONS, check_relation
from zaxy_agents.causal.traversal import MAX_DEPTH, Direction, walk
from zaxy_agents.errors import InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.models import Event
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.instants import parse_instant
from zaxy_agents.projection.model import entity_key

from .cognitive_ops import _check_range
from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from .cognitive_ops import CognitiveService
    from .log_ops import LogService
    from .projection_ops import ProjectionService


class CausalService(FabricService):
    """Service: causal successors and predecessors, outcome explanations."""

    def __init__(
        self, core: FabricCore, events: LogService, projection: ProjectionService, cognitive: CognitiveService
    ) -> None:
        """``cognitive``: the shared evidence checks (citations that must resolve)."""
        super().__init__(core)
        self.events = events
        self.projection = projection
        self.cognitive = cognitive

    def causal_successors(
        self,
        session: str,
        entity: str,
        *,
        entity_type: str | None = None,
        relation_type: str | list[str] | None = None,
        depth: int = 2,
        as_of: str | None = None,
        include_stale: bool = False,
    ) -> dict[str, Any]:
        """What ``entity`` caused, enabled, blocked, ... (outgoing causal edges, breadth-first up to ``depth``)."""
        return self._causal_walk("successors", session, entity, entity_type, relation_type, depth, as_of, include_stale)

    def causal_predecessors(
        self,
        session: str,
        entity: str,
        *,
        entity_type: str | None = None,
        relation_type: str | list[str] | None = None,
        depth: int = 2,
        as_of: str | None = None,
        include_stale: bool = False,
    ) -> dict[str, Any]:
        """What caused, enabled, blocked, ... ``entity`` (incoming causal edges, walked in reverse)."""
        return self._causal_walk(
            "predecessors", session, entity, entity_type, relation_type, depth, as_of, include_stale
        )

    def explain_outcome(
        self,
        session: str,
        *,
        cause: dict[str, str],
        effect: dict[str, str],
        relation: str,
        confidence: float,
        evidence: str,
        explanation: str | None = None,
        actor: str = "agent",
    ) -> dict[str, Any]:
        """Record an ``outcome.explained`` event; its producer turns it into a proposed causal edge.

        ``evidence`` is the citation of the event that shows it (it must resolve). Returns both citations.
        """
        validate_session_id(session)
        check_relation(relation, field="relation")
        for field, value in (("cause", cause), ("effect", effect)):
            if endpoint(value) is None:
                raise InvalidRequestError(
                    f"{field} must be {{name, entity_type}} (name up to 500, type up to 64 characters)",
                    field=field,
                    remediation=f'Name the {field} entity, e.g. {{"name": "deploy #4", "entity_type": "command_run"}}.',
                )
        source_point, target_point = endpoint(cause), endpoint(effect)
        assert source_point is not None and target_point is not None
        if entity_key(session, source_point.entity_type, source_point.name) == entity_key(
            session, target_point.entity_type, target_point.name
        ):
            raise InvalidRequestError(
                "cause and effect are the same entity", field="effect", remediation="Name two different entities."
            )
        if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0.0 <= confidence <= 1.0:
            raise InvalidRequestError(
                "confidence must be a number in [0, 1]", field="confidence", remediation="Use e.g. 0.8."
            )
        source = self.cognitive.resolve_source(evidence, "evidence", session)
        payload = {  # the seed's shape (seed 000 task 3); evidence.session only for another session's event
            "cause": source_point.to_dict(),
            "effect": target_point.to_dict(),
            "relation_type": relation,
            "confidence": float(confidence),
            "evidence": {
                "source_event_seq": source.seq,
                "source_event_hash": source.hash,
                **({"session": source.session} if source.session != session else {}),
                **({"reason": explanation} if explanation else {}),
            },
        }
        event = self.events.append(session, OUTCOME_EXPLAINED_EVENT, payload, actor=actor)
        edge = self._produced_edge(event)
        return {
            "explanation": event.citation,
            "causal_edge": edge.citation if edge is not None else None,
            "relation_type": relation,
            "review_status": "proposed" if edge is not None else None,
            "authority_status": "non_authoritative",
        }

    # ------------------------------------------------------------------ internals
    def _causal_walk(
        self,
        direction: Direction,
        session: str,
        entity: str,
        entity_type: str | None,
        relation_type: str | list[str] | None,
        depth: int,
        as_of: str | None,
        include_stale: bool,
    ) -> dict[str, Any]:
        validate_session_id(session)
        _check_range("depth", depth, 1, MAX_DEPTH)
        as_of = parse_instant(as_of)
        relations = [relation_type] if isinstance(relation_type, str) else list(relation_type or [])
        for index, relation in enumerate(relations):
            check_relation(relation, field=f"relation_type[{index}]" if len(relations) > 1 else "relation_type")
        self.projection.project([session])
        catalog = self.projection.projector.catalog
        if entity_type is not None:
            keys = (
                [entity_key(session, entity_type, entity)]
                if catalog.has_key(entity_key(session, entity_type, entity))
                else []
            )
        else:
            keys = sorted(key for key in catalog.keys_named(entity) if key.split("\x1f", 1)[0] == session)
        if not keys:
            raise NotFoundError(
                f"no entity {entity!r}{f' of type {entity_type}' if entity_type else ''} in session {session!r}",
                field="entity_name",
                remediation="Use an entity name (and type) exactly as a checkout or query returned it.",
            )
        result = walk(
            catalog,
            keys,
            direction=direction,
            evidence_check=self.cognitive.evidence_resolves,
            relation_types=set(relations) or None,
            depth=depth,
            as_of=as_of,
            include_stale=include_stale,
        )
        return {
            "session": session,
            "entity_name": entity,
            "relation_types": relations or list(CAUSAL_RELATIONS),
            **result.to_dict(),
        }

    def _produced_edge(self, explanation: Event) -> Event | None:
        """The causal edge the producer appended right after ``explanation`` (if its evidence qualified)."""
        head = self.log.head(explanation.session)
        if head is None or head.seq <= explanation.seq:
            return None
        for event in self.log.replay(explanation.session, explanation.seq + 1, min(head.seq, explanation.seq + 32)):
            if event.type == "causal.edge.generated" and event.payload.get("source_event_seq") == explanation.seq:
                return event
        return None
