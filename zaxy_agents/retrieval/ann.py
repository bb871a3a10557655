"""Approximate nearest neighbours for the vector lane once exact search gets slow, built in the background.

Exact float32 search is the default: ~9-13 ms per query at 100k vectors here, exact by definition. Above
``ANN_THRESHOLD`` rows the lane asks an HNSW graph (``usearch``, optional: ``pip install 'zaxy-agents[ann]'``)
for ``OVERSAMPLE`` x k candidates and re-ranks them exactly against the float32 rows, and scans the rows
appended since the graph was built exactly too, so scores are always the exact cosine of the returned vectors.

The graph is never built inside a query: a query that finds it missing or stale starts :class:`AnnBuilder`
(one background thread per index) and answers exactly meanwhile. The builder reads the raw vector file, builds
or extends the graph, saves it to a temporary file and renames it over ``ann-<model>.usearch``; queries map the
file read-only (``view``). Parameters were chosen on WordLlama embeddings of LoCoMo texts (100k, real sentences;
benchmarks/vector_ann_bench.py): recall@10 against exact search >= 0.95 (measured 0.99).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .vector_files import VectorFiles

ANN_THRESHOLD = int(os.environ.get("ZAXY_ANN_THRESHOLD", "100000"))
CONNECTIVITY = 32  # HNSW M
EXPANSION_ADD = 128  # efConstruction
EXPANSION_SEARCH = 256  # ef
OVERSAMPLE = 3  # candidates per result, re-ranked exactly
STALE_ROWS = 20_000  # rows appended since the graph was built that trigger an extension in the background
ADD_CHUNK = 8192


def ann_available() -> bool:
    return importlib.util.find_spec("usearch") is not None


def new_index(dims: int) -> object:
    from usearch.index import Index

    return Index(ndim=dims, metric="ip", dtype="f16", connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD)


class AnnReader:
    """The saved graph of one model, mapped read-only; re-mapped when the builder replaced the file."""

    def __init__(self, files: VectorFiles) -> None:
        self.files = files
        self._index: object | None = None
        self._stamp: tuple[int, int] | None = None
        self._lock = threading.Lock()

    def candidates(self, vector: np.ndarray, count: int) -> np.ndarray | None:
        """Row numbers of about the ``count`` nearest rows, or None when there is no graph."""
        with self._lock:
            index = self._open()
            if index is None:
                return None
            found = index.search(vector, count)  # type: ignore[attr-defined]
            return np.asarray(found.keys, dtype=np.int64)

    def _open(self) -> object | None:
        path = self.files.ann_path
        try:
            stat = path.stat()
        except FileNotFoundError:
            self._index = self._stamp = None
            return None
        stamp = (stat.st_ino, stat.st_mtime_ns)
        if self._index is None or stamp != self._stamp:
            from usearch.index import Index

            index = Index.restore(str(path), view=True)
            if index is None:
                return None
            index.expansion_search = EXPANSION_SEARCH
            self._index, self._stamp = index, stamp
        return self._index

    def close(self) -> None:
        with self._lock:
            self._index = self._stamp = None


class AnnBuilder:
    """Builds or extends the graph of one model in a background thread; at most one build at a time."""

    def __init__(self, files: VectorFiles, committed_rows: Callable[[], int], publish: Callable[[int], None]) -> None:
        self.files = files
        self._committed_rows = committed_rows  # rows visible now (read from SQLite)
        self._publish = publish  # records how many rows the saved graph covers (in SQLite)
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()  # one build at a time (background or explicit)
        self.publish_lock = threading.Lock()  # taken to replace the graph file, and by an erasure to delete it
        self._cancelled = False
        self.error: str | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, covered: int) -> bool:
        """Start building in the background unless a build is running; False when one already was."""
        if self.running:
            return False
        self._stop.clear()
        self._cancelled = False
        self._thread = threading.Thread(target=self._run, args=(covered,), name="zaxy-ann-builder", daemon=True)
        self._thread.start()
        return True

    def build(self, covered: int = 0) -> int:
        """Build (or extend past ``covered`` rows) now, in this thread; returns the rows the graph covers."""
        with self._lock:
            return self._build(covered)

    def _build(self, covered: int) -> int:
        rows = self._committed_rows()
        vectors, keys = self.files.view(rows)
        index = new_index(self.files.dims)
        start = 0
        if covered and self.files.ann_path.exists():
            index.load(str(self.files.ann_path))  # type: ignore[attr-defined]
            start = covered
        for offset in range(start, rows, ADD_CHUNK):
            if self._stop.is_set():
                return covered
            stop = min(rows, offset + ADD_CHUNK)
            live = np.flatnonzero(keys["seq"][offset:stop] >= 0) + offset  # erased rows are zeros: left out
            if live.size:
                index.add(live.astype(np.uint64), np.asarray(vectors[live]), threads=1)  # type: ignore[attr-defined]
        name = f"{self.files.ann_path.name}.{os.getpid()}.{threading.get_ident()}.tmp"
        temporary = self.files.ann_path.with_name(name)
        index.save(str(temporary))  # type: ignore[attr-defined]
        with self.publish_lock:
            if self._cancelled:  # an erasure zeroed rows this graph may hold: it is never published
                temporary.unlink(missing_ok=True)
                self._cancelled = False
                return covered
            os.replace(temporary, self.files.ann_path)
        self._publish(rows)
        return rows

    def cancel(self) -> None:
        """Called with :attr:`publish_lock` held by an erasure: a build under way is discarded."""
        self._cancelled = self.running or self._lock.locked()
        self._stop.set()

    def _run(self, covered: int) -> None:
        try:
            self.build(covered)
            self.error = None
        except Exception as exc:  # a failed build leaves exact search in charge; reported in diagnostics
            self.error = f"{type(exc).__name__}: {exc}"
            with contextlib.suppress(OSError):
                for leftover in Path(self.files.folder).glob(f"{self.files.ann_path.name}.*.tmp"):
                    leftover.unlink()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=60)
            self._thread = None
