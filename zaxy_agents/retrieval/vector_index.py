"""Vector lane: exact float32 search over embedded event texts, embedded off the append path.

Vectors are stamped with the embedder's ``model_id`` (``model@version``); vectors of another id are never
compared (they are dropped on a model change and re-embedded by ``zaxy memory re-embed``). New texts queue up
as they are projected and are embedded in batches by :meth:`embed_pending` (a background thread in servers,
a bounded step before queries elsewhere); the queue length is the embedding lag reported in diagnostics.

With a durable vector store (PostgreSQL: ``projection_vectors``), a worker first loads what other workers have
embedded since the last row it saw (by the table's id) and embeds only what is still missing, storing it for
the others. Above ``ANN_THRESHOLD`` vectors an HNSW index (``usearch``, when installed) proposes candidates
that are re-ranked exactly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import numpy as np

from .ann import ANN_THRESHOLD, HnswIndex, ann_available
from .embeddings import EmbeddingProvider

EMBED_BATCH = 64


class DurableVectors(Protocol):
    """Where vectors outlive a process and are shared between workers."""

    def since(self, model: str, after_id: int) -> Iterator[tuple[int, tuple[str, int], np.ndarray]]: ...

    def save(self, model: str, keys: list[tuple[str, int]], vectors: np.ndarray) -> None: ...

    def drop(self, model: str) -> None: ...

    def close(self) -> None: ...


class VectorIndex:
    """A projection listener that embeds searchable event texts and answers cosine top-k queries."""

    name = "vectors"

    def __init__(
        self,
        embedder: EmbeddingProvider | None,
        *,
        durable: Callable[[], DurableVectors] | None = None,
        ann_threshold: int = ANN_THRESHOLD,
    ) -> None:
        self.embedder = embedder
        self._lock = threading.Lock()
        self._open_durable = durable
        self._durable: DurableVectors | None = None
        self.ann_threshold = ann_threshold
        self.reset()

    @property
    def model_id(self) -> str | None:
        return None if self.embedder is None else self.embedder.model_id

    def reset(self) -> None:
        self.keys: list[tuple[str, int]] = []
        self.known: set[tuple[str, int]] = set()
        self.rows: dict[tuple[str, int], int] = {}  # key -> row of ``matrix``
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.count = 0
        self.pending: list[tuple[tuple[str, int], str]] = []
        self.stamped_model: str | None = self.model_id
        self.synced_id = 0  # last row of the durable store already in memory
        self._ann: HnswIndex | None = None

    def durable(self) -> DurableVectors | None:
        """The shared vector store, opened on first use (only when an embedder is configured)."""
        if self._durable is None and self._open_durable is not None and self.embedder is not None:
            self._durable = self._open_durable()
        return self._durable

    def close(self) -> None:
        if self._durable is not None:
            self._durable.close()
            self._durable = None

    # ------------------------------------------------------------------ listener protocol
    def on_batch(self, batch: Any, catalog: Any) -> None:
        if self.embedder is None:
            return
        with self._lock:
            self.pending.extend(((doc.session, doc.seq), doc.text[:2000]) for doc in batch.searchable)

    def snapshot_state(self) -> dict[str, Any]:
        with self._lock:
            return {
                "model": self.stamped_model,
                "keys": self.keys[: self.count],
                "matrix": self.matrix[: self.count].copy(),
                "pending": list(self.pending),
                "synced_id": self.synced_id,
            }

    def restore_state(self, state: Any) -> bool:
        if not isinstance(state, dict) or "matrix" not in state:
            return False
        if state["model"] != self.model_id:
            return False  # another model: everything is re-embedded from the log
        self.keys, self.matrix, self.pending = list(state["keys"]), state["matrix"], list(state["pending"])
        self.known = set(self.keys)
        self.rows = {key: row for row, key in enumerate(self.keys)}
        self.count = len(self.keys)
        self.stamped_model = state["model"]
        self.synced_id = int(state.get("synced_id", 0))
        self._ann = None
        return True

    # ------------------------------------------------------------------ embedding
    def lag(self) -> int:
        return len(self.pending)

    def sync(self) -> int:
        """Load the vectors other workers stored since the last sync; returns how many were new here."""
        durable = self.durable()
        if durable is None or self.model_id is None:
            return 0
        keys, rows, last = [], [], self.synced_id
        for row_id, key, vector in durable.since(self.model_id, self.synced_id):
            last = row_id
            if key not in self.known:
                keys.append(key)
                rows.append(vector)
        with self._lock:
            self.synced_id = max(self.synced_id, last)
            fresh = [i for i, key in enumerate(keys) if key not in self.known]
            if fresh:
                self._append(np.vstack([rows[i] for i in fresh]).astype(np.float32), [keys[i] for i in fresh])
                self.pending = [item for item in self.pending if item[0] not in self.known]
        return len(fresh)

    def embed_pending(self, max_items: int | None = None) -> int:
        """Embed up to ``max_items`` queued texts (all when None); returns how many were embedded.

        Texts another worker already embedded (durable store) are loaded instead of embedded.
        """
        if self.embedder is None:
            return 0
        self.sync()
        done = 0
        while True:
            with self._lock:
                take = EMBED_BATCH if max_items is None else min(EMBED_BATCH, max_items - done)
                chunk = self.pending[:take] if take > 0 else []
            if not chunk:
                return done
            vectors = self.embedder.embed_documents([text for _, text in chunk])
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)
            keys = [key for key, _ in chunk]
            durable = self.durable()
            if durable is not None and self.model_id is not None:
                durable.save(self.model_id, keys, vectors)
            with self._lock:
                taken = {key for key, _ in chunk}
                fresh = [i for i, key in enumerate(keys) if key not in self.known]
                if fresh:
                    self._append(vectors[fresh], [keys[i] for i in fresh])
                self.pending = [item for item in self.pending if item[0] not in taken]
            done += len(chunk)

    def _append(self, vectors: np.ndarray, keys: list[tuple[str, int]]) -> None:
        if self.matrix.shape[1] != vectors.shape[1] and self.count == 0:
            self.matrix = np.zeros((max(256, len(keys)), vectors.shape[1]), dtype=np.float32)
        needed = self.count + len(keys)
        if needed > self.matrix.shape[0]:
            grown = np.zeros((max(needed, 2 * self.matrix.shape[0]), self.matrix.shape[1]), dtype=np.float32)
            grown[: self.count] = self.matrix[: self.count]
            self.matrix = grown
        self.matrix[self.count : needed] = vectors
        self.rows.update((key, self.count + offset) for offset, key in enumerate(keys))
        self.keys.extend(keys)
        self.known.update(keys)
        self.count = needed
        self._ann = None if self._ann is None or self._ann.size > self.count else self._ann

    def requeue_all(self, texts: list[tuple[tuple[str, int], str]]) -> None:
        """Drop every vector (also from the durable store) and queue ``texts`` for embedding (re-embed)."""
        durable = self.durable()
        if durable is not None and self.model_id is not None:
            durable.drop(self.model_id)
        with self._lock:
            self.keys, self.known, self.rows, self.count = [], set(), {}, 0
            self.matrix = np.zeros((0, 0), dtype=np.float32)
            self.pending = list(texts)
            self.stamped_model = self.model_id
            self._ann = None
            self.synced_id = 0

    # ------------------------------------------------------------------ search
    def search(self, query: str, k: int = 50, allowed: set[str] | None = None) -> list[tuple[tuple[str, int], float]]:
        if self.embedder is None:
            return []
        self.sync()
        if self.count == 0:
            return []
        vector = self.embedder.embed_query(query).astype(np.float32)
        norm = float(np.linalg.norm(vector))
        if norm == 0:
            return []
        vector = vector / norm
        with self._lock:
            if self.count > self.ann_threshold and ann_available():
                found = self._approximate(vector, k, allowed)
                if found is not None:
                    return found
            scores = self.matrix[: self.count] @ vector
            keys = self.keys[: self.count]
        if allowed is not None:
            mask = np.fromiter((key[0] in allowed for key in keys), dtype=bool, count=len(keys))
            scores = np.where(mask, scores, -np.inf)
        k = min(k, int(np.isfinite(scores).sum()))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(keys[i], float(scores[i])) for i in top if scores[i] > 0]

    def similarities(self, query: str, keys: list[tuple[str, int]]) -> dict[tuple[str, int], float]:
        """Cosine similarity of the query to each of ``keys`` that has a vector (for re-ranking candidates)."""
        if self.embedder is None or not keys:
            return {}
        self.sync()
        with self._lock:
            present = [(key, self.rows[key]) for key in keys if key in self.rows]
            if not present:
                return {}
            rows = self.matrix[[row for _, row in present]]
        vector = self.embedder.embed_query(query).astype(np.float32)
        norm = float(np.linalg.norm(vector))
        if norm == 0:
            return {}
        scores = rows @ (vector / norm)
        return {key: float(score) for (key, _), score in zip(present, scores, strict=True)}

    def _approximate(
        self, vector: np.ndarray, k: int, allowed: set[str] | None
    ) -> list[tuple[tuple[str, int], float]] | None:
        """HNSW candidates re-ranked exactly; ``None`` (fall back to exact) when too few survive the filter."""
        if self._ann is None:
            self._ann = HnswIndex(self.matrix.shape[1])
        self._ann.extend(self.matrix, self.count)
        rows = self._ann.candidates(vector, k)
        if allowed is not None:
            rows = np.array([row for row in rows if self.keys[row][0] in allowed], dtype=np.int64)
        if len(rows) < min(k, self.count):
            return None
        scores = self.matrix[rows] @ vector
        order = np.argsort(-scores, kind="stable")[:k]
        return [(self.keys[rows[i]], float(scores[i])) for i in order if scores[i] > 0]
