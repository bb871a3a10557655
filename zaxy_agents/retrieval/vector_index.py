"""Vector lane: exact float32 search over embedded event texts, embedded off the append path.

Vectors are stamped with the embedder's ``model_id`` (``model@version``); vectors of another id are never
compared (they are dropped on a model change and re-embedded by ``zaxy memory re-embed``). New texts queue up
as they are projected and are embedded in batches by :meth:`embed_pending` (a background thread in servers,
a bounded step before queries elsewhere); the queue length is the embedding lag reported in diagnostics.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from .embeddings import EmbeddingProvider

EMBED_BATCH = 64


class VectorIndex:
    """A projection listener that embeds searchable event texts and answers cosine top-k queries."""

    name = "vectors"

    def __init__(self, embedder: EmbeddingProvider | None) -> None:
        self.embedder = embedder
        self._lock = threading.Lock()
        self.reset()

    @property
    def model_id(self) -> str | None:
        return None if self.embedder is None else self.embedder.model_id

    def reset(self) -> None:
        self.keys: list[tuple[str, int]] = []
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.count = 0
        self.pending: list[tuple[tuple[str, int], str]] = []
        self.stamped_model: str | None = self.model_id

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
            }

    def restore_state(self, state: Any) -> bool:
        if not isinstance(state, dict) or "matrix" not in state:
            return False
        if state["model"] != self.model_id:
            return False  # another model: everything is re-embedded from the log
        self.keys, self.matrix, self.pending = list(state["keys"]), state["matrix"], list(state["pending"])
        self.count = len(self.keys)
        self.stamped_model = state["model"]
        return True

    # ------------------------------------------------------------------ embedding
    def lag(self) -> int:
        return len(self.pending)

    def embed_pending(self, max_items: int | None = None) -> int:
        """Embed up to ``max_items`` queued texts (all when None); returns how many were embedded."""
        if self.embedder is None:
            return 0
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
            with self._lock:
                self._append(vectors, [key for key, _ in chunk])
                del self.pending[: len(chunk)]
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
        self.keys.extend(keys)
        self.count = needed

    def requeue_all(self, texts: list[tuple[tuple[str, int], str]]) -> None:
        """Drop every vector and queue ``texts`` for embedding with the current model (re-embed)."""
        with self._lock:
            self.keys, self.count = [], 0
            self.matrix = np.zeros((0, 0), dtype=np.float32)
            self.pending = list(texts)
            self.stamped_model = self.model_id

    # ------------------------------------------------------------------ search
    def search(self, query: str, k: int = 50, allowed: set[str] | None = None) -> list[tuple[tuple[str, int], float]]:
        if self.embedder is None or self.count == 0:
            return []
        vector = self.embedder.embed_query(query).astype(np.float32)
        norm = float(np.linalg.norm(vector))
        if norm == 0:
            return []
        with self._lock:
            scores = self.matrix[: self.count] @ (vector / norm)
            keys = self.keys
        if allowed is not None:
            mask = np.fromiter((key[0] in allowed for key in keys), dtype=bool, count=len(keys))
            scores = np.where(mask, scores, -np.inf)
        k = min(k, int(np.isfinite(scores).sum()))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(keys[i], float(scores[i])) for i in top if scores[i] > 0]
