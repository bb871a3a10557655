"""Cross-session recency reads of the catalog: what ``recent_versions`` gives every session, as one ordered stream.

A whole-memory checkout asked ``recent_versions(session, type, scan)`` of every session and every working type
(18,000 reads at 1,000 sessions) and built every candidate version in Python to keep a few per kind. This query
keeps exactly the same candidates — per (session, type) the identities among its last ``scan`` versions, each by
its current version when the identity is open — but lets SQLite do the per-session cut and the ordering, and
hands the versions over one by one, newest first, so the caller builds only what it reads before its buckets
are full.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

_RECENT = """
WITH scope(session) AS ({scope}),
types(entity_type, rank) AS (SELECT value, key FROM json_each(:types)),
cut(session, entity_type, rank, cutoff) AS MATERIALIZED (
    SELECT s.session, t.entity_type, t.rank, coalesce((
        SELECT vid FROM cat_versions WHERE session = s.session AND entity_type = t.entity_type
        ORDER BY vid DESC LIMIT 1 OFFSET :offset), -1)
    FROM scope s, types t),
recent(kid, session, rank, last) AS MATERIALIZED (
    SELECT v.kid, c.session, c.rank, max(v.vid) FROM cut c CROSS JOIN cat_versions v
    ON v.session = c.session AND v.entity_type = c.entity_type AND v.vid >= c.cutoff GROUP BY v.kid)
"""
_ACROSS = (
    _RECENT
    + """SELECT {columns} FROM recent r JOIN cat_keys k ON k.kid = r.kid JOIN cat_versions v ON v.id = k.current
WHERE NOT k.closed
ORDER BY v.valid_from DESC, v.seq DESC, v.session, r.rank, r.last DESC
"""
)
_IMPORTANT = (
    _RECENT
    + """, listed(kid) AS (SELECT kid FROM (
    SELECT kid, row_number() OVER (PARTITION BY session, rank ORDER BY last DESC) AS n FROM recent) WHERE n <= :listed)
SELECT {columns} FROM listed r JOIN cat_keys k ON k.kid = r.kid JOIN cat_versions v ON v.id = k.current
WHERE NOT k.closed
ORDER BY v.importance DESC, v.entity_type, v.name, v.id LIMIT :limit
"""
)
_WHOLE_MEMORY = "SELECT session FROM cat_cursors"
_SCOPED = "SELECT value FROM json_each(:scope)"


def across_query(
    columns: str, entity_types: Sequence[str], scan: int, sessions: Sequence[str] | None
) -> tuple[str, dict[str, Any]]:
    """The SQL and parameters of :meth:`SqliteCatalog.recent_versions_across`.

    ``cut`` is the vid of each (session, type)'s ``scan``-th newest version (read backwards on the
    ``(session, entity_type)`` index: ``scan`` steps), so ``recent`` holds exactly the versions the per-session
    read's ``LIMIT scan`` holds, grouped by identity with the newest one's vid (that read's order). The order is
    the one a stable sort of the per-session results gives when they are concatenated by session (sorted), then
    by type (in the order asked), then newest identity first: (valid_from, seq) descending, ties in that order.
    ``cut`` is materialised and drives the join (``CROSS JOIN`` fixes SQLite's loop order): left to itself the
    planner scanned every version by identity and ran the cut's subquery per row (O(history)).
    """
    if scan < 1:
        raise ValueError(f"scan must be at least 1 (got {scan})")
    parameters: dict[str, Any] = {"types": json.dumps(list(entity_types)), "offset": scan - 1}
    if sessions is None:
        scope = _WHOLE_MEMORY
    else:
        scope = _SCOPED
        parameters["scope"] = json.dumps(sorted(set(sessions)))
    return _ACROSS.format(scope=scope, columns=columns), parameters


def important_query(
    columns: str, entity_types: Sequence[str], scan: int, listed: int, limit: int, sessions: Sequence[str] | None
) -> tuple[str, dict[str, Any]]:
    """The SQL and parameters of :meth:`SqliteCatalog.important_current_across`: the same per-session cut as
    :func:`across_query`, each (session, type)'s first ``listed`` identities of it (``recent_keys(...)[:listed]``,
    closed ones included, as that list has them), their open current versions by importance, then type, name and
    id (a total order: no ties), the first ``limit``."""
    _, parameters = across_query(columns, entity_types, scan, sessions)
    scope = _WHOLE_MEMORY if sessions is None else _SCOPED
    return _IMPORTANT.format(scope=scope, columns=columns), {**parameters, "listed": listed, "limit": limit}


def stream(cursor: Any, build: Any) -> Iterator[Any]:
    """Rows of an executed query built one by one; the statement is closed when the caller stops early."""
    try:
        for row in cursor:
            yield build(row)
    finally:
        cursor.close()
