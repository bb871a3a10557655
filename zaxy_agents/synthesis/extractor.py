"""Projection of synthesis artifacts and their feedback: review material, never memory.

- ``memory.synthesis.artifact.created`` -> a ``synthesis_artifact`` entity, one ``answer_candidate`` and one
  ``ledger_row`` entity per candidate and row (named ``<artifact_id>/<id>``), a ``source_group`` entity per
  group, and the edges HAS_ANSWER_CANDIDATE, HAS_LEDGER_ROW, SUPPORTED_BY_ROW, EXCLUDES_ROW, IN_SOURCE_GROUP;
- a candidate outcome -> a new version of its ``answer_candidate`` with the outcome;
- row feedback -> a new version of its ``ledger_row`` with the feedback, and (for a row that is a graph fact of
  the same session) reinforcement (``used``/``helpful``) or audit-only feedback (``excluded``) of that fact.

None of it has searchable text, and the types are kept out of the keyword lane (a composed answer is not recalled
as memory; retrieval/entity_index.py).
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.projection.extractors.common import bounded
from zaxy_agents.projection.model import EntityDraft, EntityRef, Extraction, FeedbackSignal, RelationDraft
from zaxy_agents.projection.registry import register

from .contracts import (
    ARTIFACT_CREATED,
    ARTIFACT_ENTITY,
    CANDIDATE_ENTITY,
    EVIDENCE_EXCLUDED,
    EVIDENCE_REINFORCED,
    GROUP_ENTITY,
    ROW_ENTITY,
    SYNTHESIS_CORRECTED,
    SYNTHESIS_REJECTED,
    SYNTHESIS_USED,
    ArtifactPayload,
    ExcludedPayload,
    OutcomePayload,
    ReinforcedPayload,
)

IMPORTANCE = 0.2


def _ref(envelope: dict[str, Any]) -> dict[str, Any]:
    return {"session": envelope["session"], "seq": envelope["seq"], "hash": envelope["hash"]}


@register(ARTIFACT_CREATED)
def artifact_created(envelope: dict[str, Any]) -> Extraction:
    artifact = ArtifactPayload.model_validate(envelope["payload"])
    name = artifact.artifact_id
    top = artifact.answer_candidates[0]
    entities = [
        EntityDraft(
            name=name,
            entity_type=ARTIFACT_ENTITY,
            summary=bounded(f"[synthesis artifact] {artifact.query} -> {top.candidate_type} {top.answer_text}"),
            properties={
                "query": bounded(artifact.query, 2000),
                "question_type": artifact.question_type,
                "candidate_ids": [c.candidate_id for c in artifact.answer_candidates],
                "row_ids": [r.row_id for r in artifact.ledger_rows],
                "authority_status": artifact.authority_status,
                "artifact_event": _ref(envelope),
            },
            importance=IMPORTANCE,
        )
    ]
    relations = []
    this = EntityRef(name, ARTIFACT_ENTITY)
    for candidate in artifact.answer_candidates:
        ref = EntityRef(f"{name}/{candidate.candidate_id}", CANDIDATE_ENTITY)
        entities.append(
            EntityDraft(
                name=ref.name,
                entity_type=CANDIDATE_ENTITY,
                summary=bounded(
                    f"[answer candidate {candidate.rank}, {candidate.candidate_type}] {candidate.answer_text}"
                ),
                properties={**candidate.model_dump(), "artifact_id": name, "outcome": None},
                importance=IMPORTANCE,
            )
        )
        relations.append(RelationDraft(this, ref, "has_answer_candidate"))
        for row_id in candidate.supporting_source_ids:
            relations.append(RelationDraft(ref, EntityRef(f"{name}/{row_id}", ROW_ENTITY), "supported_by_row"))
        for row_id in candidate.excluded_source_ids:
            relations.append(RelationDraft(ref, EntityRef(f"{name}/{row_id}", ROW_ENTITY), "excludes_row"))
    for row in artifact.ledger_rows:
        ref = EntityRef(f"{name}/{row.row_id}", ROW_ENTITY)
        entities.append(
            EntityDraft(
                name=ref.name,
                entity_type=ROW_ENTITY,
                summary=bounded(f"[ledger row, {row.status}] {row.raw}: {row.label}"),
                properties={**row.model_dump(), "artifact_id": name, "feedback": None},
                importance=IMPORTANCE,
            )
        )
        relations.append(RelationDraft(this, ref, "has_ledger_row"))
        relations.append(RelationDraft(ref, EntityRef(row.source_group, GROUP_ENTITY), "in_source_group"))
    for group in artifact.source_groups:
        entities.append(
            EntityDraft(
                name=group.source_group,
                entity_type=GROUP_ENTITY,
                summary=bounded(f"[source group] {group.source_group}"),
                properties={"citations": group.citations},
                mode="reference",
                importance=IMPORTANCE,
            )
        )
    return Extraction(entities=entities, relations=relations)


@register(SYNTHESIS_USED, SYNTHESIS_REJECTED, SYNTHESIS_CORRECTED)
def candidate_outcome(envelope: dict[str, Any]) -> Extraction:
    outcome = OutcomePayload.model_validate(envelope["payload"])
    candidate = outcome.candidate
    return Extraction(entities=[_candidate_version(outcome.artifact_id, candidate, outcome.outcome, outcome, envelope)])


def _candidate_version(artifact_id: str, candidate: Any, result: str, payload: Any, envelope: dict) -> EntityDraft:
    corrected = getattr(payload, "corrected_value", None)
    return EntityDraft(
        name=f"{artifact_id}/{candidate.candidate_id}",
        entity_type=CANDIDATE_ENTITY,
        summary=bounded(
            f"[answer candidate, {result}] {candidate.answer_text}" + (f" -> {corrected}" if corrected else "")
        ),
        properties={
            "artifact_id": artifact_id,
            "candidate_id": candidate.candidate_id,
            "outcome": result,
            "corrected_value": corrected,
            "reason": payload.reason,
            "outcome_event": _ref(envelope),
            "authority_status": payload.authority_status,
        },
        importance=IMPORTANCE,
    )


@register(EVIDENCE_REINFORCED, EVIDENCE_EXCLUDED)
def row_feedback(envelope: dict[str, Any]) -> Extraction:
    model = ReinforcedPayload if envelope["type"] == EVIDENCE_REINFORCED else ExcludedPayload
    feedback = model.model_validate(envelope["payload"])
    entities = []
    signals = []
    if feedback.row is not None:
        row = feedback.row
        entities.append(
            EntityDraft(
                name=f"{feedback.artifact_id}/{row.row_id}",
                entity_type=ROW_ENTITY,
                summary=bounded(f"[ledger row, {feedback.outcome}] {row.raw}: {row.label}"),
                properties={
                    "artifact_id": feedback.artifact_id,
                    "row_id": row.row_id,
                    "feedback": feedback.outcome,
                    "reason": feedback.reason,
                    "feedback_event": _ref(envelope),
                    "authority_status": feedback.authority_status,
                },
                importance=IMPORTANCE,
            )
        )
        in_session = row.citation.startswith(f"eventloom://{envelope['session']}/")
        if row.entity is not None and in_session:
            positive = envelope["type"] == EVIDENCE_REINFORCED
            signals.append(
                FeedbackSignal(EntityRef(row.entity.name, row.entity.entity_type), feedback.outcome, 1.0, positive)
            )
    elif feedback.candidate is not None:
        entities.append(_candidate_version(feedback.artifact_id, feedback.candidate, "excluded", feedback, envelope))
    return Extraction(entities=entities, feedback=signals)
