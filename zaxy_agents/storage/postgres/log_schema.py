"""The Eventloom's PostgreSQL schema, as named migrations (never edit a released one: add a new one).

``eventloom_events`` holds one row per event. ``line`` is the exact canonical JSON of the envelope (the JSONL
line without its newline), so exports are byte-identical and ``verify`` recomputes the chain from the very
bytes that were hashed; the other columns are a queryable copy of envelope fields that ``verify`` checks
against ``line``. ``eventloom_sessions`` holds one head row per session: appends lock it (``FOR UPDATE``) to
serialise writers of that session across processes and hosts, and it answers ``head``/``sessions`` in O(1).
"""

from __future__ import annotations

from zaxy_agents.storage.postgres.migrations import Migration

COMPONENT = "eventloom"

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        COMPONENT,
        "0001_events_and_session_heads",
        (
            "CREATE TABLE {schema}.eventloom_sessions ("
            " session text PRIMARY KEY,"
            " head_seq bigint NOT NULL CHECK (head_seq >= 0),"
            " head_hash text NOT NULL,"
            " size_bytes bigint NOT NULL DEFAULT 0,"
            " created_at timestamptz NOT NULL DEFAULT clock_timestamp(),"
            " updated_at timestamptz NOT NULL DEFAULT clock_timestamp())",
            "CREATE TABLE {schema}.eventloom_events ("
            " session text NOT NULL,"
            " seq bigint NOT NULL CHECK (seq >= 1),"
            " hash text NOT NULL,"
            " prev_hash text NOT NULL,"
            " event_id text NOT NULL,"
            " type text NOT NULL,"
            " actor text NOT NULL,"
            " recorded_at timestamptz NOT NULL,"
            " line bytea NOT NULL,"
            " PRIMARY KEY (session, seq))",
        ),
    ),
)
