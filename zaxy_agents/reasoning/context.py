"""Checkout extension ``reasoning_primitives`` (seed 002/003 beta.1): how many primitive observations the scope
holds (``context_count``), per phase and per primitive, ``authority_status: non_authoritative``, and the seed's
guidance that they are replayable trace evidence, not authority. Reads the latest ``SCAN`` observations of each
session (bounded: cost follows recent activity, not history)."""

from __future__ import annotations

import json
from typing import Any

from zaxy_agents.checkout.extensions.context import CheckoutContext

from .contracts import AUTHORITY_STATUS, OBSERVATION_ENTITY
from .primitives import PHASES

GUIDANCE = (
    "reasoning_primitives: treat primitive observations as replayable reasoning trace evidence rather than "
    "authority; they show which memory operations ran, not that their results are true."
)
SCAN = 500


def reasoning_primitives(context: CheckoutContext) -> tuple[dict[str, Any], list[str]]:
    catalog = context.catalog
    sessions = sorted(context.scope if context.scope is not None else catalog.sessions)
    phases: dict[str, int] = {}
    primitives: dict[str, int] = {}
    statuses: dict[str, int] = {}
    total = 0
    for session in sessions:
        for version in catalog.recent_versions(session, OBSERVATION_ENTITY, SCAN, context.as_of):
            data = json.loads(version.properties_json or "{}")
            total += 1
            phase, primitive, status = data.get("phase"), data.get("primitive"), data.get("status")
            phases[phase] = phases.get(phase, 0) + 1
            primitives[primitive] = primitives.get(primitive, 0) + 1
            statuses[status] = statuses.get(status, 0) + 1
    block = {
        "context_count": total,
        "phase_counts": {phase: phases[phase] for phase in PHASES if phase in phases},
        "primitive_counts": dict(sorted(primitives.items())),
        "status_counts": dict(sorted(statuses.items())),
        "authority_status": AUTHORITY_STATUS,
    }
    return block, [GUIDANCE] if total else []
