"""Skill lifecycle events (seed 003 ``memory_skill``): ``skill.proposed | validated | revised | deprecated |
contradicted | applied | outcome_recorded``.

A skill is a named, versioned, reusable procedure. Its review states (proposed, validated, revised, deprecated,
contradicted) are versions of the ``skill`` entity that carry the whole skill (procedure steps, applicability,
citations, failure modes, rollback, contradiction reason, supersedes_version): the writer repeats the current
version's fields, so every version stands on its own and the projection needs no memory of earlier events.
``applied`` and ``outcome_recorded`` are observations of a skill (an outcome with a success score of 0.5 or more
reinforces it). Nothing here is a checkout side effect; checkout reads skills, revisions are new events.

The earlier actions (``skill.registered | invoked | updated | retired``) are no longer written; logs that hold
them replay exactly as before (see the ``skills`` extractor).
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.errors import InvalidRequestError, NotFoundError

SKILL_ACTIONS = ("proposed", "validated", "revised", "deprecated", "contradicted", "applied", "outcome_recorded")
REVIEW_STATES = ("proposed", "validated", "revised", "deprecated", "contradicted")
LEGACY_ACTIONS = {"registered": "proposed", "updated": "revised", "retired": "deprecated", "invoked": "applied"}
CARRIED_FIELDS = (
    "name",
    "summary",
    "procedure",
    "applicability",
    "citations",
    "failure_modes",
    "rollback",
    "supersedes_version",
)
MAX_STEPS = 50
MAX_TEXT = 2000


def skill_payload(action: str, skill_id: str, current: dict[str, Any] | None, **fields: Any) -> tuple[str, dict]:
    """``(event type, payload)`` for one lifecycle step, validated; ``current`` is the skill's current version
    (its properties), or ``None`` when there is none."""
    if action not in SKILL_ACTIONS:
        hint = f" (the seed's name for it is {LEGACY_ACTIONS[action]!r})" if action in LEGACY_ACTIONS else ""
        raise InvalidRequestError(
            f"unknown skill action {action!r}{hint}",
            field="action",
            remediation=f"Use one of {', '.join(SKILL_ACTIONS)}.",
        )
    if not isinstance(skill_id, str) or not skill_id.strip():
        raise InvalidRequestError("skill_id is required", field="skill_id", remediation="Name the skill.")
    given = {name: value for name, value in fields.items() if value not in (None, "", [])}
    _check_fields(given)
    if action != "proposed" and current is None:
        raise NotFoundError(
            f"no current skill {skill_id!r}",
            field="skill_id",
            remediation="Propose the skill first (action 'proposed').",
        )
    payload: dict[str, Any] = {"skill_id": skill_id.strip()}
    if action in REVIEW_STATES:
        base = {name: current[name] for name in CARRIED_FIELDS if current and current.get(name) not in (None, [])}
        payload.update(base)
        payload.update({name: given[name] for name in CARRIED_FIELDS if name in given})
        payload["version"] = _version(action, given.get("version"), current)
        if action == "revised":
            payload["supersedes_version"] = given.get("supersedes_version") or (current or {}).get("version")
        if action == "proposed" and not (payload.get("summary") or payload.get("procedure")):
            raise InvalidRequestError(
                "a proposed skill needs a summary or procedure steps",
                field="summary",
                remediation="Say what the skill does, or list its steps in procedure.",
            )
        if action == "contradicted" and "contradiction_reason" not in given:
            raise InvalidRequestError(
                "contradicted needs a contradiction_reason",
                field="contradiction_reason",
                remediation="Say what contradicts the skill (cite it in citations).",
            )
        if action == "deprecated" and "reason" not in given:
            raise InvalidRequestError(
                "deprecated needs a reason", field="reason", remediation="Say why the skill should no longer be used."
            )
        for name in ("contradiction_reason", "reason", "task"):
            if name in given:
                payload[name] = given[name]
    else:
        payload["version"] = given.get("version") or (current or {}).get("version")
        if action == "outcome_recorded" and "success_score" not in given and "feedback" not in given:
            raise InvalidRequestError(
                "an outcome needs a success_score (0..1) or feedback",
                field="success_score",
                remediation="Say how applying the skill went.",
            )
        for name in ("task", "success_score", "feedback", "evidence", "reason", "citations"):
            if name in given:
                payload[name] = given[name]
    return f"skill.{action}", payload


def _version(action: str, version: Any, current: dict[str, Any] | None) -> str:
    previous = str((current or {}).get("version") or "")
    if action == "proposed":
        return str(version or "1")
    if action == "revised":
        if not version:
            raise InvalidRequestError(
                "a revision needs its new version", field="version", remediation="Pass e.g. version '2'."
            )
        if str(version) == previous:
            raise InvalidRequestError(
                f"version {version!r} is the current version",
                field="version",
                remediation="A revision is a new version: pass a different one (supersedes_version names the old).",
            )
        return str(version)
    if version and str(version) != previous:
        raise InvalidRequestError(
            f"version {version!r} is not the current version ({previous})",
            field="version",
            remediation=f"{action} applies to the current version; revise the skill to make a new one.",
        )
    return previous


def _check_fields(given: dict[str, Any]) -> None:
    for name in ("procedure", "failure_modes", "citations"):
        value = given.get(name)
        if value is not None and (
            not isinstance(value, list)
            or len(value) > MAX_STEPS
            or not all(isinstance(item, str) and 0 < len(item) <= MAX_TEXT for item in value)
        ):
            raise InvalidRequestError(
                f"{name} must be a list of at most {MAX_STEPS} non-empty strings",
                field=name,
                remediation=f"Pass {name} as a list of short strings.",
            )
    score = given.get("success_score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1):
        raise InvalidRequestError(
            "success_score must be a number in [0, 1]", field="success_score", remediation="Use e.g. 0.9."
        )
    for name, value in given.items():
        if name not in ("procedure", "failure_modes", "citations", "success_score") and not (
            isinstance(value, str) and len(value) <= MAX_TEXT * 2
        ):
            raise InvalidRequestError(
                f"{name} must be a string of at most {MAX_TEXT * 2} characters",
                field=name,
                remediation=f"Shorten {name}.",
            )
