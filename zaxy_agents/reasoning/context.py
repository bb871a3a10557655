"""Checkout extension ``reasoning_primitives`` (seed 002/003 beta.1): how many primitive observations the scope
holds (``context_count``), per phase and per primitive, ``authority_status: non_authoritative``, and the seed's
guidance that they are replayable trace evidence, not authority. Reads the latest ``SCAN`` observations of each
session (bounded: cost follows recent activity, not history)."""

from __future__ import annotations

import json
from typing import Any

from zaxy_agents.checkout.extensions.context import CheckoutContext
from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.projection.session_memo import SessionMemo

from .contracts import AUTHORITY_STATUS, OBSERVATION_ENTITY
from .primitives import PHASES

GUIDANCE = (
    "reasoning_primitives: treat primitive observations as replayable reasoning trace evidence rather than "
    "authority; they show which memory operations ran, not that their results are true."
)
SCAN = 500
Counts = tuple[int, dict[str, int], dict[str, int], dict[str, int]]
# a session's counts, re-read only when the session changed (its catalog epoch): a whole-memory checkout reads the
# sessions that changed since the last one
_COUNTS: SessionMemo[Counts] = SessionMemo()


def _scope_counts(catalog: EntityCatalog, sessions: list[str], as_of: str | None) -> list[Counts]:
    if as_of is None:  # the sessions' counts summed in a tree: a change re-sums the changed session's path
        _, summed = _COUNTS.merged(
            catalog, sessions, lambda session: _read_counts(catalog, session, None), _add, types=(OBSERVATION_ENTITY,)
        )
        return [] if summed is None else [summed]
    return [_read_counts(catalog, session, as_of) for session in sessions]


def _add(earlier: Counts, later: Counts) -> Counts:
    def add(first: dict[str, int], second: dict[str, int]) -> dict[str, int]:
        return {**first, **{key: first.get(key, 0) + value for key, value in second.items()}}

    return earlier[0] + later[0], add(earlier[1], later[1]), add(earlier[2], later[2]), add(earlier[3], later[3])


def _read_counts(catalog: EntityCatalog, session: str, as_of: str | None) -> Counts:
    phases: dict[str, int] = {}
    primitives: dict[str, int] = {}
    statuses: dict[str, int] = {}
    total = 0
    for version in catalog.recent_versions(session, OBSERVATION_ENTITY, SCAN, as_of):
        data = json.loads(version.properties_json or "{}")
        total += 1
        for counts, key in ((phases, "phase"), (primitives, "primitive"), (statuses, "status")):
            counts[str(data.get(key))] = counts.get(str(data.get(key)), 0) + 1
    return total, phases, primitives, statuses


def reasoning_primitives(context: CheckoutContext) -> tuple[dict[str, Any], list[str]]:
    catalog = context.catalog
    sessions = sorted(context.scope if context.scope is not None else catalog.sessions)
    phases: dict[str, int] = {}
    primitives: dict[str, int] = {}
    statuses: dict[str, int] = {}
    total = 0
    for count, by_phase, by_primitive, by_status in _scope_counts(catalog, sessions, context.as_of):
        total += count
        for into, counts in ((phases, by_phase), (primitives, by_primitive), (statuses, by_status)):
            for key, value in counts.items():
                into[key] = into.get(key, 0) + value
    block = {
        "context_count": total,
        "phase_counts": {phase: phases[phase] for phase in PHASES if phase in phases},
        "primitive_counts": dict(sorted(primitives.items())),
        "status_counts": dict(sorted(statuses.items())),
        "authority_status": AUTHORITY_STATUS,
    }
    return block, [GUIDANCE] if total else []
