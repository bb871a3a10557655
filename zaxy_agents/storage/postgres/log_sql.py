"""The SQL of the PostgreSQL Eventloom (``{schema}`` is replaced by the quoted schema name once per log).

Kept apart from the class so the statements can be read, reviewed and explained together.
"""

from __future__ import annotations

PAGE_ROWS = 1000
PAGE_BYTES = 4 << 20  # a replay page stops after this many line bytes (at least one row), bounding memory
LAST_SEQ = 2**62
STATEMENTS = {
    "lock_head": "SELECT head_seq, head_hash FROM {schema}.eventloom_sessions WHERE session = %s FOR UPDATE",
    "create_head": (
        "INSERT INTO {schema}.eventloom_sessions (session, head_seq, head_hash) VALUES (%s, 0, %s) "
        "ON CONFLICT (session) DO NOTHING"
    ),
    "head": "SELECT head_seq, head_hash FROM {schema}.eventloom_sessions WHERE session = %s",
    # Moves the head from (old_seq, old_hash) and inserts the batch in one statement; 0 rows = head moved.
    "append": (
        "WITH head AS ("
        " UPDATE {schema}.eventloom_sessions SET head_seq = %(seq)s, head_hash = %(hash)s,"
        " size_bytes = size_bytes + %(size)s, updated_at = clock_timestamp()"
        " WHERE session = %(session)s AND head_seq = %(old_seq)s AND head_hash = %(old_hash)s RETURNING session)"
        " INSERT INTO {schema}.eventloom_events"
        " (session, seq, hash, prev_hash, event_id, type, actor, recorded_at, line)"
        " SELECT head.session, f[1]::bigint, f[2], f[3], f[4], f[5], f[6], f[7]::timestamptz,"
        " substring(%(lines)s::bytea FROM f[8]::integer FOR f[9]::integer)"
        " FROM head, unnest(string_to_array(%(rows)s::text, E'\\n')) AS r, LATERAL string_to_array(r, E'\\t') AS f"
    ),
    # The same statement committing without waiting for the WAL flush (set_config(..., true) is local to the
    # statement's transaction and still in force at its commit).
    "append_relaxed": "",
    "copy": (
        "COPY {schema}.eventloom_events (session, seq, hash, prev_hash, event_id, type, actor, recorded_at, line)"
        " FROM STDIN"
    ),
    "move_head": (
        "UPDATE {schema}.eventloom_sessions SET head_seq = %s, head_hash = %s, size_bytes = size_bytes + %s,"
        " updated_at = clock_timestamp() WHERE session = %s"
    ),
    "line": "SELECT line FROM {schema}.eventloom_events WHERE session = %s AND seq = %s",
    # Keyset page: rows from seq >= %s, stopping once the page holds PAGE_BYTES of lines (at least one row).
    "page": (
        "SELECT seq, line FROM (SELECT seq, line, sum(octet_length(line)) OVER (ORDER BY seq"
        " ROWS UNBOUNDED PRECEDING) - octet_length(line) AS before FROM {schema}.eventloom_events"
        " WHERE session = %s AND seq >= %s AND seq <= %s ORDER BY seq LIMIT %s) page"
        " WHERE before < %s ORDER BY seq"
    ),
    "verify_page": (
        "SELECT seq, hash, prev_hash, event_id, type, actor, recorded_at, line FROM (SELECT *,"
        " sum(octet_length(line)) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) - octet_length(line) AS before"
        " FROM {schema}.eventloom_events WHERE session = %s AND seq >= %s AND seq <= %s ORDER BY seq LIMIT %s)"
        " page WHERE before < %s ORDER BY seq"
    ),
    "hashes_and_types": (
        "SELECT e.session, e.seq, e.hash, e.type FROM unnest(%s::text[], %s::bigint[]) AS k(session, seq)"
        " JOIN {schema}.eventloom_events e ON e.session = k.session AND e.seq = k.seq"
    ),
    "lines_at": (
        "SELECT e.session, e.seq, e.line FROM unnest(%s::text[], %s::bigint[]) AS k(session, seq)"
        " JOIN {schema}.eventloom_events e ON e.session = k.session AND e.seq = k.seq"
    ),
    "scrub": "UPDATE {schema}.eventloom_events SET line = %s, event_id = %s WHERE session = %s AND seq = %s",
    "shrink": (
        "UPDATE {schema}.eventloom_sessions SET size_bytes = greatest(0, size_bytes - %s),"
        " updated_at = clock_timestamp() WHERE session = %s"
    ),
    "vacuum": "VACUUM {schema}.eventloom_events",
    "any_event": "SELECT EXISTS (SELECT 1 FROM {schema}.eventloom_events WHERE session = %s)",
    # One thread's events for several sessions at once (checkpoint list(None) loads the threads it returns).
    "sessions_lines": (
        "SELECT session, line FROM {schema}.eventloom_events WHERE session = ANY(%s) ORDER BY session, seq"
    ),
    "heads_with_prefix": (
        "SELECT session, head_seq, head_hash FROM {schema}.eventloom_sessions"
        " WHERE head_seq > 0 AND starts_with(session, %s)"
    ),
    "sessions": (
        "SELECT session, head_seq, head_hash, size_bytes,"
        " to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
        ' FROM {schema}.eventloom_sessions WHERE head_seq > 0 ORDER BY session COLLATE "C"'
    ),
    "totals": (
        "SELECT count(*), coalesce(sum(head_seq), 0), coalesce(sum(size_bytes), 0)"
        " FROM {schema}.eventloom_sessions WHERE head_seq > 0"
    ),
}

STATEMENTS["append_relaxed"] = (
    STATEMENTS["append"]
    .replace("WITH head AS (", "WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)), head AS (")
    .replace(" FROM head, unnest(", " FROM head, relaxed, unnest(")
)
assert STATEMENTS["append_relaxed"].count("relaxed") == 2
