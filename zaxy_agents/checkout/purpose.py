"""Purpose presets: what a checkout is for changes what it emphasises and what it leaves out.

Each preset sets a retrieval profile, emphasis terms (hits mentioning them are boosted), a recall floor
(how many evidence items survive even a tight budget) and suppression rules (event / entity types that are
noise for that purpose). A caller can also pass a structured policy. Diagnostics report what was applied and
how many items each rule excluded.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from zaxy_agents.errors import InvalidRequestError

from .models import PurposePolicy

EMPHASIS_BOOST = 1.2

PRESETS: dict[str, PurposePolicy] = {
    "general": PurposePolicy(name="general"),
    "coding": PurposePolicy(
        name="coding",
        profile="precision",
        emphasis_terms=["file", "function", "test", "error", "command", "build", "fix", "bug", "api"],
        suppress_event_types=["hook.session_started", "hook.stop", "hook.session_ended", "session.started"],
        suppress_entity_types=["hook_event"],
    ),
    "review": PurposePolicy(
        name="review",
        profile="balanced",
        emphasis_terms=["decision", "rationale", "risk", "test", "change", "regression"],
        suppress_entity_types=["hook_event"],
    ),
    "release": PurposePolicy(
        name="release",
        profile="temporal",
        recall_floor=5,
        emphasis_terms=["release", "version", "changelog", "deploy", "migration", "breaking", "tag"],
        suppress_entity_types=["hook_event", "prompt"],
    ),
    "security": PurposePolicy(
        name="security",
        profile="precision",
        recall_floor=5,
        emphasis_terms=["secret", "token", "credential", "auth", "permission", "vulnerability", "cve", "redacted"],
        suppress_entity_types=["hook_event"],
    ),
    "research": PurposePolicy(
        name="research",
        profile="recall",
        recall_floor=6,
        emphasis_terms=["source", "finding", "paper", "document", "claim", "evidence"],
        suppress_event_types=["command.completed", "tool.call.completed"],
        suppress_entity_types=["command_run", "tool_call", "hook_event"],
    ),
    "coordinate": PurposePolicy(
        name="coordinate",
        profile="cognitive",
        emphasis_terms=["task", "owner", "blocked", "handoff", "decision", "status", "next"],
        suppress_entity_types=["command_run"],
    ),
}


SEED_FIELDS = (
    "role",
    "task",
    "risk",
    "time_horizon",
    "expected_action",
    "evidence_policy",
    "retention_policy",
    "ontology_lens",
)
HIGH_RISK = {"high", "critical"}
MAX_EMPHASIS_TERMS = 24
_STOP_WORDS = frozenset({"and", "are", "for", "from", "into", "the", "this", "with", "that", "what"})


def resolve_purpose(purpose: str | dict[str, Any] | PurposePolicy | None) -> PurposePolicy:
    """A preset name, a structured policy (dict or model), or None for the general policy.

    A dict may use the seed's purpose fields: ``role`` names the preset it starts from, the words of ``task``
    and ``ontology_lens`` become emphasis terms, ``risk`` high/critical raises the recall floor by 2, and every
    seed field is kept in the normalised policy; explicit policy fields (``profile``, ``emphasis_terms``, ...)
    override.
    """
    if purpose is None:
        return PRESETS["general"]
    if isinstance(purpose, PurposePolicy):
        return purpose
    if isinstance(purpose, str):
        policy = PRESETS.get(purpose)
        if policy is None:
            raise InvalidRequestError(
                f"unknown purpose {purpose!r}",
                field="purpose",
                remediation=f"Use one of {', '.join(PRESETS)} or a structured policy object.",
            )
        return policy
    try:
        if isinstance(purpose, dict) and any(purpose.get(name) is not None for name in SEED_FIELDS):
            return _seed_purpose(purpose)
        return PurposePolicy.model_validate({"name": "custom", **purpose})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InvalidRequestError(
            f"invalid purpose policy at {'.'.join(map(str, first['loc']))}: {first['msg']}",
            field="purpose",
            remediation="Pass a preset name or {profile, emphasis_terms, recall_floor, suppress_event_types, "
            "suppress_entity_types}.",
        ) from exc


def _seed_purpose(purpose: dict[str, Any]) -> PurposePolicy:
    role = purpose.get("role")
    base = PRESETS.get(role) if isinstance(role, str) else None
    policy = (base or PRESETS["general"]).model_dump()
    policy["name"] = base.name if base is not None else "custom"
    words = " ".join(str(purpose.get(name) or "") for name in ("task", "ontology_lens")).lower().split()
    terms = [w.strip(".,:;!?()[]\"'") for w in words]
    extra = [t for t in dict.fromkeys(terms) if len(t) > 2 and t not in _STOP_WORDS]
    policy["emphasis_terms"] = list(dict.fromkeys([*policy["emphasis_terms"], *extra]))[:MAX_EMPHASIS_TERMS]
    if purpose.get("risk") in HIGH_RISK:
        policy["recall_floor"] = min(50, policy["recall_floor"] + 2)
    overrides = {key: value for key, value in purpose.items() if value is not None}
    return PurposePolicy.model_validate({**policy, **overrides, "name": policy["name"]})
