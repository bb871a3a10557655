"""Optional PostgreSQL extensions the projection uses when the server has them, and what it says otherwise.

* ``pg_trgm`` — fuzzy matching of entity names (a trigram GIN index on the normalised name). It is a trusted
  extension (PostgreSQL 13+): the database owner may create it, so the store does so when it can. Without it
  keyword search still works (``tsvector``), only misspelt names are not matched.
* ``vector`` (pgvector) — detected and reported only. Embeddings are stored as float32 bytes in
  ``projection_vectors`` and searched in each worker's memory (exact numpy, an HNSW index above a size
  threshold), kept in step with the table by its id; server-side search through pgvector is not used by this
  version (no server at hand to verify it on).

Neither is part of a migration, so the schema (and its checksums) is the same on every server; the state is
reported by ``zaxy backend status``.
"""

from __future__ import annotations

from typing import Any

import psycopg

from zaxy_agents.storage.postgres.migrations import render

TRIGRAM_INDEX = "projection_entity_keys_trgm"


class Features:
    """Which optional extensions this store uses, and a sentence per extension for status reports."""

    __slots__ = ("notes", "trigram_schema", "vector_schema")

    def __init__(self) -> None:
        self.trigram_schema: str | None = None  # schema holding pg_trgm's functions, when usable
        self.vector_schema: str | None = None  # schema holding pgvector's type, when installed
        self.notes: dict[str, str] = {}


def detect_features(conn: psycopg.Connection[Any], schema: str, *, create: bool) -> Features:
    """Find (and with ``create``, install where allowed) the optional extensions and their indexes.

    Runs under the migrations' advisory lock so concurrent workers never race on ``CREATE``.
    """
    features = Features()
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"zaxy-migrations:{schema}",))
        installed = dict(
            conn.execute(
                "SELECT e.extname, n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
                " WHERE e.extname IN ('pg_trgm', 'vector')"
            ).fetchall()
        )
        available = {
            row[0]
            for row in conn.execute(
                "SELECT name FROM pg_available_extensions WHERE name IN ('pg_trgm', 'vector')"
            ).fetchall()
        }
        if "pg_trgm" not in installed and "pg_trgm" in available and create:
            try:
                with conn.transaction():
                    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
                installed = dict(
                    conn.execute(
                        "SELECT e.extname, n.nspname FROM pg_extension e JOIN pg_namespace n"
                        " ON n.oid = e.extnamespace WHERE e.extname IN ('pg_trgm', 'vector')"
                    ).fetchall()
                )
            except psycopg.Error as exc:
                features.notes["pg_trgm"] = (
                    f"available but not installed ({type(exc).__name__}): fuzzy name matching is off; "
                    "a superuser or the database owner can run CREATE EXTENSION pg_trgm"
                )
        if "pg_trgm" in installed:
            trigram = installed["pg_trgm"]
            exists = conn.execute("SELECT to_regclass(%s)", (f'"{schema}".{TRIGRAM_INDEX}',)).fetchone()
            if exists and exists[0] is not None:
                features.trigram_schema = trigram
            elif create and _has_table(conn, schema, "projection_entity_keys"):
                try:
                    with conn.transaction():
                        conn.execute(
                            render(
                                f"CREATE INDEX IF NOT EXISTS {TRIGRAM_INDEX} ON {{schema}}.projection_entity_keys"
                                f' USING gin (norm_name "{trigram}".gin_trgm_ops)',
                                schema,
                            )
                        )
                    features.trigram_schema = trigram
                except psycopg.Error as exc:  # e.g. a read-only replica: the primary creates it
                    features.notes["pg_trgm"] = f"installed, but the trigram index could not be created here ({exc})"
            else:
                features.notes["pg_trgm"] = "installed; the trigram index is created on the next write-enabled start"
            if features.trigram_schema is not None:
                features.notes["pg_trgm"] = f"installed in schema {trigram}: fuzzy entity-name matching is on"
        elif "pg_trgm" not in features.notes:
            features.notes["pg_trgm"] = "not available on this server: fuzzy name matching is off (tsvector works)"
        if "vector" in installed:
            features.vector_schema = installed["vector"]
            features.notes["pgvector"] = (
                f"installed in schema {installed['vector']} but not used by this version: vectors are searched in "
                "each worker's memory"
            )
        else:
            features.notes["pgvector"] = (
                "not installed on this server: vectors are stored in projection_vectors and searched in each "
                "worker's memory, kept in step by id"
            )
    return features


def _has_table(conn: psycopg.Connection[Any], schema: str, table: str) -> bool:
    row = conn.execute("SELECT to_regclass(%s)", (f'"{schema}".{table}',)).fetchone()
    return bool(row and row[0] is not None)
