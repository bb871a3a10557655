"""Fabric reads behind the Memory Inspector's entity pages (``zaxy ui``): the identities of a session and one
entity's whole history, with what closed each version and the edges around it.

Why a module of its own: these read the projection catalog (identities, versions, edges) and look into the log
only to cite what invalidated a version; :mod:`.inspector_ops` is the log side of the inspector (sessions and
their chains, the timeline, an event's proof, the erase preview). Each read is bounded by a page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zaxy_agents.errors import InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.citations import format_citation
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.projection.model import entity_key, normalise_name

from .cognitive_ops import _check_range as _check_int
from .inspector_ops import MAX_PAGE, _text_filter, _version_row
from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from zaxy_agents.projection.records import EntityVersion, RelationRecord

    from .projection_ops import ProjectionService

_CLOSURE_PROBE = 16  # events looked at around the instant a version was closed


class InspectorEntityService(FabricService):
    """Service: the entity pages of the Memory Inspector (``zaxy ui``), see docs/ui.md."""

    def __init__(self, core: FabricCore, projection: ProjectionService) -> None:
        super().__init__(core)
        self.projection = projection

    def session_entities(
        self,
        session: str,
        *,
        entity_type: str | None = None,
        text: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> dict[str, Any]:
        """The identities of a session, most recently asserted first, each with its latest version (current or
        closed) and how many versions it has; ``types`` counts the identities per entity type."""
        validate_session_id(session)
        _check_int("limit", limit, 1, MAX_PAGE)
        _check_int("offset", offset, 0, 10_000_000)
        contains = _text_filter(text)
        self.projection.project([session])
        catalog = self.projection.projector.catalog
        keys = catalog.session_keys(
            session, entity_type=entity_type, contains=contains and normalise_name(contains), limit=limit, offset=offset
        )
        entities = []
        for key in keys:
            history = catalog.history(key)
            if not history:
                continue
            latest = history[-1]
            entities.append(
                {
                    **_version_row(latest),
                    "current": catalog.is_current(latest.id),
                    "versions": len(history),
                }
            )
        return {
            "session": session,
            "types": catalog.entity_type_counts(session),
            "entities": entities,
            "offset": offset,
            "next_offset": offset + limit if len(keys) == limit else None,
        }

    def entity_detail(self, session: str, entity_type: str, name: str) -> dict[str, Any]:
        """One entity's every version with its validity window, what closed each closed one (the superseding
        version's event, or the invalidating event and its reason) and the edges around it, all cited."""
        validate_session_id(session)
        if not isinstance(entity_type, str) or not entity_type or not isinstance(name, str) or not name:
            raise InvalidRequestError(
                "an entity is named by its type and name", field="entity", remediation="Open an entity from the list."
            )
        self.projection.project([session])
        catalog = self.projection.projector.catalog
        key = entity_key(session, entity_type, name)
        history = catalog.history(key)
        if not history:
            raise NotFoundError(
                f"no {entity_type} {name!r} in session {session!r}",
                field="entity",
                remediation="Open an entity from the session's entity list.",
            )
        versions = []
        for index, version in enumerate(history):
            row = _version_row(version)
            row["current"] = catalog.is_current(version.id)
            if version.valid_to is not None:
                following = history[index + 1] if index + 1 < len(history) else None
                row["closed_by"] = self._closure(version, following)
            versions.append(row)
        return {
            "session": session,
            "entity_type": entity_type,
            "name": history[-1].name,
            "current": versions[-1]["current"],
            "versions": versions,
            "out_edges": [self._edge_row(edge, "out") for edge in catalog.out_edges(key)],
            "in_edges": [self._edge_row(edge, "in") for edge in catalog.in_edges(key)],
        }

    def _closure(self, version: EntityVersion, following: EntityVersion | None) -> dict[str, Any]:
        """What ended ``version``'s validity: the next version (superseded) or an invalidating event."""
        if not version.invalidated and following is not None and following.valid_from == version.valid_to:
            return {
                "kind": "superseded",
                "at": version.valid_to,
                "citation": following.citation,
                "event_type": following.source_event_type,
                "by_version": following.id,
            }
        found = self._events_at(version.session, version.valid_to or "", version.name)
        closure: dict[str, Any] = {"kind": "invalidated" if version.invalidated else "closed", "at": version.valid_to}
        if found is not None:
            closure.update(
                citation=format_citation(version.session, found["seq"], found["hash"]),
                event_type=found["type"],
                reason=(found.get("payload") or {}).get("reason"),
            )
        return closure

    def _events_at(self, session: str, instant: str, name: str) -> dict[str, Any] | None:
        """The event of ``session`` stamped ``instant`` that names ``name`` (an invalidation), found by
        bisecting on timestamps (they only grow within a session) and probing a few events around."""
        head = self.log.head(session)
        if head is None or not instant:
            return None
        low, high = 1, head.seq
        while low < high:
            middle = (low + high) // 2
            if self.log.get(session, middle).timestamp < instant:
                low = middle + 1
            else:
                high = middle
        wanted = normalise_name(name)
        candidates = list(self.log.replay_envelopes(session, max(1, low - 2), min(head.seq, low + _CLOSURE_PROBE)))
        exact = [e for e in candidates if e.get("timestamp") == instant]
        for envelope in exact:
            payload = envelope.get("payload") or {}
            named = payload.get("entity") or payload.get("name") or payload.get("entity_name")
            if isinstance(named, str) and normalise_name(named) == wanted:
                return envelope
        return exact[0] if len(exact) == 1 else None

    def _edge_row(self, edge: RelationRecord, direction: str) -> dict[str, Any]:
        catalog = self.projection.projector.catalog
        other = catalog.version(edge.target_id if direction == "out" else edge.source_id)
        return {
            "relation_type": edge.relation_type,
            "direction": direction,
            "other": None if other is None else {"name": other.name, "entity_type": other.entity_type},
            "inferred": edge.inferred,
            "confidence": edge.confidence,
            "method": edge.inference_method,
            "valid_from": edge.valid_from,
            "valid_to": edge.valid_to,
            "citation": edge.citation,
            "evidence": format_citation(edge.evidence_session, edge.evidence_seq, edge.evidence_hash)
            if edge.evidence_hash
            else None,
        }
