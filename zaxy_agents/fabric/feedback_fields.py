"""Validation of the seed's optional fields on feedback (``memory.reinforced`` / ``memory.feedback``) and of
``invalid_at`` on invalidation, shared by every surface that writes them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.projection.extractors.common import normalise_time

TEXT_LIMITS = {"query": 4000, "source": 200, "reason": 2000, "outcome": 500}
MAX_PURPOSE_BYTES = 4000


def feedback_details(details: dict[str, Any], *, reason: str | None = None) -> dict[str, Any]:
    """The optional context fields of a feedback event (``importance``, ``query``, ``source``, ``score``,
    ``reason``, ``purpose``, ``outcome``), validated; ``reason`` may also come as the earlier ``note``."""
    unknown = sorted(set(details) - {*TEXT_LIMITS, "importance", "score", "purpose"})
    if unknown:
        raise InvalidRequestError(
            f"unknown feedback field {unknown[0]!r}",
            field=unknown[0],
            remediation="Use importance, query, source, score, reason, purpose or outcome.",
        )
    if reason is not None and details.get("reason") is not None and reason != details["reason"]:
        raise InvalidRequestError(
            "note and reason are the same field", field="note", remediation="Pass only reason (note is its old name)."
        )
    fields = {**details, **({"reason": reason} if reason is not None else {})}
    out: dict[str, Any] = {}
    for name, limit in TEXT_LIMITS.items():
        value = fields.get(name)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip() or len(value) > limit:
            raise InvalidRequestError(
                f"{name} must be a non-empty string of at most {limit} characters",
                field=name,
                remediation=f"Shorten {name}, or omit it.",
            )
        out[name] = value
    importance = fields.get("importance")
    if importance is not None:
        if isinstance(importance, bool) or not isinstance(importance, int | float) or not 0.0 <= importance <= 1.0:
            raise InvalidRequestError(
                "importance must be a number in [0, 1]", field="importance", remediation="Use e.g. 0.8, or omit it."
            )
        out["importance"] = float(importance)
    score = fields.get("score")
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, int | float) or score != score or abs(score) > 1e9:
            raise InvalidRequestError(
                "score must be a finite number", field="score", remediation="Pass the retrieval score, or omit it."
            )
        out["score"] = float(score)
    purpose = fields.get("purpose")
    if purpose is not None:
        if not isinstance(purpose, str | dict) or len(json.dumps(purpose, default=str)) > MAX_PURPOSE_BYTES:
            raise InvalidRequestError(
                "purpose must be a preset name or a small object",
                field="purpose",
                remediation="Pass e.g. 'coding' or {role, task, expected_action, ...}.",
            )
        out["purpose"] = purpose
    return out


def invalid_at_for(value: str, valid_from: str) -> str:
    """``value`` as a canonical UTC instant, refused when unparseable, in the future or before ``valid_from``."""
    moment = normalise_time(value)
    if moment is None:
        raise InvalidRequestError(
            f"invalid_at {value!r} is not an ISO-8601 instant",
            field="invalid_at",
            remediation="Use e.g. 2026-05-01T12:00:00Z, or omit it for now.",
        )
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if moment > now:
        raise InvalidRequestError(
            "invalid_at is in the future",
            field="invalid_at",
            remediation="Invalidate when the fact stops being true; memory records what is, not what will be.",
        )
    if moment < valid_from:
        raise InvalidRequestError(
            f"invalid_at is before the fact's current version became valid ({valid_from})",
            field="invalid_at",
            remediation="Pass a time at or after valid_from, or omit invalid_at for now.",
        )
    return moment
