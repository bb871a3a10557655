"""Checkout extension ``belief_update_proposals`` (seed 002/003 beta.1): how many belief updates are proposed in
the checkout's scope and in which review state, and the guidance that they are proposals, not memory."""

from __future__ import annotations

import json
from typing import Any

from zaxy_agents.checkout.extensions.context import CheckoutContext
from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.projection.session_memo import SessionMemo

from .contracts import AUTHORITY_STATUS, DISPOSITIONS, PROPOSAL_ENTITY

GUIDANCE = (
    "belief_update_proposals: treat belief updates as proposals until reviewed and promoted by a separate authority "
    "path; they are not canonical memory and did not change any current fact."
)
SCAN = 2000  # most recent proposal versions read per session
# a session's status counts, re-read only when the session changed (its catalog epoch)
_COUNTS: SessionMemo[dict[str, int]] = SessionMemo()


def _scope_counts(catalog: EntityCatalog, sessions: list[str], as_of: str | None) -> list[dict[str, int]]:
    if as_of is None:  # the sessions' counts summed in a tree: a change re-sums the changed session's path
        _, summed = _COUNTS.merged(
            catalog, sessions, lambda session: _read_counts(catalog, session, None), _add, types=(PROPOSAL_ENTITY,)
        )
        return [] if summed is None else [summed]
    return [_read_counts(catalog, session, as_of) for session in sessions]


def _add(earlier: dict[str, int], later: dict[str, int]) -> dict[str, int]:
    return {**earlier, **{status: earlier.get(status, 0) + count for status, count in later.items()}}


def _read_counts(catalog: EntityCatalog, session: str, as_of: str | None) -> dict[str, int]:
    counts: dict[str, int] = {}
    for version in catalog.recent_versions(session, PROPOSAL_ENTITY, SCAN, as_of):
        status = str(json.loads(version.properties_json or "{}").get("review_status", "pending"))
        counts[status] = counts.get(status, 0) + 1
    return counts


def belief_update_proposals(context: CheckoutContext) -> tuple[dict[str, Any], list[str]]:
    catalog = context.catalog
    sessions = sorted(context.scope if context.scope is not None else catalog.sessions)
    totals: dict[str, int] = {}
    for counts in _scope_counts(catalog, sessions, context.as_of):
        for status, count in counts.items():
            totals[status] = totals.get(status, 0) + count
    total = sum(totals.values())
    block = {
        "proposal_count": total,
        "pending_count": totals.get("pending", 0) + totals.get("deferred", 0),
        **{f"{status}_count": totals.get(status, 0) for status in DISPOSITIONS},
        "authority_status": AUTHORITY_STATUS,
    }
    return block, [GUIDANCE] if total else []
