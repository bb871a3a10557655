"""Embedding vectors on disk: one raw float32 file per model, read through a memory map.

``vectors-<slug>.f32`` holds row-major float32 rows of ``dims`` values; ``vectors-<slug>.keys`` the event of
each row (``session`` id int32, ``seq`` int64). Rows are only appended, written (and fsynced) *before* the row
count that makes them visible commits in SQLite (``vectors_model.rows``): bytes past that count are a
crashed append and are overwritten by the next one. Opening maps the files (O(1)); an exact search reads the
rows it scores. An erased row is overwritten with zeros in place (and fsynced): no byte of its vector stays.
Data only: nothing here is ever unpickled.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import numpy as np

KEY = np.dtype([("session", "<i4"), ("seq", "<i8")])


def slug(model: str) -> str:
    """A file-name-safe, collision-free name for a model id."""
    readable = re.sub(r"[^A-Za-z0-9_.-]", "-", model)[:40]
    return f"{readable}-{hashlib.sha256(model.encode()).hexdigest()[:10]}"


class VectorFiles:
    """The raw vector and key files of one model."""

    def __init__(self, folder: Path, model: str, dims: int) -> None:
        self.folder, self.model, self.dims = Path(folder), model, dims
        name = slug(model)
        self.vectors_path = self.folder / f"vectors-{name}.f32"
        self.keys_path = self.folder / f"vectors-{name}.keys"
        self.ann_path = self.folder / f"ann-{name}.usearch"
        self._maps: tuple[int, np.memmap, np.memmap] | None = None

    def write(self, start: int, vectors: np.ndarray, keys: np.ndarray) -> None:
        """Write rows ``start ..`` of both files and fsync them (the caller then commits the new row count)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for path, data, width in (
            (self.vectors_path, np.ascontiguousarray(vectors, dtype="<f4"), self.dims * 4),
            (self.keys_path, np.ascontiguousarray(keys, dtype=KEY), KEY.itemsize),
        ):
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                os.pwrite(fd, data.tobytes(), start * width)
                os.fsync(fd)
            finally:
                os.close(fd)
        self._maps = None

    def zero(self, rows: list[int]) -> None:
        """Overwrite ``rows`` with zeros (vectors) and (-1, -1) (keys), in place, fsynced."""
        if not rows:
            return
        blank_key = np.array([(-1, -1)], dtype=KEY).tobytes()
        for path, width, blank in (
            (self.vectors_path, self.dims * 4, bytes(self.dims * 4)),
            (self.keys_path, KEY.itemsize, blank_key),
        ):
            if not path.exists():
                continue
            fd = os.open(path, os.O_RDWR)
            try:
                for row in rows:
                    os.pwrite(fd, blank, row * width)
                os.fsync(fd)
            finally:
                os.close(fd)
        self._maps = None

    def view(self, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """Read-only maps of the first ``rows`` vectors and keys (empty arrays when there are none)."""
        if rows <= 0 or not self.vectors_path.exists():
            return np.zeros((0, self.dims), dtype=np.float32), np.zeros(0, dtype=KEY)
        cached = self._maps
        if cached is None or cached[0] != rows:
            vectors = np.memmap(self.vectors_path, dtype="<f4", mode="r", shape=(rows, self.dims))
            keys = np.memmap(self.keys_path, dtype=KEY, mode="r", shape=(rows,))
            cached = self._maps = (rows, vectors, keys)
        return cached[1], cached[2]

    def remove(self) -> None:
        """Delete every file of this model (a re-embed, or a model no longer used)."""
        self._maps = None
        for path in (self.vectors_path, self.keys_path, self.ann_path):
            path.unlink(missing_ok=True)
