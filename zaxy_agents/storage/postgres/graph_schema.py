"""The graph projection's PostgreSQL schema, as named migrations of the ``projection`` component.

The tables hold the same graph as the embedded Kuzu store, in relational form: node tables become tables, and
the spine's edges that are functions of a row (``HAS_EVENT``, ``NEXT_EVENT``/``PREVIOUS_EVENT``,
``HAS_VERSION``, ``PROJECTED_ENTITY``, ``SUPERSEDED_BY``/``PREVIOUS_VERSION``) are columns of that row rather
than rows of their own; the canonical dump materialises them, so both backends produce the same dump and the
same rebuild digest for the same log.

Text that the embedded store compares as strings (timestamps, ids) is ``COLLATE "C"``: byte order is Python's
code-point order, so ``as_of`` comparisons and orderings agree with Kuzu and with the in-memory catalog.
Projected relations live in one table (``label`` names the typed relation) with both endpoints' identities
copied onto the row, so a traversal hop is one index lookup. ``projection_vectors`` keeps embeddings durably:
a worker embeds a text once and every other worker loads the vector by its ``id`` (a global sequence) instead
of embedding it again.

Optional extensions (``pg_trgm`` for fuzzy names) are not part of any migration: they are used when the
server has them (see :mod:`.graph_features`), so the schema is the same on every server.
"""

from __future__ import annotations

from zaxy_agents.storage.postgres.migrations import Migration

COMPONENT = "projection"
C = 'COLLATE "C"'

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        COMPONENT,
        "0001_graph_tables",
        (
            "CREATE TABLE {schema}.projection_sessions ("
            f" id text {C} PRIMARY KEY,"
            " projected_seq bigint NOT NULL,"
            " projected_hash text NOT NULL,"
            " updated_at timestamptz NOT NULL DEFAULT clock_timestamp())",
            "CREATE TABLE {schema}.projection_events ("
            f" session_id text {C} NOT NULL,"
            " seq bigint NOT NULL,"
            " hash text NOT NULL,"
            " prev_hash text NOT NULL,"
            " type text NOT NULL,"
            " actor text NOT NULL,"
            f" timestamp text {C} NOT NULL,"
            " PRIMARY KEY (session_id, seq))",
            "CREATE TABLE {schema}.projection_entity_keys ("
            f" id text {C} PRIMARY KEY,"
            f" session_id text {C} NOT NULL,"
            " name text NOT NULL,"
            f" norm_name text {C} NOT NULL,"
            " entity_type text NOT NULL,"
            f" current_version text {C} NOT NULL,"
            " closed boolean NOT NULL)",
            "CREATE INDEX projection_entity_keys_name ON {schema}.projection_entity_keys (norm_name, entity_type)",
            "CREATE TABLE {schema}.projection_entities ("
            f" id text {C} PRIMARY KEY,"
            f" key text {C} NOT NULL,"
            f" session_id text {C} NOT NULL,"
            " name text NOT NULL,"
            " entity_type text NOT NULL,"
            " summary text,"
            " properties text,"
            f" valid_from text {C} NOT NULL,"
            f" valid_to text {C},"
            " invalidated boolean NOT NULL,"
            " source_event_seq bigint NOT NULL,"
            " source_event_hash text NOT NULL,"
            " source_event_type text NOT NULL,"
            " source_thread text,"
            " importance double precision NOT NULL,"
            " source_path text,"
            " closed_by_seq bigint,"
            " invalidation_reason text,"
            " asserted boolean NOT NULL DEFAULT true,"
            f" previous_version text {C},"
            " search tsvector GENERATED ALWAYS AS"
            " (to_tsvector('simple', name || ' ' || coalesce(summary, ''))) STORED)",
            "CREATE INDEX projection_entities_key ON {schema}.projection_entities (key, source_event_seq)",
            "CREATE INDEX projection_entities_session ON {schema}.projection_entities (session_id, source_event_seq)",
            "CREATE INDEX projection_entities_search ON {schema}.projection_entities USING gin (search)",
            "CREATE TABLE {schema}.projection_sources ("
            f" id text {C} PRIMARY KEY,"
            f" session_id text {C} NOT NULL,"
            " path text NOT NULL)",
            "CREATE TABLE {schema}.projection_source_citations ("
            f" version_id text {C} NOT NULL,"
            f" source_id text {C} NOT NULL,"
            " line_start bigint,"
            " line_end bigint,"
            " checksum text,"
            " PRIMARY KEY (version_id, source_id))",
            "CREATE TABLE {schema}.projection_feedback ("
            f" id text {C} PRIMARY KEY,"
            f" session_id text {C} NOT NULL,"
            " seq bigint NOT NULL,"
            f" entity_key text {C} NOT NULL,"
            " signal text NOT NULL,"
            " weight double precision NOT NULL,"
            " positive boolean NOT NULL,"
            f" timestamp text {C} NOT NULL)",
            "CREATE TABLE {schema}.projection_failures ("
            f" id text {C} PRIMARY KEY,"
            f" session_id text {C} NOT NULL,"
            " seq bigint NOT NULL,"
            " event_type text NOT NULL,"
            " reason text NOT NULL)",
            "CREATE TABLE {schema}.projection_relations ("
            f" id text {C} PRIMARY KEY,"
            " label text NOT NULL,"
            " relation_type text NOT NULL,"
            f" source_version text {C} NOT NULL,"
            f" target_version text {C} NOT NULL,"
            f" source_key text {C} NOT NULL,"
            f" target_key text {C} NOT NULL,"
            f" session_id text {C} NOT NULL,"
            " inferred boolean NOT NULL,"
            " confidence double precision NOT NULL,"
            " inference_method text NOT NULL,"
            " evidence_session text NOT NULL,"
            " evidence_seq bigint NOT NULL,"
            " evidence_hash text NOT NULL,"
            f" valid_from text {C} NOT NULL,"
            f" valid_to text {C},"
            " source_event_seq bigint NOT NULL,"
            " source_event_hash text NOT NULL)",
            "CREATE INDEX projection_relations_source ON {schema}.projection_relations (source_key, relation_type)",
            "CREATE INDEX projection_relations_target ON {schema}.projection_relations (target_key, relation_type)",
            "CREATE TABLE {schema}.projection_vectors ("
            " id bigserial PRIMARY KEY,"
            f" session_id text {C} NOT NULL,"
            " seq bigint NOT NULL,"
            " model text NOT NULL,"
            " dims integer NOT NULL,"
            " vector bytea NOT NULL,"
            " UNIQUE (model, session_id, seq))",
            "CREATE INDEX projection_vectors_model ON {schema}.projection_vectors (model, id)",
        ),
    ),
)
