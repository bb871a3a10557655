"""The SQL of the PostgreSQL projection store (``{schema}`` is replaced by the quoted schema once per store).

Kept apart from the classes so the statements can be read and reviewed together. Row inserts take one array
per column (``unnest``): one statement per table per batch, whatever the batch size.
"""

from __future__ import annotations

from zaxy_agents.storage.files.kuzu_schema import CITATION_COLUMNS, EDGE_AUDIT_COLUMNS, NODE_COLUMNS

# Column -> PostgreSQL array element type, for the unnest inserts.
_TYPES = {"STRING": "text", "INT64": "bigint", "DOUBLE": "float8", "BOOLEAN": "boolean"}

ENTITY_COLUMNS = [name for name, _ in NODE_COLUMNS["Entity"]]
RELATION_COLUMNS = [name for name, _ in EDGE_AUDIT_COLUMNS]
KEY_COLUMNS = [name for name, _ in NODE_COLUMNS["EntityKey"]]


def _insert(table: str, columns: list[tuple[str, str, str]]) -> str:
    names = ", ".join(column for _, column, _ in columns)
    arrays = ", ".join(f"%s::{_TYPES[kind]}[]" for _, _, kind in columns)
    return f"INSERT INTO {{schema}}.{table} ({names}) SELECT * FROM unnest({arrays})"


def _same(columns: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    return [(name, name, kind) for name, kind in columns]


# (batch attribute, table, [(row key, column, type)]) of the plain row inserts, in write order.
ROW_INSERTS: list[tuple[str, str, list[tuple[str, str, str]]]] = [
    ("events", "projection_events", _same([c for c in NODE_COLUMNS["Event"] if c[0] != "id"])),
    ("entity_keys", "projection_entity_keys", _same(NODE_COLUMNS["EntityKey"])),
    ("entities", "projection_entities", _same([*NODE_COLUMNS["Entity"], ("previous_version", "STRING")])),
    ("sources", "projection_sources", _same(NODE_COLUMNS["Source"])),
    (
        "cites_source",
        "projection_source_citations",
        [("from", "version_id", "STRING"), ("to", "source_id", "STRING"), *_same(CITATION_COLUMNS)],
    ),
    (
        "event_cites_source",
        "projection_event_citations",
        [("from", "event_id", "STRING"), ("to", "source_id", "STRING"), *_same(CITATION_COLUMNS)],
    ),
    (
        "projected_relations",
        "projection_projected_relations",
        [
            ("from", "event_id", "STRING"),
            ("to", "target_version", "STRING"),
            *_same([("source", "STRING"), ("target", "STRING"), *EDGE_AUDIT_COLUMNS]),
        ],
    ),
    ("feedback", "projection_feedback", _same(NODE_COLUMNS["Feedback"])),
    ("failures", "projection_failures", _same(NODE_COLUMNS["ExtractionFailure"])),
]
INSERT_SQL = {attribute: _insert(table, columns) for attribute, table, columns in ROW_INSERTS}

_ENDPOINTS = [("from", "STRING"), ("to", "STRING"), ("label", "STRING")]
_RELATION_ARRAYS = ", ".join(f"%s::{_TYPES[kind]}[]" for _, kind in [*_ENDPOINTS, *EDGE_AUDIT_COLUMNS])
STATEMENTS: dict[str, str] = {
    # One advisory lock per session (keys sorted by the caller), held until the transaction ends.
    "lock_sessions": (
        "SELECT pg_advisory_xact_lock(k) FROM (SELECT k FROM unnest(%s::bigint[]) WITH ORDINALITY AS t(k, n)"
        " ORDER BY n) ordered"
    ),
    "cursors_of": "SELECT id, projected_seq, projected_hash FROM {schema}.projection_sessions WHERE id = ANY(%s)",
    "cursors": "SELECT id, projected_seq, projected_hash FROM {schema}.projection_sessions",
    "set_cursors": (
        "INSERT INTO {schema}.projection_sessions AS s (id, projected_seq, projected_hash)"
        " SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[])"
        " ON CONFLICT (id) DO UPDATE SET projected_seq = excluded.projected_seq,"
        " projected_hash = excluded.projected_hash, updated_at = clock_timestamp()"
    ),
    # Edges carry both endpoints' identities, looked up from the versions (written earlier in this transaction).
    "insert_relations": (
        "INSERT INTO {schema}.projection_relations (source_version, target_version, label, "
        + ", ".join(RELATION_COLUMNS)
        + ", source_key, target_key) SELECT u.*, a.key, b.key FROM unnest("
        + _RELATION_ARRAYS
        + ") AS u(f, t, label, "
        + ", ".join(RELATION_COLUMNS)
        + ") JOIN {schema}.projection_entities a ON a.id = u.f JOIN {schema}.projection_entities b ON b.id = u.t"
    ),
    "close_versions": (
        "UPDATE {schema}.projection_entities e SET valid_to = u.valid_to, invalidated = u.invalidated,"
        " closed_by_seq = u.closed_by_seq, invalidation_reason = u.reason"
        " FROM unnest(%s::text[], %s::text[], %s::boolean[], %s::bigint[], %s::text[])"
        " AS u(id, valid_to, invalidated, closed_by_seq, reason)"
        " WHERE e.id = u.id AND e.session_id = ANY(%s)"
    ),
    "update_keys": (
        "UPDATE {schema}.projection_entity_keys k SET current_version = u.current_version, closed = u.closed"
        " FROM unnest(%s::text[], %s::text[], %s::boolean[]) AS u(id, current_version, closed) WHERE k.id = u.id"
    ),
    # The state a planner needs to continue one session from the store's own cursor.
    "session_keys": (
        "SELECT k.id, k.current_version, e.valid_from, k.closed FROM {schema}.projection_entity_keys k"
        " JOIN {schema}.projection_entities e ON e.id = k.current_version WHERE k.session_id = %s"
    ),
    "session_sources": "SELECT id FROM {schema}.projection_sources WHERE session_id = %s",
    "labels": "SELECT DISTINCT label FROM {schema}.projection_relations",
    "reset": (
        "TRUNCATE {schema}.projection_sessions, {schema}.projection_events, {schema}.projection_entity_keys,"
        " {schema}.projection_entities, {schema}.projection_sources, {schema}.projection_source_citations,"
        " {schema}.projection_feedback, {schema}.projection_failures, {schema}.projection_relations,"
        " {schema}.projection_event_citations, {schema}.projection_projected_relations"
    ),
    "counts": (
        "SELECT (SELECT count(*) FROM {schema}.projection_events),"
        " (SELECT count(*) FROM {schema}.projection_entities),"
        " (SELECT count(*) FROM {schema}.projection_entities WHERE valid_to IS NULL),"
        " (SELECT count(*) FROM {schema}.projection_relations),"
        " (SELECT count(*) FROM {schema}.projection_relations WHERE inferred),"
        " (SELECT count(*) FROM {schema}.projection_failures)"
    ),
}

_ENTITY_SELECT = ", ".join(f"e.{name}" for name in ENTITY_COLUMNS)
_VERSION_SELECT = ", ".join(f"v.{name}" for name in ENTITY_COLUMNS)
_RELATION_SELECT = "r.source_version, r.target_version, " + ", ".join(f"r.{name}" for name in RELATION_COLUMNS)

READS: dict[str, str] = {
    "history": (
        f"SELECT {_ENTITY_SELECT} FROM {{schema}}.projection_entities e"
        " JOIN {schema}.projection_entity_keys k ON k.id = e.key WHERE k.norm_name = %(n)s"
        " AND (%(t)s::text IS NULL OR k.entity_type = %(t)s) AND (%(s)s::text IS NULL OR k.session_id = %(s)s)"
        " ORDER BY e.source_event_seq, e.session_id, e.id"
    ),
    "as_of": (
        f"SELECT {_ENTITY_SELECT} FROM {{schema}}.projection_entities e"
        " WHERE e.valid_from <= %(t)s AND (e.valid_to IS NULL OR e.valid_to > %(t)s)"
        " AND (%(s)s::text IS NULL OR e.session_id = %(s)s)"
        " ORDER BY e.source_event_seq, e.session_id, e.id LIMIT %(limit)s"
    ),
}


def traverse_sql(*, typed: bool, as_of: bool) -> str:
    """Breadth-first traversal between identities as one recursive CTE, with the embedded store's semantics.

    ``walk`` expands (identity, depth) pairs; ``UNION`` (not ``UNION ALL``) drops a pair already produced, so
    the work is bounded by identities x depth however many paths there are, and the smallest depth of each
    identity is its breadth-first level. Only identities with a version valid at ``as_of`` (now by default)
    are entered, as in the hop-by-hop search. Each reached identity is reported with the first edge, in
    (outgoing before incoming, source seq, id) order, that links it to an identity of the previous level, and
    with its version valid at that time.
    """
    edge = (" AND r.relation_type = ANY(%(types)s)" if typed else "") + (
        " AND r.valid_from <= %(t)s AND (r.valid_to IS NULL OR r.valid_to > %(t)s)" if as_of else ""
    )
    validity = "v.valid_from <= %(t)s AND (v.valid_to IS NULL OR v.valid_to > %(t)s)" if as_of else "v.valid_to IS NULL"
    return (
        "WITH RECURSIVE walk(key, depth) AS ("
        ' SELECT k COLLATE "C", 0 FROM unnest(%(keys)s::text[]) AS k'
        " UNION"
        " SELECT n.key, w.depth + 1 FROM walk w CROSS JOIN LATERAL ("
        f"  SELECT r.target_key AS key FROM {{schema}}.projection_relations r WHERE r.source_key = w.key{edge}"
        "  UNION ALL"
        f"  SELECT r.source_key FROM {{schema}}.projection_relations r WHERE r.target_key = w.key{edge}) n"
        " WHERE w.depth < %(depth)s AND EXISTS (SELECT 1 FROM {schema}.projection_entities v"
        f"  WHERE v.key = n.key AND {validity})),"
        " level AS (SELECT key, min(depth) AS depth FROM walk GROUP BY key),"
        " via AS (SELECT DISTINCT ON (h.key) h.key, h.depth, e.direction, e.seq, e.id FROM level h"
        " CROSS JOIN LATERAL ("
        "  SELECT 0 AS direction, r.source_event_seq AS seq, r.id FROM {schema}.projection_relations r"
        f"  JOIN level p ON p.key = r.source_key AND p.depth = h.depth - 1 WHERE r.target_key = h.key{edge}"
        "  UNION ALL"
        "  SELECT 1, r.source_event_seq, r.id FROM {schema}.projection_relations r"
        f"  JOIN level p ON p.key = r.target_key AND p.depth = h.depth - 1 WHERE r.source_key = h.key{edge}) e"
        " WHERE h.depth > 0 ORDER BY h.key, e.direction, e.seq, e.id),"
        " version AS (SELECT DISTINCT ON (v.key) v.* FROM {schema}.projection_entities v"
        f" JOIN via ON via.key = v.key WHERE {validity} ORDER BY v.key, v.source_event_seq DESC)"
        f" SELECT via.depth, via.direction, {_VERSION_SELECT}, {_RELATION_SELECT}"
        " FROM via JOIN version v ON v.key = via.key JOIN {schema}.projection_relations r ON r.id = via.id"
        " ORDER BY via.depth, via.direction, via.seq, via.id LIMIT %(limit)s"
    )


def search_sql(*, words: bool, trigram_schema: str | None) -> str | None:
    """Keyword search over versions valid at ``as_of`` (now by default): ``tsvector`` matches of any query word
    in the name or summary, ranked by ``ts_rank_cd``, plus (with ``pg_trgm``) identities whose normalised name
    is similar to the whole query, ranked by similarity; the two scores add up."""
    validity = (
        "(%(t)s::text IS NULL AND v.valid_to IS NULL) OR (v.valid_from <= %(t)s AND "
        "(v.valid_to IS NULL OR v.valid_to > %(t)s))"
    )
    session = "(%(s)s::text IS NULL OR v.session_id = %(s)s)"
    parts = []
    if words:
        parts.append(
            "SELECT v.id, ts_rank_cd(v.search, q) AS score FROM {schema}.projection_entities v,"
            " to_tsquery('simple', %(words)s) q"
            f" WHERE v.search @@ q AND ({validity}) AND {session}"
        )
    if trigram_schema is not None:
        ops = f'"{trigram_schema}"'
        parts.append(
            f"SELECT v.id, {ops}.similarity(k.norm_name, %(name)s) AS score FROM {{schema}}.projection_entity_keys k"
            " JOIN {schema}.projection_entities v ON v.key = k.id"
            f" WHERE k.norm_name OPERATOR({ops}.%%) %(name)s AND ({validity}) AND {session}"
        )
    if not parts:
        return None
    return (
        f"WITH hits AS ({' UNION ALL '.join(parts)}), best AS (SELECT id, sum(score) AS score FROM hits GROUP BY id)"
        f" SELECT {_ENTITY_SELECT}, best.score FROM best JOIN {{schema}}.projection_entities e ON e.id = best.id"
        " ORDER BY best.score DESC, e.source_event_seq DESC, e.id LIMIT %(limit)s"
    )


# The canonical dump, table by table, in the embedded store's order and column layout (see kuzu_store).
DUMP_NODES: list[tuple[str, str]] = [
    ("Session", "SELECT id, projected_seq, projected_hash FROM {schema}.projection_sessions"),
    (
        "Event",
        "SELECT session_id || ':' || seq, session_id, seq, hash, prev_hash, type, actor, timestamp"
        " FROM {schema}.projection_events",
    ),
    ("EntityKey", f"SELECT {', '.join(KEY_COLUMNS)} FROM {{schema}}.projection_entity_keys"),
    ("Entity", f"SELECT {', '.join(ENTITY_COLUMNS)} FROM {{schema}}.projection_entities"),
    ("Source", "SELECT id, session_id, path FROM {schema}.projection_sources"),
    (
        "Feedback",
        "SELECT id, session_id, seq, entity_key, signal, weight, positive, timestamp FROM {schema}.projection_feedback",
    ),
    ("ExtractionFailure", "SELECT id, session_id, seq, event_type, reason FROM {schema}.projection_failures"),
]
_AUDIT = ", ".join(RELATION_COLUMNS)
_CITATION = ", ".join(name for name, _ in CITATION_COLUMNS)
DUMP_EDGES: dict[str, str] = {
    "CITES_SOURCE": (
        f"SELECT version_id, source_id, {_CITATION} FROM {{schema}}.projection_source_citations UNION ALL"
        f" SELECT event_id, source_id, {_CITATION} FROM {{schema}}.projection_event_citations"
    ),
    "PROJECTED_RELATION": (
        f"SELECT event_id, target_version, source, target, {_AUDIT} FROM {{schema}}.projection_projected_relations"
    ),
    "HAS_EVENT": "SELECT session_id, session_id || ':' || seq FROM {schema}.projection_events",
    "HAS_VERSION": "SELECT key, id FROM {schema}.projection_entities",
    "NEXT_EVENT": (
        "SELECT session_id || ':' || (seq - 1), session_id || ':' || seq FROM {schema}.projection_events WHERE seq > 1"
    ),
    "PREVIOUS_EVENT": (
        "SELECT session_id || ':' || seq, session_id || ':' || (seq - 1) FROM {schema}.projection_events WHERE seq > 1"
    ),
    "PREVIOUS_VERSION": (
        "SELECT id, previous_version FROM {schema}.projection_entities WHERE previous_version IS NOT NULL"
    ),
    "PROJECTED_ENTITY": "SELECT session_id || ':' || source_event_seq, id FROM {schema}.projection_entities",
    "RELATES": f"SELECT source_version, target_version, {_AUDIT} FROM {{schema}}.projection_relations",
    "SUPERSEDED_BY": (
        "SELECT previous_version, id FROM {schema}.projection_entities WHERE previous_version IS NOT NULL"
    ),
}
DUMP_TYPED = f"SELECT source_version, target_version, {_AUDIT} FROM {{schema}}.projection_relations WHERE label = %s"
