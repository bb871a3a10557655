"""Fabric operations for synthesis artifacts and the evidence ledger (seed 003).

``record_synthesis_artifact`` persists a checkout's synthesis bundle as ``memory.synthesis.artifact.created``
(once per bundle: the id is derived from the question, candidates and rows) and, for a selected candidate, its
outcome (``memory.synthesis.used`` / ``.rejected`` / ``.corrected`` or ``memory.evidence.excluded``);
``record_synthesis_evidence`` records feedback on one ledger row (``memory.evidence.reinforced`` /
``memory.evidence.excluded``). Before anything is appended the bundle is checked: candidates must follow from
the rows and every row's cited event must still resolve and state the row's value. ``synthesis_artifact`` reads
an artifact back with its outcomes. Nothing here changes a fact. See docs/cognitive.md.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from zaxy_agents.errors import ConflictError, InvalidRequestError, NotFoundError, ZaxyError
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.projection.model import entity_key
from zaxy_agents.retrieval.event_texts import EventTexts
from zaxy_agents.synthesis.artifact import SYNTHESIS, Bundle, match_candidate, match_row, read_bundle
from zaxy_agents.synthesis.contracts import (
    ARTIFACT_CREATED,
    ARTIFACT_ENTITY,
    ARTIFACT_ID_PATTERN,
    AUTHORITY_STATUS,
    CANDIDATE_ENTITY,
    CANDIDATE_OUTCOMES,
    OUTCOME_EVENTS,
    ROW_ENTITY,
    ROW_OUTCOMES,
)
from zaxy_agents.synthesis.ledger import stated_values

from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from .log_ops import LogService
    from .projection_ops import ProjectionService


class SynthesisService(FabricService):
    """Service: record synthesis artifacts, candidate outcomes and ledger-row feedback; read an artifact back."""

    def __init__(self, core: FabricCore, events: LogService, projection: ProjectionService) -> None:
        super().__init__(core)
        self.events = events
        self.projection = projection

    def record_synthesis_artifact(
        self,
        checkout: dict[str, Any],
        candidate: str | int | dict[str, Any] | None = None,
        outcome: str | None = None,
        *,
        reason: str | None = None,
        corrected_value: str | None = None,
        session: str | None = None,
        actor: str = "agent",
    ) -> dict[str, Any]:
        """Persist ``checkout``'s answer candidates as one artifact and, when ``candidate`` is given, its
        ``outcome`` (used, rejected, corrected — with ``corrected_value`` — or excluded; ``helpful``/``accepted``
        mean used, ``irrelevant``/``wrong`` rejected). The checkout owns the session; ``session`` is only the
        default for a checkout that names none. Returns ``artifact_id``, ``citation`` (of the artifact event),
        ``created`` and ``outcome`` (``{outcome, event_type, citation, candidate}`` or ``None``)."""
        if (candidate is None) != (outcome is None):
            missing = "outcome" if outcome is None else "candidate"
            raise InvalidRequestError(
                f"a selected candidate needs an outcome and an outcome needs a candidate ({missing} is missing)",
                field=missing,
                remediation="Pass both candidate and outcome, or neither to record only the artifact.",
            )
        normalised = None
        if outcome is not None:
            normalised = CANDIDATE_OUTCOMES.get(outcome) if isinstance(outcome, str) else None
            if normalised is None:
                raise InvalidRequestError(
                    f"unknown outcome {outcome!r}",
                    field="outcome",
                    remediation=f"Use one of {', '.join(CANDIDATE_OUTCOMES)}.",
                )
        if (normalised == "corrected") != (corrected_value is not None):
            raise InvalidRequestError(
                "corrected_value goes with outcome 'corrected' (the answer you gave instead), and only with it",
                field="corrected_value",
                remediation="Pass outcome='corrected' with corrected_value, or drop corrected_value.",
            )
        _text_field(reason, "reason", 2000)
        _text_field(corrected_value, "corrected_value", 200)
        bundle, home = self._checked_bundle(checkout, session)
        selected = match_candidate(bundle, candidate) if candidate is not None else None
        artifact, created = self._artifact_event(bundle, home, actor)
        result: dict[str, Any] = {
            "artifact_id": bundle.artifact_id,
            "citation": artifact.citation,
            "seq": artifact.seq,
            "hash": artifact.hash,
            "session": home,
            "created": created,
            "query": bundle.query,
            "question_type": bundle.question_type,
            "candidate_count": len(bundle.candidates),
            "ledger_row_count": len(bundle.rows),
            "answer_candidates": bundle.candidates,
            "outcome": None,
            "authority_status": AUTHORITY_STATUS,
        }
        if selected is None or normalised is None:
            return result
        feedback = {
            "artifact_id": bundle.artifact_id,
            "artifact": {"seq": artifact.seq, "hash": artifact.hash},
            "candidate": selected,
            **({"reason": reason} if reason is not None else {}),
            "authority_status": AUTHORITY_STATUS,
        }
        if normalised == "excluded":
            feedback |= {
                "outcome": "excluded",
                "support_source_ids": selected["supporting_source_ids"],
                "quality": bundle.quality,
                "slot_plan": bundle.slot_plan,
            }
        else:
            feedback |= {"outcome": normalised}
            if corrected_value is not None:
                feedback["corrected_value"] = corrected_value
        event = self.events.append(home, OUTCOME_EVENTS[normalised], feedback, actor=actor)
        result["outcome"] = {
            "outcome": normalised,
            "event_type": event.type,
            "citation": event.citation,
            "candidate": selected,
        }
        return result

    def record_synthesis_evidence(
        self,
        checkout: dict[str, Any],
        row: str | dict[str, Any],
        outcome: str,
        *,
        candidate: str | int | dict[str, Any] | None = None,
        reason: str | None = None,
        session: str | None = None,
        actor: str = "agent",
    ) -> dict[str, Any]:
        """Feedback on one ledger row of ``checkout``: ``used``/``helpful`` -> ``memory.evidence.reinforced``,
        ``excluded`` -> ``memory.evidence.excluded`` (a row that is a graph fact is reinforced, or gets audit-only
        feedback). The checkout's artifact is recorded first when it is not yet (same id as
        :meth:`record_synthesis_artifact`)."""
        event_type = ROW_OUTCOMES.get(outcome) if isinstance(outcome, str) else None
        if event_type is None:
            raise InvalidRequestError(
                f"unknown row outcome {outcome!r}", field="outcome", remediation="Use used, helpful or excluded."
            )
        _text_field(reason, "reason", 2000)
        bundle, home = self._checked_bundle(checkout, session)
        selected_row = match_row(bundle, row)
        selected = match_candidate(bundle, candidate) if candidate is not None else None
        if (
            selected is not None
            and outcome != "excluded"
            and selected_row["row_id"] not in selected["supporting_source_ids"]
        ):
            raise ConflictError(
                f"candidate {selected['candidate_id']} does not rest on row {selected_row['row_id']}",
                field="row",
                remediation="Name a row among the candidate's supporting_source_ids, or record it as excluded.",
            )
        artifact, created = self._artifact_event(bundle, home, actor)
        payload = {
            "artifact_id": bundle.artifact_id,
            "artifact": {"seq": artifact.seq, "hash": artifact.hash},
            "row": selected_row,
            "outcome": outcome,
            **({"candidate": selected} if selected is not None else {}),
            "support_source_ids": selected["supporting_source_ids"] if selected else [selected_row["row_id"]],
            "quality": bundle.quality,
            "slot_plan": bundle.slot_plan,
            **({"reason": reason} if reason is not None else {}),
            "authority_status": AUTHORITY_STATUS,
        }
        event = self.events.append(home, event_type, payload, actor=actor)
        return {
            "artifact_id": bundle.artifact_id,
            "artifact_citation": artifact.citation,
            "artifact_created": created,
            "event_type": event.type,
            "citation": event.citation,
            "session": home,
            "row_id": selected_row["row_id"],
            "fact_id": selected_row["fact_id"],
            "source_group": selected_row["source_group"],
            "row_citation": selected_row["citation"],
            "outcome": outcome,
            "candidate_id": selected["candidate_id"] if selected else None,
            "authority_status": AUTHORITY_STATUS,
        }

    def synthesis_artifact(self, session: str, artifact_id: str) -> dict[str, Any]:
        """An artifact as recorded (its event's payload and citation) with the outcomes of its candidates and the
        feedback on its rows, oldest first (for proof traces: ``coordination_proof_trace``)."""
        validate_session_id(session)
        _artifact_id(artifact_id)
        self.projection.project([session])
        catalog = self.projection.projector.catalog
        history = catalog.history(entity_key(session, ARTIFACT_ENTITY, artifact_id))
        if not history:
            raise NotFoundError(
                f"no synthesis artifact {artifact_id!r} in session {session!r}",
                field="artifact_id",
                remediation="Record it with memory_synthesis_artifact (the checkout's session owns it).",
            )
        event = self.log.get(session, history[0].source_event_seq)
        outcomes = []
        for candidate_id in event.payload["answer_candidates"]:
            key = entity_key(session, CANDIDATE_ENTITY, f"{artifact_id}/{candidate_id['candidate_id']}")
            outcomes += [_feedback(v, "outcome", "candidate_id") for v in catalog.history(key)[1:]]
        evidence = []
        for row in event.payload["ledger_rows"]:
            key = entity_key(session, ROW_ENTITY, f"{artifact_id}/{row['row_id']}")
            evidence += [_feedback(v, "feedback", "row_id") for v in catalog.history(key)[1:]]
        return {
            **event.payload,
            "session": session,
            "citation": event.citation,
            "seq": event.seq,
            "hash": event.hash,
            "outcomes": sorted(outcomes, key=lambda item: item["seq"]),
            "evidence": sorted(evidence, key=lambda item: item["seq"]),
        }

    def _checked_bundle(self, checkout: dict[str, Any], session: str | None) -> tuple[Bundle, str]:
        """The checkout's bundle, its session, and every row checked against the event it cites."""
        bundle = read_bundle(checkout)
        home = bundle.session or session
        if home is None:
            raise InvalidRequestError(
                "the checkout names no session", field="checkout.session", remediation="Pass the checkout unchanged."
            )
        validate_session_id(home, field="checkout.session")
        keys = []
        for index, row in enumerate(bundle.rows):
            field = f"{SYNTHESIS}.ledger_rows[{index}].citation"
            citation = parse_citation(row["citation"], field=field)
            try:
                self.log.resolve(citation)
            except ZaxyError:
                raise ConflictError(
                    f"ledger row {row['row_id']} cites {row['citation']}, which does not resolve",
                    field=field,
                    remediation="Run memory_checkout again: the cited event is gone or was changed.",
                ) from None
            keys.append((citation.session, citation.seq))
        texts = EventTexts(self.log, self.features.extractors.extract).read(keys)
        for index, (row, key) in enumerate(zip(bundle.rows, keys, strict=True)):
            stated = {(raw, value) for raw, value, _, _ in stated_values(texts.get(key, ("", "", ""))[2])}
            if (row["raw"], row["value"]) not in stated:
                raise ConflictError(
                    f"ledger row {row['row_id']}: the event it cites does not state {row['raw']!r} = {row['value']}",
                    field=f"{SYNTHESIS}.ledger_rows[{index}].value",
                    remediation="Pass the checkout unchanged (record a different answer as outcome 'corrected').",
                )
        return bundle, home

    def _artifact_event(self, bundle: Bundle, session: str, actor: str) -> tuple[Any, bool]:
        """The artifact's ``memory.synthesis.artifact.created`` event, appended unless it exists."""
        self.projection.project([session])
        history = self.projection.projector.catalog.history(entity_key(session, ARTIFACT_ENTITY, bundle.artifact_id))
        if history:
            return self.log.get(session, history[0].source_event_seq), False
        return self.events.append(session, ARTIFACT_CREATED, bundle.payload(), actor=actor), True


def _feedback(version: Any, kind: str, id_field: str) -> dict[str, Any]:
    data = json.loads(version.properties_json or "{}")
    return {
        id_field: data.get(id_field),
        kind: data.get(kind),
        "event_type": version.source_event_type,
        "reason": data.get("reason"),
        **({"corrected_value": data["corrected_value"]} if data.get("corrected_value") else {}),
        "seq": version.source_event_seq,
        "citation": version.citation,
    }


def _text_field(value: Any, field: str, limit: int) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip() or len(value) > limit):
        raise InvalidRequestError(
            f"{field} must be a non-empty string of at most {limit} characters", field=field, remediation="Fix it."
        )


def _artifact_id(value: Any) -> None:
    if not isinstance(value, str) or re.fullmatch(ARTIFACT_ID_PATTERN, value) is None:
        raise InvalidRequestError(
            f"not a synthesis artifact id: {value!r}",
            field="artifact_id",
            remediation="Use the artifact_id (syn_ + 24 hex) memory_synthesis_artifact returned.",
        )
