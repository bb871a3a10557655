"""Embeddings kept durably in PostgreSQL, shared by every worker (``projection_vectors``).

Embedding is the slowest step of the projection (tens of texts per second on a small CPU), so a text is
embedded once per deployment: the worker that embeds it stores the float32 vector under its model id and
``(session, seq)``, and every other worker loads it by the table's ``id`` (a global sequence: "everything
after the last id I saw") instead of embedding it again. Searching stays in each worker's memory (see
``retrieval.vector_index``), so no server extension is needed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import psycopg

from zaxy_agents.storage.postgres.connect import acquire_pool, probe_connection, release_pool, unavailable
from zaxy_agents.storage.postgres.dsn import PostgresOptions
from zaxy_agents.storage.postgres.migrations import ensure_schema

from .graph_schema import MIGRATIONS

PAGE_ROWS = 5000


class PostgresVectorStore:
    """Append-only vector rows per model; ``since(model, id)`` pages through what other workers stored."""

    def __init__(self, dsn: str, *, schema: str | None = None, options: PostgresOptions | None = None) -> None:
        self.dsn = dsn
        self.options = options or PostgresOptions.from_env(schema=schema)
        table = f'"{self.options.schema}".projection_vectors'
        self._since = (
            f"SELECT id, session_id, seq, vector FROM {table} WHERE model = %s AND id > %s ORDER BY id LIMIT %s"
        )
        self._save = (
            f"INSERT INTO {table} (session_id, seq, model, dims, vector)"
            " SELECT s, q, %s, %s, v FROM unnest(%s::text[], %s::bigint[], %s::bytea[]) AS u(s, q, v)"
            " ON CONFLICT (model, session_id, seq) DO NOTHING"
        )
        self._drop = f"DELETE FROM {table} WHERE model = %s"
        probe = probe_connection(dsn, self.options)
        try:
            ensure_schema(probe, self.options.schema, MIGRATIONS, "auto")
        except psycopg.Error as exc:
            raise unavailable(dsn, exc) from exc
        finally:
            probe.close()
        self._pool = acquire_pool(dsn, self.options, name=f"zaxy-{self.options.schema}")
        self._closed = False

    @contextlib.contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            raise unavailable(self.dsn, exc) from exc

    def since(self, model: str, after_id: int) -> Iterator[tuple[int, tuple[str, int], np.ndarray]]:
        """``(id, (session, seq), vector)`` stored for ``model`` after ``after_id``, in id order."""
        while True:
            with self._connection() as conn:
                rows = conn.execute(self._since, (model, after_id, PAGE_ROWS)).fetchall()
            for row_id, session, seq, blob in rows:
                yield int(row_id), (str(session), int(seq)), np.frombuffer(bytes(blob), dtype="<f4")
            if len(rows) < PAGE_ROWS:
                return
            after_id = int(rows[-1][0])

    def save(self, model: str, keys: list[tuple[str, int]], vectors: np.ndarray) -> None:
        """Store vectors (rows another worker stored first are kept as they are: same text, same model)."""
        if not keys:
            return
        blobs = [np.ascontiguousarray(row, dtype="<f4").tobytes() for row in vectors]
        with self._connection() as conn:
            conn.execute(self._save, (model, int(vectors.shape[1]), [s for s, _ in keys], [q for _, q in keys], blobs))

    def drop(self, model: str) -> None:
        """Forget every vector of ``model`` (``zaxy memory re-embed``)."""
        with self._connection() as conn:
            conn.execute(self._drop, (model,))

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            release_pool(self._pool)
