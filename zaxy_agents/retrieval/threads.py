"""Pinning numpy's BLAS threads while a query runs.

A query does small matrix products (query expansion against the vocabulary's vectors, the re-rank's cosines,
the exact vector scan). OpenBLAS spreads each over every core, and on a busy 2-core machine the threads wait for
each other: the WordLlama query path's p95 was 27-35 ms with free threads and 8.9 ms with one (issue 23). So
:func:`query_threads` limits BLAS to ``ZAXY_QUERY_BLAS_THREADS`` threads (default 1; ``0`` leaves them alone)
for the duration of a query, and gives the process its own setting back when the last concurrent query ends:
a library must not change a user's process-wide thread settings for good. Uses ``threadpoolctl``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.shared_scope import SharedScope

ENV = "ZAXY_QUERY_BLAS_THREADS"
DEFAULT_THREADS = 1

_controller: Any = None


def configured_threads() -> int:
    """The BLAS thread count for queries (``0`` = not pinned), from ``ZAXY_QUERY_BLAS_THREADS``."""
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return DEFAULT_THREADS
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise InvalidRequestError(
            f"{ENV}={raw!r} is not a non-negative integer",
            field=ENV,
            remediation=f"Set {ENV} to the BLAS threads a query may use (1 by default; 0 leaves them alone).",
        )
    return value


def _limit() -> Callable[[], None]:
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()  # scans the loaded BLAS libraries once
    return _controller.limit(limits=configured_threads(), user_api="blas").restore_original_limits


_LIMIT = SharedScope(_limit)


@contextmanager
def query_threads() -> Iterator[None]:
    """Limit BLAS threads while the block runs; nested and concurrent uses share one limit."""
    if configured_threads() == 0:
        yield
        return
    with _LIMIT.held():
        yield


def blas_threads() -> list[int]:
    """The current thread count of each loaded BLAS library (for tests and diagnostics)."""
    from threadpoolctl import threadpool_info

    return [lib["num_threads"] for lib in threadpool_info() if lib.get("user_api") == "blas"]
