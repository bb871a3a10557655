"""Skill lifecycle events.

The seeds' lifecycle (seed 003): ``skill.proposed | validated | revised | deprecated | contradicted`` are
versions of the ``skill`` entity (named by ``skill_id``) carrying the whole skill with its ``status``;
``skill.applied`` and ``skill.outcome_recorded`` are ``skill_application`` / ``skill_outcome`` observations
linked to it (an outcome scoring 0.5 or more reinforces the skill, a lower one is recorded only).

This project's earlier lifecycle still replays exactly as before: ``skill.registered | skill.updated`` version
the skill, ``skill.retired`` closes it, ``skill.invoked`` is feedback on it."""

from __future__ import annotations

from typing import Any

from ..model import EntityDraft, EntityRef, Extraction, FeedbackSignal, Invalidation, RelationDraft
from ..registry import register
from .common import bounded, event_time, pick_text

SKILL_PROPERTIES = (
    "skill_id",
    "version",
    "name",
    "procedure",
    "applicability",
    "citations",
    "failure_modes",
    "rollback",
    "contradiction_reason",
    "supersedes_version",
    "task",
    "reason",
)
REINFORCING_SCORE = 0.5


@register("skill.proposed", "skill.validated", "skill.revised", "skill.deprecated", "skill.contradicted")
def skill_state(envelope: dict[str, Any]) -> Extraction:
    """A new version of the skill in the state the event names (``status``), with everything it carries."""
    payload = envelope["payload"]
    skill_id = pick_text(payload, "skill_id", "skill", "name", required="the skill_id")
    status = envelope["type"].removeprefix("skill.")
    summary = pick_text(payload, "summary", "description")
    steps = payload.get("procedure") if isinstance(payload.get("procedure"), list) else []
    version = pick_text(payload, "version")
    head = f"skill {skill_id}" + (f" v{version}" if version else "") + f" [{status}]"
    text = "; ".join(str(step) for step in steps)
    entity = EntityDraft(
        name=bounded(skill_id, 200),
        entity_type="skill",
        summary=bounded(head + (f": {summary}" if summary else "") + (f" Steps: {text}" if text else "")),
        properties={
            "status": status,
            "summary": summary or None,
            **{name: payload.get(name) for name in SKILL_PROPERTIES if payload.get(name) not in (None, "", [])},
        },
        valid_from=event_time(envelope),
        importance=0.7 if status in ("validated", "revised") else 0.5,
    )
    return Extraction(entities=[entity], searchable_text=f"skill {skill_id} {summary} {text}".strip())


@register("skill.applied", "skill.outcome_recorded")
def skill_observation(envelope: dict[str, Any]) -> Extraction:
    """An application of the skill, or its outcome (``success_score``, ``feedback``, ``evidence``)."""
    payload = envelope["payload"]
    skill_id = pick_text(payload, "skill_id", "skill", "name", required="the skill_id")
    applied = envelope["type"] == "skill.applied"
    kind, relation = ("skill_application", "applied_skill") if applied else ("skill_outcome", "outcome_of_skill")
    score = payload.get("success_score")
    detail = pick_text(payload, "feedback", "reason", "task")
    observation = EntityDraft(
        name=f"{bounded(skill_id, 200)} {'applied' if applied else 'outcome'} #{envelope['seq']}",
        entity_type=kind,
        summary=bounded(
            f"skill {skill_id} {'applied' if applied else 'outcome'}"
            + (f" (success {score})" if isinstance(score, int | float) else "")
            + (f": {detail}" if detail else "")
        ),
        properties={
            name: payload.get(name)
            for name in ("skill_id", "version", "task", "success_score", "feedback", "evidence", "citations")
            if payload.get(name) not in (None, "", [])
        },
        valid_from=event_time(envelope),
        importance=0.3,
    )
    skill = EntityRef(bounded(skill_id, 200), "skill")
    extraction = Extraction(
        entities=[EntityDraft(skill.name, "skill", mode="reference"), observation],
        relations=[RelationDraft(EntityRef(observation.name, kind), skill, relation)],
        searchable_text=f"skill {skill_id} {detail}".strip(),
    )
    if isinstance(score, int | float) and not isinstance(score, bool):
        good = score >= REINFORCING_SCORE
        extraction.feedback.append(FeedbackSignal(skill, "success" if good else "failure", 1.0, good))
    return extraction


@register("skill.registered", "skill.updated")
def skill_version(envelope: dict[str, Any]) -> Extraction:
    """``{skill, description?, version?}``: a new current version of the skill."""
    payload = envelope["payload"]
    name = pick_text(payload, "skill", "name", required="the skill name")
    description = pick_text(payload, "description", "summary")
    version = pick_text(payload, "version")
    entity = EntityDraft(
        name=bounded(name, 200),
        entity_type="skill",
        summary=bounded(
            f"skill {name}" + (f" ({version})" if version else "") + (f": {description}" if description else "")
        ),
        properties={"version": version or None, "state": "active"},
        valid_from=event_time(envelope),
        importance=0.7,
    )
    return Extraction(entities=[entity], searchable_text=f"skill {name} {description}".strip())


@register("skill.retired")
def skill_retired(envelope: dict[str, Any]) -> Extraction:
    payload = envelope["payload"]
    name = pick_text(payload, "skill", "name", required="the skill name")
    return Extraction(invalidations=[Invalidation(EntityRef(name, "skill"), pick_text(payload, "note") or "retired")])


@register("skill.invoked")
def skill_invoked(envelope: dict[str, Any]) -> Extraction:
    """``{skill, outcome: success|failure, note?}``: reinforces a skill that worked; a failure is recorded only."""
    payload = envelope["payload"]
    name = pick_text(payload, "skill", "name", required="the skill name")
    success = (pick_text(payload, "outcome") or "success") == "success"
    signal = FeedbackSignal(EntityRef(name, "skill"), "used" if success else "failed", 1.0, success)
    return Extraction(feedback=[signal], searchable_text=pick_text(payload, "note"))
