"""Skill lifecycle events: ``skill.registered | skill.invoked | skill.updated | skill.retired``.

A skill is a named, reusable procedure an agent can run. Registering or updating one creates a new version of
the ``skill`` entity; retiring it closes its validity window (history kept); each invocation is feedback on the
skill (a successful run reinforces it, a failed one is recorded without reinforcing). See the ``skills``
extractor for the projection.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.errors import InvalidRequestError

SKILL_ACTIONS = ("registered", "invoked", "updated", "retired")
OUTCOMES = ("success", "failure")


def skill_payload(
    action: str,
    skill: str,
    *,
    description: str | None = None,
    version: str | None = None,
    outcome: str | None = None,
    note: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """``(event type, payload)`` for one skill lifecycle event, validated."""
    if action not in SKILL_ACTIONS:
        raise InvalidRequestError(
            f"unknown skill action {action!r}", field="action", remediation=f"Use one of {', '.join(SKILL_ACTIONS)}."
        )
    if not isinstance(skill, str) or not skill.strip():
        raise InvalidRequestError("skill needs a name", field="skill", remediation="Name the skill.")
    if action == "registered" and not (description and description.strip()):
        raise InvalidRequestError(
            "registering a skill needs a description",
            field="description",
            remediation="Say what the skill does and when to use it.",
        )
    if outcome is not None and (action != "invoked" or outcome not in OUTCOMES):
        raise InvalidRequestError(
            "outcome is only for invoked skills (success or failure)",
            field="outcome",
            remediation="Drop outcome, or use action='invoked' with outcome 'success' or 'failure'.",
        )
    payload: dict[str, Any] = {"skill": skill.strip()}
    for key, value in (("description", description), ("version", version), ("note", note)):
        if value:
            payload[key] = value
    if action == "invoked":
        payload["outcome"] = outcome or "success"
    return f"skill.{action}", payload
