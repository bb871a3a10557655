"""A process-wide setting held while any thread is inside a block, undone when the last one leaves.

Some settings have no per-thread switch (CPython's cyclic collector, BLAS thread pools), yet a library may change
them only for as long as its own work runs: nested and concurrent blocks share one application of the setting,
counted under a lock, and the undo returned by the first application runs when the last block ends. Stdlib only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class SharedScope:
    """Applies a setting on the first entry of :meth:`held` and undoes it after the last exit."""

    def __init__(self, apply: Callable[[], Callable[[], None]]) -> None:
        """``apply()`` changes the setting and returns the callable that restores what it found."""
        self._apply = apply
        self._lock = threading.Lock()
        self._depth = 0
        self._undo: Callable[[], None] | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._undo = self._apply()
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0 and self._undo is not None:
                    undo, self._undo = self._undo, None
                    undo()
