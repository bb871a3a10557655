"""Encoding-specificity cues (seed 004): the context an event was written in, matched at recall.

An event records its cues in ``payload.cues`` (``mission``, ``workspace``, ``tool``, ``phase``: plain strings,
written by the caller or a surface on append). A checkout or query that passes the caller's current cues, under a
retrieval profile with ``cue_weight`` > 0, multiplies each candidate's fused score by
``1 + cue_weight x overlap``, where ``overlap`` is the share of the caller's cues the event recorded with the same
value (case and surrounding spaces ignored). Shown per hit as ``boosts.cue_overlap``.

The issue's and the seed's other names for two of them are accepted everywhere cues are read: ``task`` for
``mission`` and ``repo`` for ``workspace`` (``CUE_ALIASES``), so ``--cue repo=zaxy`` matches an event that
recorded ``{"workspace": "zaxy"}``.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.errors import InvalidRequestError

CUE_NAMES = ("mission", "workspace", "tool", "phase")
CUE_ALIASES = {"task": "mission", "repo": "workspace"}
MAX_CUE_CHARS = 500
_NAMES_HELP = "mission (or task), workspace (or repo), tool, phase"


def checked_cues(cues: Any, *, field: str = "cues") -> dict[str, str] | None:
    """The cues as ``{name: value}`` (empty values dropped), or a structured error naming the bad field."""
    if cues is None:
        return None
    if not isinstance(cues, dict):
        raise InvalidRequestError(
            f"{field} must be an object", field=field, remediation=f"Pass {{name: string}} with names {_NAMES_HELP}."
        )
    out: dict[str, str] = {}
    seen: set[str] = set()
    for given, value in cues.items():
        name = CUE_ALIASES.get(given, given)
        if name not in CUE_NAMES:
            raise InvalidRequestError(
                f"unknown cue {given!r}", field=f"{field}.{given}", remediation=f"Use {_NAMES_HELP}."
            )
        if name in seen:
            raise InvalidRequestError(
                f"cue {name} is given twice",
                field=f"{field}.{given}",
                remediation=f"Give {name} once (task = mission, repo = workspace).",
            )
        seen.add(name)
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
    out: dict[str, str] = {}
    for given, value in cues.items():
        name = CUE_ALIASES.get(given, given) if isinstance(given, str) else given
        if name in CUE_NAMES and isinstance(value, str):
            out.setdefault(name, value)
    return out


def cue_overlap(caller: dict[str, str], recorded: dict[str, str]) -> float:
    """Share of the caller's cues the event recorded with the same value."""
    if not caller:
        return 0.0
    same = sum(1 for name, value in caller.items() if _norm(recorded.get(name, "")) == _norm(value) != "")
    return same / len(caller)


def _norm(value: str) -> str:
    return " ".join(value.lower().split())
