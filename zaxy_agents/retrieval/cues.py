"""Encoding-specificity cues (seed 004): the context an event was written in, matched at recall.

An event records its cues in ``payload.cues`` (``mission``, ``workspace``, ``tool``, ``phase``: plain strings,
written by the caller or a surface on append). A checkout or query that passes the caller's current cues, under a
retrieval profile with ``cue_weight`` > 0, multiplies each candidate's fused score by
``1 + cue_weight x overlap``, where ``overlap`` is the share of the caller's cues the event recorded with the same
value (case and surrounding spaces ignored). Shown per hit as ``boosts.cue_overlap``.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.errors import InvalidRequestError

CUE_NAMES = ("mission", "workspace", "tool", "phase")
MAX_CUE_CHARS = 500


def checked_cues(cues: Any, *, field: str = "cues") -> dict[str, str] | None:
    """The cues as ``{name: value}`` (empty values dropped), or a structured error naming the bad field."""
    if cues is None:
        return None
    if not isinstance(cues, dict):
        raise InvalidRequestError(
            f"{field} must be an object", field=field, remediation=f"Pass {{{', '.join(CUE_NAMES)}}} strings."
        )
    out: dict[str, str] = {}
    for name, value in cues.items():
        if name not in CUE_NAMES:
            raise InvalidRequestError(
                f"unknown cue {name!r}", field=f"{field}.{name}", remediation=f"Use {', '.join(CUE_NAMES)}."
            )
        if not isinstance(value, str) or len(value) > MAX_CUE_CHARS:
            raise InvalidRequestError(
                f"cue {name} must be a string of at most {MAX_CUE_CHARS} characters",
                field=f"{field}.{name}",
                remediation="Pass a short label such as the repository or task name.",
            )
        if value.strip():
            out[name] = value
    return out or None


def recorded_cues(payload: Any) -> dict[str, str]:
    """The cues an event's payload recorded (anything malformed is ignored: recall never fails on it)."""
    cues = payload.get("cues") if isinstance(payload, dict) else None
    if not isinstance(cues, dict):
        return {}
    return {name: value for name, value in cues.items() if name in CUE_NAMES and isinstance(value, str)}


def cue_overlap(caller: dict[str, str], recorded: dict[str, str]) -> float:
    """Share of the caller's cues the event recorded with the same value."""
    if not caller:
        return 0.0
    same = sum(1 for name, value in caller.items() if _norm(recorded.get(name, "")) == _norm(value) != "")
    return same / len(caller)


def _norm(value: str) -> str:
    return " ".join(value.lower().split())
