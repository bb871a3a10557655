"""Vector lane: cosine search over embedded event texts, vectors on disk, embedded off the append path.

Vectors are stamped with the embedder's ``model_id`` (``model@version``); vectors of another model are never
compared (a model change re-queues every event, ``zaxy memory re-embed`` does it on demand). Projected events
are queued (``vectors_pending``: keys only, the text is read from the log when it is embedded) and embedded in
batches by :meth:`embed_pending` (a background thread in servers, a bounded step before queries elsewhere); the
queue length is the embedding lag reported in diagnostics.

Storage (tables ``vectors_*`` of the derived-state database, files next to it): the raw float32 rows of each
model (:mod:`.vector_files`, memory-mapped, appended then fsynced before their row count commits), the
``(session, seq) -> row`` map, the queue (:mod:`.vector_tables`). Exact search is the default; above
``ANN_THRESHOLD`` rows an HNSW graph built in the background (:mod:`.ann`) proposes candidates that are re-ranked
exactly.

With a durable vector store (PostgreSQL: ``projection_vectors``), a worker first loads what other workers have
embedded since the last row it saw (by the table's id) and embeds only what is still missing, storing it for
the others.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np

from zaxy_agents.errors import InvalidRequestError

from .ann import ANN_THRESHOLD, OVERSAMPLE, STALE_ROWS, AnnBuilder, AnnReader, ann_available
from .derived import DerivedStore
from .embeddings import EmbeddingProvider
from .vector_files import KEY, VectorFiles
from .vector_tables import PREFIX, EventKey, rows_of, schema, session_ids, session_names

EMBED_BATCH = 64  # texts per embedder call
STORE_BATCH = 1024  # vectors per write (one fsync of the files, one commit)
SCHEMA_VERSION = 1
EXACT_SCOPE_ROWS = 50_000  # a scope with fewer rows is searched exactly even when a graph exists


class DurableVectors(Protocol):
    """Where vectors outlive a process and are shared between workers."""

    def since(self, model: str, after_id: int) -> Iterator[tuple[int, tuple[str, int], np.ndarray]]: ...

    def save(self, model: str, keys: list[tuple[str, int]], vectors: np.ndarray) -> None: ...

    def drop(self, model: str) -> None: ...

    def close(self) -> None: ...


class VectorIndex:
    """Embeds searchable event texts and answers cosine top-k queries; a ``DerivedIndex``."""

    name = PREFIX
    schema_version = SCHEMA_VERSION

    def __init__(
        self,
        embedder: EmbeddingProvider | None,
        *,
        durable: Callable[[], DurableVectors] | None = None,
        ann_threshold: int = ANN_THRESHOLD,
    ) -> None:
        self.embedder = embedder
        self.ann_threshold = ann_threshold
        self.store: DerivedStore | None = None
        self._open_durable = durable
        self._durable: DurableVectors | None = None
        self._embed_lock = threading.Lock()
        self._files: VectorFiles | None = None
        self._reader: AnnReader | None = None
        self._builder: AnnBuilder | None = None
        # (session, seq) -> searchable text, from the log (the index keeps no text); set by the fabric.
        self.text_source: Callable[[list[EventKey]], dict[EventKey, str]] | None = None
        # Every indexed event (to queue when the configured model has no vectors yet); set by the fabric.
        self.key_source: Callable[[], list[EventKey]] | None = None
        self._ensured: str | None = None  # the model whose queue was checked in this process

    @property
    def model_id(self) -> str | None:
        return None if self.embedder is None else self.embedder.model_id

    # ------------------------------------------------------------------ derived-index protocol
    def create_schema(self, db: sqlite3.Connection) -> None:
        for statement in schema():
            db.execute(statement)

    def drop_schema(self, db: sqlite3.Connection) -> None:
        found = db.execute(f"SELECT name FROM sqlite_master WHERE name = '{PREFIX}_model'").fetchone()
        if found and self.store is not None:
            for model, dims in db.execute(f"SELECT model, dims FROM {PREFIX}_model").fetchall():
                VectorFiles(self.store.folder, model, dims).remove()
        for table in ("model", "meta", "session", "key", "pending"):
            db.execute(f"DROP TABLE IF EXISTS {PREFIX}_{table}")
        self._reset_files()
        self._ensured = None

    def attach(self, store: DerivedStore) -> None:
        self.store = store

    def apply(self, batch: Any, db: sqlite3.Connection, catalog: Any = None) -> None:
        if self.embedder is None or not batch.searchable:
            return
        db.executemany(
            f"INSERT INTO {PREFIX}_pending(session, seq) VALUES (?, ?)",
            [(doc.session, doc.seq) for doc in batch.searchable],
        )

    def committed(self) -> None:
        pass

    def rolled_back(self) -> None:
        pass

    # ------------------------------------------------------------------ state
    def _reader_db(self) -> sqlite3.Connection:
        if self.store is None:
            raise RuntimeError("the vector index is not attached to a derived store")
        return self.store.reader()

    def _model_row(self, db: sqlite3.Connection) -> tuple[int, int, int, int] | None:
        """``(dims, rows, ann_rows, synced_id)`` of the configured model."""
        row = db.execute(
            f"SELECT dims, rows, ann_rows, synced_id FROM {PREFIX}_model WHERE model = ?", (self.model_id,)
        ).fetchone()
        return None if row is None else tuple(row)  # type: ignore[return-value]

    def files(self, dims: int) -> VectorFiles:
        assert self.store is not None and self.model_id is not None
        if self._files is None or self._files.dims != dims or self._files.model != self.model_id:
            self._files = VectorFiles(self.store.folder, self.model_id, dims)
            self._reader = AnnReader(self._files)
            self._builder = AnnBuilder(self._files, self._committed_rows, self._publish_ann)
        return self._files

    @property
    def count(self) -> int:
        """Vectors of the configured model."""
        if self.embedder is None or self.store is None:
            return 0
        row = self._model_row(self._reader_db())
        return 0 if row is None else row[1]

    def mapped_bytes(self) -> int:
        """Bytes of the configured model's float32 vector files, which exact search maps into memory (``zaxy
        doctor`` compares them with the memory available: past a share of it, searches page from disk)."""
        if self.embedder is None or self.store is None:
            return 0
        row = self._model_row(self._reader_db())
        return 0 if row is None else int(row[0]) * int(row[1]) * 4

    def stored_models(self) -> dict[str, int]:
        """Vectors held per model (``zaxy doctor``: vectors of another model than the configured one are replaced
        on next use, every event re-embedded)."""
        if self.store is None:
            return {}
        db = self._reader_db()
        if db.execute(f"SELECT name FROM sqlite_master WHERE name = '{PREFIX}_model'").fetchone() is None:
            return {}
        return {str(model): int(rows) for model, rows in db.execute(f"SELECT model, rows FROM {PREFIX}_model")}

    def lag(self) -> int:
        if self.embedder is None or self.store is None:
            return 0
        return int(self._reader_db().execute(f"SELECT count(*) FROM {PREFIX}_pending").fetchone()[0])

    def durable(self) -> DurableVectors | None:
        """The shared vector store, opened on first use (only when an embedder is configured)."""
        if self._durable is None and self._open_durable is not None and self.embedder is not None:
            self._durable = self._open_durable()
        return self._durable

    def close(self) -> None:
        if self._builder is not None:
            self._builder.stop()
        if self._reader is not None:
            self._reader.close()
        if self._durable is not None:
            self._durable.close()
            self._durable = None

    def _reset_files(self) -> None:
        if self._builder is not None:
            self._builder.stop()
        self._files = self._reader = self._builder = None

    # ------------------------------------------------------------------ embedding
    def _ensure_model(self) -> None:
        """A newly configured model starts from every indexed event (queued once)."""
        assert self.store is not None
        if self._ensured == self.model_id:
            return
        current = self._reader_db().execute(f"SELECT value FROM {PREFIX}_meta WHERE key = 'model'").fetchone()
        if current is not None and current[0] == self.model_id:
            self._ensured = self.model_id
            return
        with self.store.write() as db:
            current = db.execute(f"SELECT value FROM {PREFIX}_meta WHERE key = 'model'").fetchone()
            if current is not None and current[0] == self.model_id:
                return
            db.execute(f"INSERT OR REPLACE INTO {PREFIX}_meta VALUES ('model', ?)", (self.model_id,))
            stale = db.execute(f"SELECT model, dims FROM {PREFIX}_model WHERE model != ?", (self.model_id,)).fetchall()
            for model, dims in stale:  # vectors of another model are never compared: their files go
                VectorFiles(self.store.folder, model, dims).remove()
                db.execute(f"DELETE FROM {PREFIX}_model WHERE model = ?", (model,))
                db.execute(f"DELETE FROM {PREFIX}_key WHERE model = ?", (model,))
            if self._model_row(db) is None and self.key_source is not None:
                db.execute(f"DELETE FROM {PREFIX}_pending")
                db.executemany(f"INSERT INTO {PREFIX}_pending(session, seq) VALUES (?, ?)", self.key_source())
        self._reset_files()
        self._ensured = self.model_id

    def sync(self) -> int:
        """Load the vectors other workers stored since the last sync; returns how many were new here."""
        durable = self.durable()
        if durable is None or self.model_id is None or self.store is None:
            return 0
        row = self._model_row(self._reader_db())
        after = 0 if row is None else row[3]
        keys, vectors, last = [], [], after
        for row_id, key, vector in durable.since(self.model_id, after):
            last = row_id
            keys.append(key)
            vectors.append(vector)
        if last == after:
            return 0
        matrix = np.vstack(vectors).astype(np.float32) if vectors else np.zeros((0, 0), np.float32)
        return self._store_rows(keys, matrix, synced_id=last)

    def embed_pending(self, max_items: int | None = None) -> int:
        """Embed up to ``max_items`` queued events (all when None); returns how many were embedded.

        Events another worker already embedded (durable store) are loaded instead of embedded.
        """
        if self.embedder is None or self.store is None:
            return 0
        with self._embed_lock:
            self._ensure_model()
            self.sync()
            done = 0
            while True:
                take = STORE_BATCH if max_items is None else min(STORE_BATCH, max_items - done)
                if take <= 0:
                    return done
                queued = (
                    self._reader_db()
                    .execute(f"SELECT id, session, seq FROM {PREFIX}_pending ORDER BY id LIMIT ?", (take,))
                    .fetchall()
                )
                if not queued:
                    return done
                keys = [(session, seq) for _, session, seq in queued]
                texts = self.text_source(keys) if self.text_source is not None else {}
                present = [key for key in keys if texts.get(key)]  # an erased event has no text left to embed
                vectors = np.zeros((0, 0), np.float32)
                if present:
                    batches = [present[i : i + EMBED_BATCH] for i in range(0, len(present), EMBED_BATCH)]
                    embed = self.embedder.embed_documents
                    vectors = np.vstack([np.asarray(embed([texts[k][:2000] for k in b]), np.float32) for b in batches])
                    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
                    vectors = (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)
                    durable = self.durable()
                    if durable is not None and self.model_id is not None:
                        durable.save(self.model_id, present, vectors)
                self._store_rows(present, vectors, done_ids=[row[0] for row in queued])
                done += len(queued)

    def _store_rows(
        self,
        keys: list[EventKey],
        vectors: np.ndarray,
        *,
        done_ids: Sequence[int] = (),
        synced_id: int | None = None,
    ) -> int:
        """Append vectors of keys not stored yet (files first, fsynced; then the rows commit); dequeue them."""
        assert self.store is not None and self.model_id is not None
        p = PREFIX
        with self.store.write() as db:
            row = self._model_row(db)
            if row is None and len(keys):
                db.execute(f"INSERT INTO {p}_model VALUES (?, ?, 0, 0, 0)", (self.model_id, int(vectors.shape[1])))
                row = self._model_row(db)
            stored = 0
            if len(keys) and row is not None:
                dims, rows = row[0], row[1]
                if int(vectors.shape[1]) != dims:  # one stamp, two shapes: another model under the same id
                    raise InvalidRequestError(
                        f"embedder {self.model_id} returned {vectors.shape[1]}-d vectors but this memory holds "
                        f"{dims}-d vectors stamped {self.model_id}",
                        field="model_id",
                        remediation="Give the new model its own 'model@version' stamp (its vectors are then "
                        "computed afresh, never compared with the old ones), or run `zaxy memory re-embed`.",
                    )
                sessions = session_ids(db, {session for session, _ in keys})
                known = rows_of(db, self.model_id, keys)
                fresh = [i for i, key in enumerate(keys) if key not in known]
                fresh = list({keys[i]: i for i in fresh}.values())  # a key queued twice is stored once
                if fresh:
                    table = np.array([(sessions[keys[i][0]], keys[i][1]) for i in fresh], dtype=KEY)
                    self.files(dims).write(rows, vectors[fresh], table)
                    db.executemany(
                        f"INSERT INTO {p}_key VALUES (?, ?, ?, ?)",
                        [(self.model_id, int(t["session"]), int(t["seq"]), rows + n) for n, t in enumerate(table)],
                    )
                    db.execute(f"UPDATE {p}_model SET rows = ? WHERE model = ?", (rows + len(fresh), self.model_id))
                    stored = len(fresh)
                if not done_ids:  # loaded from the durable store: dequeue by key
                    db.executemany(f"DELETE FROM {p}_pending WHERE session = ? AND seq = ?", list(dict.fromkeys(keys)))
            if synced_id is not None:
                db.execute(f"UPDATE {p}_model SET synced_id = ? WHERE model = ?", (synced_id, self.model_id))
            for start in range(0, len(done_ids), 500):
                chunk = ",".join(str(int(i)) for i in done_ids[start : start + 500])
                db.execute(f"DELETE FROM {p}_pending WHERE id IN ({chunk})")
        return stored

    def requeue_all(self, keys: Iterable[EventKey]) -> None:
        """Drop every vector (also from the durable store) and queue ``keys`` for embedding (re-embed)."""
        assert self.store is not None
        durable = self.durable()
        if durable is not None and self.model_id is not None:
            durable.drop(self.model_id)
        with self.store.write() as db:
            for model, dims in db.execute(f"SELECT model, dims FROM {PREFIX}_model").fetchall():
                VectorFiles(self.store.folder, model, dims).remove()
            for table in ("model", "key", "pending"):
                db.execute(f"DELETE FROM {PREFIX}_{table}")
            db.execute(f"INSERT OR REPLACE INTO {PREFIX}_meta VALUES ('model', ?)", (self.model_id,))
            db.executemany(f"INSERT INTO {PREFIX}_pending(session, seq) VALUES (?, ?)", list(keys))
        self._reset_files()
        self._ensured = self.model_id

    # ------------------------------------------------------------------ search
    def search(self, query: str, k: int = 50, allowed: set[str] | None = None) -> list[tuple[EventKey, float]]:
        if self.embedder is None or self.store is None:
            return []
        self.sync()
        db = self._reader_db()
        row = self._model_row(db)
        if row is None or row[1] == 0:
            return []
        dims, rows, ann_rows, _ = row
        vector = self._query_vector(query)
        if vector is None:
            return []
        vectors, keys = self.files(dims).view(rows)
        if allowed is not None:
            ids = list(session_ids(db, allowed, create=False).values())
            candidates = np.flatnonzero(np.isin(keys["session"], ids))
            if candidates.size <= EXACT_SCOPE_ROWS or not self._ann_ready(rows, ann_rows):
                return self._rank(db, vectors, keys, candidates, vector, k)
        elif not self._ann_ready(rows, ann_rows):
            return self._rank(db, vectors, keys, None, vector, k)
        assert self._reader is not None
        proposed = self._reader.candidates(vector, k * OVERSAMPLE * (1 if allowed is None else 4))
        if proposed is None:
            return self._rank(db, vectors, keys, None if allowed is None else candidates, vector, k)
        recent = np.arange(ann_rows, rows, dtype=np.int64)  # appended since the graph was built: scanned exactly
        pool = np.union1d(proposed[(proposed >= 0) & (proposed < rows)], recent)
        if allowed is not None:
            pool = np.intersect1d(pool, candidates)
            if pool.size < k:
                return self._rank(db, vectors, keys, candidates, vector, k)
        return self._rank(db, vectors, keys, pool, vector, k)

    def _ann_ready(self, rows: int, ann_rows: int) -> bool:
        """Whether a graph answers for these rows; starts a background build when one is due (never waits)."""
        if rows <= self.ann_threshold or not ann_available():
            return False
        assert self._builder is not None
        if rows - ann_rows >= STALE_ROWS or not self._files or not self._files.ann_path.exists():
            self._builder.start(ann_rows if self._files and self._files.ann_path.exists() else 0)
        return ann_rows > 0 and self._files is not None and self._files.ann_path.exists()

    def build_ann(self) -> int:
        """Build (or extend) the graph now, in this thread (benchmarks, maintenance); returns the rows it covers."""
        row = self._model_row(self._reader_db())
        if row is None or not ann_available():
            return 0
        self.files(row[0])
        assert self._builder is not None
        return self._builder.build(row[2] if self.files(row[0]).ann_path.exists() else 0)

    def _committed_rows(self) -> int:
        row = self._model_row(self._reader_db())
        return 0 if row is None else row[1]

    def _publish_ann(self, rows: int) -> None:
        assert self.store is not None
        with self.store.write() as db:
            db.execute(f"UPDATE {PREFIX}_model SET ann_rows = ? WHERE model = ?", (rows, self.model_id))

    def _query_vector(self, query: str) -> np.ndarray | None:
        assert self.embedder is not None
        vector = np.asarray(self.embedder.embed_query(query), dtype=np.float32)
        norm = float(np.linalg.norm(vector))
        return None if norm == 0 or not np.isfinite(norm) else vector / norm

    def _rank(
        self,
        db: sqlite3.Connection,
        vectors: np.ndarray,
        keys: np.ndarray,
        rows: np.ndarray | None,
        vector: np.ndarray,
        k: int,
    ) -> list[tuple[EventKey, float]]:
        scores = np.asarray(vectors @ vector if rows is None else vectors[rows] @ vector, dtype=np.float64)
        index = np.arange(len(scores)) if rows is None else rows
        live = keys["seq"][index] >= 0
        scores, index = scores[live], index[live]
        k = min(k, scores.size)
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((index[top], -scores[top]))]
        names = session_names(db, {int(keys["session"][index[i]]) for i in top})
        return [
            ((names[int(keys["session"][index[i]])], int(keys["seq"][index[i]])), float(scores[i]))
            for i in top
            if scores[i] > 0
        ]

    def similarities(self, query: str, keys: list[EventKey]) -> dict[EventKey, float]:
        """Cosine similarity of the query to each of ``keys`` that has a vector (for re-ranking candidates)."""
        if self.embedder is None or not keys or self.store is None:
            return {}
        self.sync()
        db = self._reader_db()
        row = self._model_row(db)
        if row is None:
            return {}
        found = rows_of(db, self.model_id, keys)
        if not found:
            return {}
        vector = self._query_vector(query)
        if vector is None:
            return {}
        present = [key for key in keys if key in found]
        vectors, _ = self.files(row[0]).view(row[1])
        scores = vectors[[found[key] for key in present]] @ vector
        return {key: float(score) for key, score in zip(present, scores, strict=True)}

    # ------------------------------------------------------------------ erasure
    def erase(self, db: sqlite3.Connection, session: str, seqs: Sequence[int], envelopes: object | None = None) -> None:
        """Zero the events' vectors in place (fsynced), forget their rows and queue entries; the graph (which
        holds copies of vectors) is deleted and rebuilt in the background without them."""
        assert self.store is not None
        wanted = sorted(set(int(s) for s in seqs))
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            db.execute(f"DELETE FROM {PREFIX}_pending WHERE session = ? AND seq IN ({marks})", [session, *chunk])
        sessions = session_ids(db, {session}, create=False)
        if session not in sessions:
            return
        for model, dims in db.execute(f"SELECT model, dims FROM {PREFIX}_model").fetchall():
            rows: list[int] = []
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows += [r[0] for r in db.execute(
                    f"SELECT row FROM {PREFIX}_key WHERE model = ? AND session = ? AND seq IN ({marks})",
                    [model, sessions[session], *chunk],
                )]  # fmt: skip
                db.execute(
                    f"DELETE FROM {PREFIX}_key WHERE model = ? AND session = ? AND seq IN ({marks})",
                    [model, sessions[session], *chunk],
                )
            if rows:
                files = VectorFiles(self.store.folder, model, dims)
                builder = self._builder if self._files is not None and self._files.model == model else None
                with builder.publish_lock if builder is not None else contextlib.nullcontext():
                    if builder is not None:
                        builder.cancel()  # a graph being built may hold the rows: it is discarded
                    files.zero(rows)
                    files.ann_path.unlink(missing_ok=True)
                db.execute(f"UPDATE {PREFIX}_model SET ann_rows = 0 WHERE model = ?", (model,))
        self._files = self._reader = None
