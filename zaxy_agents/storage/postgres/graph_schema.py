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
# The audit trail of a projected relation (RELATES and the seed's PROJECTED_RELATION provenance rows).
AUDIT_DDL = (
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
    " source_event_hash text NOT NULL)"
)

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
            f" target_key text {C} NOT NULL," + AUDIT_DDL,
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
    # The seed's provenance backbone (seed 002), mirrored from the Kuzu store: the event each version came from,
    # source-event provenance on citations, event -> source citations and event -> relation provenance rows.
    # Existing rows cannot be completed in place: the projection is emptied (derived data) and every worker
    # re-projects from the log by cursor. The views answer the seed's inspection questions in SQL.
    Migration(
        COMPONENT,
        "0002_seed_provenance_backbone",
        (
            "TRUNCATE {schema}.projection_sessions, {schema}.projection_events, {schema}.projection_entity_keys,"
            " {schema}.projection_entities, {schema}.projection_sources, {schema}.projection_source_citations,"
            " {schema}.projection_feedback, {schema}.projection_failures, {schema}.projection_relations",
            f"ALTER TABLE {{schema}}.projection_entities ADD COLUMN event_id text {C}",
            "ALTER TABLE {schema}.projection_source_citations ADD COLUMN source_event_seq bigint,"
            " ADD COLUMN source_event_hash text",
            "CREATE TABLE {schema}.projection_event_citations ("
            f" event_id text {C} NOT NULL,"
            f" source_id text {C} NOT NULL,"
            " line_start bigint,"
            " line_end bigint,"
            " checksum text,"
            " source_event_seq bigint NOT NULL,"
            " source_event_hash text NOT NULL,"
            " PRIMARY KEY (event_id, source_id))",
            "CREATE TABLE {schema}.projection_projected_relations ("
            f" id text {C} PRIMARY KEY,"
            f" event_id text {C} NOT NULL,"
            f" target_version text {C} NOT NULL,"
            " source text NOT NULL,"
            " target text NOT NULL,"
            " relation_type text NOT NULL," + AUDIT_DDL,
            "CREATE INDEX projection_projected_relations_event ON {schema}.projection_projected_relations (event_id)",
            # (:Session)-[:HAS_EVENT]->(:Event)-[:CITES_SOURCE]->(:Source)
            "CREATE VIEW {schema}.seed_event_source_paths AS SELECT ev.session_id, ev.seq, ev.type AS event_type,"
            " c.event_id, s.id AS source_id, s.path, c.line_start, c.line_end, c.checksum"
            " FROM {schema}.projection_events ev"
            " JOIN {schema}.projection_event_citations c ON c.event_id = ev.session_id || ':' || ev.seq"
            " JOIN {schema}.projection_sources s ON s.id = c.source_id",
            # (:Entity)-[:CITES_SOURCE]->(:Source)
            "CREATE VIEW {schema}.seed_entity_source_paths AS SELECT e.id AS version_id, e.name, e.entity_type,"
            " e.event_id, s.id AS source_id, s.path, c.line_start, c.line_end, c.checksum"
            " FROM {schema}.projection_entities e JOIN {schema}.projection_source_citations c ON c.version_id = e.id"
            " JOIN {schema}.projection_sources s ON s.id = c.source_id",
            # (:Entity)-[:SUPERSEDED_BY]->(:Entity)
            "CREATE VIEW {schema}.seed_superseded_paths AS SELECT p.id AS previous_version, p.name, p.entity_type,"
            " n.id AS next_version, p.valid_to FROM {schema}.projection_entities n"
            " JOIN {schema}.projection_entities p ON p.id = n.previous_version",
            # (:Entity {entity_type: 'task'})-->(observation:Entity)
            "CREATE VIEW {schema}.seed_task_observation_paths AS SELECT t.name AS task, r.relation_type,"
            " o.name AS observation, o.entity_type AS observation_type FROM {schema}.projection_relations r"
            " JOIN {schema}.projection_entities t ON t.id = r.source_version"
            " JOIN {schema}.projection_entities o ON o.id = r.target_version WHERE t.entity_type = 'task'",
            # ()-[r:RELATES {inferred: true}]->()
            "CREATE VIEW {schema}.seed_inferred_edges AS SELECT a.name AS source, b.name AS target, r.relation_type,"
            " r.confidence, r.inference_method, r.evidence_session, r.evidence_seq, r.evidence_hash"
            " FROM {schema}.projection_relations r JOIN {schema}.projection_entities a ON a.id = r.source_version"
            " JOIN {schema}.projection_entities b ON b.id = r.target_version WHERE r.inferred",
        ),
    ),
)
