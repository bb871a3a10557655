"""Exact cosine search over item vectors: one float32 matrix, numpy only, no Python loop over items.

Each item owns one row per indexed text (InMemoryStore's layout: a field, or one row per element of an
``[*]`` path). Rows are L2-normalised on insert, so a query's cosine similarity is one matrix-vector product;
an item's score is the maximum over its rows (max pooling). Ties (to 1e-5) keep item order, as
InMemoryStore's stable sort does. Rows of deleted items are recycled; the matrix grows geometrically.
"""

from __future__ import annotations

import numpy as np

from zaxy_agents.errors import InvalidRequestError

_DIMS_REMEDIATION = "Set index['dims'] to the embedder's output size, or keep the embedder the index was built with."


class VectorIndex:
    def __init__(self, dims: int | None = None) -> None:
        self.dims = dims
        self._matrix: np.ndarray | None = None
        self._uid = np.zeros(0, dtype=np.int64)  # owning item uid per row, -1 for a free row
        self._namespace = np.zeros(0, dtype=np.int64)  # namespace birth per row (prefix masks)
        self._rank = np.zeros(0, dtype=np.int64)  # item order per row (tie-break)
        self._size = 0
        self._free: list[int] = []
        self._rows: dict[int, list[int]] = {}

    def __contains__(self, uid: int) -> bool:
        return uid in self._rows

    def __len__(self) -> int:
        return len(self._rows)

    def check(self, vectors: np.ndarray) -> None:
        """Refuse vectors of the wrong size before anything is written."""
        if len(vectors) and self.dims is not None and (vectors.ndim != 2 or vectors.shape[1] != self.dims):
            raise InvalidRequestError(
                f"embedding has {vectors.shape[-1]} dimensions, the index expects {self.dims}",
                field="index.dims",
                remediation=_DIMS_REMEDIATION,
            )

    def set(self, uid: int, namespace_birth: int, rank: int, vectors: np.ndarray) -> None:
        """Replace ``uid``'s rows with ``vectors`` (shape ``[k, dims]``; ``k == 0`` leaves it unindexed)."""
        self.remove(uid)
        if len(vectors) == 0:
            return
        vectors = np.asarray(vectors, dtype=np.float32)
        self.check(vectors)
        if self.dims is None:
            self.dims = int(vectors.shape[1])
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
        rows = [self._take_row() for _ in range(len(vectors))]
        assert self._matrix is not None
        self._matrix[rows] = vectors
        self._uid[rows] = uid
        self._namespace[rows] = namespace_birth
        self._rank[rows] = rank
        self._rows[uid] = rows

    def remove(self, uid: int) -> None:
        rows = self._rows.pop(uid, None)
        if rows:
            self._uid[rows] = -1
            self._free.extend(rows)

    def search(
        self,
        query: np.ndarray,
        count: int,
        *,
        uids: np.ndarray | None = None,
        namespaces: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top ``count`` items by max cosine similarity: ``(uids, scores)``, best first.

        ``uids`` / ``namespaces`` restrict the search to those items / namespace births.
        """
        if self._matrix is None or self._size == 0 or count <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        query = np.asarray(query, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(query))
        if query.shape[0] != self.dims:
            raise InvalidRequestError(
                f"query embedding has {query.shape[0]} dimensions, the index has {self.dims}",
                field="index.dims",
                remediation="Use the same embedder for queries and documents.",
            )
        owners = self._uid[: self._size]
        valid = owners >= 0
        if uids is not None:
            valid &= np.isin(owners, uids)
        if namespaces is not None:
            valid &= np.isin(self._namespace[: self._size], namespaces)
        rows = np.flatnonzero(valid)
        if rows.size == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        scores = self._matrix[rows] @ (query / norm if norm else query)
        # Order by score rounded past float32 noise, so exact ties (equal texts) fall back to item order.
        order = np.lexsort((self._rank[rows], -np.round(scores, 5)))
        ranked_uids = owners[rows][order]
        _, first = np.unique(ranked_uids, return_index=True)
        first.sort()
        first = first[:count]
        return ranked_uids[first], scores[order][first]

    def _take_row(self) -> int:
        if self._free:
            return self._free.pop()
        if self._matrix is None or self._size == len(self._matrix):
            self._grow()
        self._size += 1
        return self._size - 1

    def _grow(self) -> None:
        capacity = max(64, 2 * (0 if self._matrix is None else len(self._matrix)))
        matrix = np.zeros((capacity, self.dims or 0), dtype=np.float32)
        extra = capacity - len(self._uid)
        if self._matrix is not None:
            matrix[: len(self._matrix)] = self._matrix
        self._matrix = matrix
        self._uid = np.concatenate([self._uid, np.full(extra, -1, dtype=np.int64)])
        self._namespace = np.concatenate([self._namespace, np.zeros(extra, dtype=np.int64)])
        self._rank = np.concatenate([self._rank, np.zeros(extra, dtype=np.int64)])
