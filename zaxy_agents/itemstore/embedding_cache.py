"""A persistent, content-addressed cache of document embeddings (rebuildable derived state).

Vectors are derived from the log, not part of it: after a restart the store would have to re-embed every
item, which costs real money with a hosted model. This cache keeps ``sha256(text)`` -> vector per
``model_id`` in ``<eventloom>/.zaxy/embeddings/<model>.<dims>.vec`` as fixed-size records
(16-byte digest + float32 vector), appended under an exclusive ``flock`` so several processes can share it.
A torn final record (a crash mid-append) is ignored and trimmed by the next writer. Deleting the folder only
costs re-embedding.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

_DIGEST_BYTES = 16


def text_digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()[:_DIGEST_BYTES]


class EmbeddingCache:
    """``embed(texts)`` through the cache: only texts never embedded by this model reach the embedder."""

    def __init__(self, model_id: str, directory: Path | None) -> None:
        self.model_id = model_id
        self.directory = directory
        self._vectors: dict[bytes, np.ndarray] = {}
        self._lock = threading.Lock()
        self._loaded = False
        self._slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", model_id).strip("-.") or "model"

    def embed(self, texts: Sequence[str], embed_documents: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """Vectors for ``texts`` (one row each), embedding each distinct missing text once."""
        digests = [text_digest(text) for text in texts]
        with self._lock:
            self._load()
            missing: dict[bytes, str] = {}
            for digest, text in zip(digests, texts, strict=True):
                if digest not in self._vectors:
                    missing.setdefault(digest, text)
        if missing:
            fresh = np.asarray(embed_documents(list(missing.values())), dtype=np.float32)
            if fresh.ndim != 2 or len(fresh) != len(missing):
                raise ValueError(f"embedder returned shape {fresh.shape} for {len(missing)} texts")
            with self._lock:
                for digest, vector in zip(missing, fresh, strict=True):
                    self._vectors[digest] = vector
                self._append(list(missing), fresh)
        with self._lock:
            return np.stack([self._vectors[digest] for digest in digests]) if digests else np.zeros((0, 0), np.float32)

    def forget(self) -> None:
        """Drop the vectors held in memory (after an erasure removed the cache files); read again on next use."""
        with self._lock:
            self._vectors.clear()
            self._loaded = False

    def _file(self, dims: int) -> Path | None:
        return None if self.directory is None else self.directory / f"{self._slug}.{dims}.vec"

    def _load(self) -> None:
        """Read every persisted record of this model (once; files are per vector size)."""
        if self._loaded or self.directory is None:
            self._loaded = True
            return
        self._loaded = True
        for path in sorted(self.directory.glob(f"{glob_escape(self._slug)}.*.vec")):
            try:
                dims = int(path.name[len(self._slug) + 1 : -len(".vec")])
                data = path.read_bytes()
            except (ValueError, OSError):
                continue
            record = _DIGEST_BYTES + 4 * dims
            count = len(data) // record
            if dims <= 0 or not count:
                continue
            raw = np.frombuffer(data[: count * record], dtype=np.uint8).reshape(count, record)
            matrix = raw[:, _DIGEST_BYTES:].copy().view(np.float32)
            for row in range(count):
                self._vectors.setdefault(bytes(raw[row, :_DIGEST_BYTES]), matrix[row])

    def _append(self, digests: list[bytes], vectors: np.ndarray) -> None:
        path = self._file(int(vectors.shape[1]))
        if path is None:
            return
        record = _DIGEST_BYTES + 4 * int(vectors.shape[1])
        payload = b"".join(
            digest + vector.astype(np.float32).tobytes() for digest, vector in zip(digests, vectors, strict=True)
        )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError:
            return  # a read-only folder only costs re-embedding
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            if size % record:
                os.ftruncate(fd, size - size % record)  # a crash left a partial record
            os.write(fd, payload)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)
