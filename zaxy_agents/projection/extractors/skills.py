"""Skill lifecycle events: ``skill.registered | skill.updated`` version a ``skill`` entity, ``skill.retired``
closes it, ``skill.invoked`` is feedback on it (successful runs reinforce it)."""

from __future__ import annotations

from typing import Any

from ..model import EntityDraft, EntityRef, Extraction, FeedbackSignal, Invalidation
from ..registry import register
from .common import bounded, event_time, pick_text


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
