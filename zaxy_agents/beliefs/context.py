"""Checkout extension ``belief_update_proposals`` (seed 002/003 beta.1): how many belief updates are proposed in
the checkout's scope and in which review state, and the guidance that they are proposals, not memory."""

from __future__ import annotations

import json
import weakref
from typing import Any

from zaxy_agents.checkout.extensions.context import CheckoutContext
from zaxy_agents.projection.catalog import EntityCatalog

from .contracts import AUTHORITY_STATUS, DISPOSITIONS, PROPOSAL_ENTITY

GUIDANCE = (
    "belief_update_proposals: treat belief updates as proposals until reviewed and promoted by a separate authority "
    "path; they are not canonical memory and did not change any current fact."
)
SCAN = 2000  # most recent proposal versions read per session
MEMO_SIZE = 512
# (id(catalog), session) -> (catalog ref, latest proposal version id, status counts)
_MEMO: dict[tuple[int, str], tuple[weakref.ref[EntityCatalog], str | None, dict[str, int]]] = {}


def _session_counts(catalog: EntityCatalog, session: str, as_of: str | None) -> dict[str, int]:
    if as_of is None:
        latest = catalog.recent_versions(session, PROPOSAL_ENTITY, 1, None)
        token = latest[0].id if latest else None
        cached = _MEMO.get((id(catalog), session))
        if cached is not None and cached[0]() is catalog and cached[1] == token:
            return cached[2]
    counts: dict[str, int] = {}
    for version in catalog.recent_versions(session, PROPOSAL_ENTITY, SCAN, as_of):
        status = str(json.loads(version.properties_json or "{}").get("review_status", "pending"))
        counts[status] = counts.get(status, 0) + 1
    if as_of is None:
        if len(_MEMO) >= MEMO_SIZE:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[(id(catalog), session)] = (weakref.ref(catalog), token, counts)
    return counts


def belief_update_proposals(context: CheckoutContext) -> tuple[dict[str, Any], list[str]]:
    catalog = context.catalog
    sessions = sorted(context.scope if context.scope is not None else catalog.sessions)
    totals: dict[str, int] = {}
    for session in sessions:
        for status, count in _session_counts(catalog, session, context.as_of).items():
            totals[status] = totals.get(status, 0) + count
    total = sum(totals.values())
    block = {
        "proposal_count": total,
        "pending_count": totals.get("pending", 0) + totals.get("deferred", 0),
        **{f"{status}_count": totals.get(status, 0) for status in DISPOSITIONS},
        "authority_status": AUTHORITY_STATUS,
    }
    return block, [GUIDANCE] if total else []
