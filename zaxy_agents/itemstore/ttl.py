"""TTL settings and the background sweeper (LangGraph's ``TTLConfig``; minutes everywhere, as upstream)."""

from __future__ import annotations

import concurrent.futures
import logging
import math
import threading
from collections.abc import Callable, Mapping
from typing import Any

from zaxy_agents.errors import InvalidRequestError

logger = logging.getLogger(__name__)

# A read refresh is written to the log only once it moves the expiry by this share of the TTL, so hot items
# do not append an event per read; the in-memory expiry is always exact.
TOUCH_COALESCE_SHARE = 0.1
MAX_TTL_MINUTES = 1000 * 365 * 24 * 60  # expiry must stay a representable date


def check_ttl(ttl: Any) -> float | None:
    if ttl is None:
        return None
    if (
        isinstance(ttl, bool)
        or not isinstance(ttl, (int, float))
        or not math.isfinite(ttl)
        or not 0 <= ttl <= MAX_TTL_MINUTES
    ):
        raise InvalidRequestError(
            f"ttl must be a number of minutes between 0 and {MAX_TTL_MINUTES}, got {ttl!r}",
            field="ttl",
            remediation="Pass minutes as a number (ttl=5 expires five minutes after the last access), or None.",
        )
    return float(ttl)


def check_ttl_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    if not config:
        return {}
    if not isinstance(config, Mapping):
        raise InvalidRequestError(
            "ttl must be a TTLConfig mapping", field="ttl", remediation="Pass e.g. {'default_ttl': 60}."
        )
    known = {"refresh_on_read", "omit_expired", "default_ttl", "sweep_interval_minutes"}
    unknown = set(config) - known
    if unknown:
        raise InvalidRequestError(
            f"unknown TTL settings: {', '.join(sorted(unknown))}",
            field="ttl",
            remediation=f"Use {', '.join(sorted(known))}.",
        )
    check_ttl(config.get("default_ttl"))
    interval = config.get("sweep_interval_minutes")
    if interval is not None and (check_ttl(interval) or 0) <= 0:
        raise InvalidRequestError(
            "sweep_interval_minutes must be positive", field="ttl.sweep_interval_minutes", remediation="Use e.g. 5."
        )
    return dict(config)


class TTLSweeper:
    """Calls ``sweep()`` every ``interval_minutes`` on a daemon thread until stopped."""

    def __init__(self, sweep: Callable[[], int]) -> None:
        self._sweep = sweep
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, interval_minutes: float) -> concurrent.futures.Future[None]:
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        future.add_done_callback(lambda f: self._stop.set() if f.cancelled() else None)
        if self.running:
            return future
        self._stop.clear()

        def loop() -> None:
            while not self._stop.wait(interval_minutes * 60):
                try:
                    swept = self._sweep()
                    if swept:
                        logger.info("store TTL sweep removed %d expired items", swept)
                except Exception:  # keep sweeping; a failed pass is retried next interval
                    logger.exception("store TTL sweep failed")
            if not future.done():
                future.set_result(None)

        self._thread = threading.Thread(target=loop, name="zaxy-store-ttl-sweeper", daemon=True)
        self._thread.start()
        return future

    def stop(self, timeout: float | None = None) -> bool:
        if not self.running:
            return True
        self._stop.set()
        assert self._thread is not None
        self._thread.join(timeout)
        stopped = not self._thread.is_alive()
        if stopped:
            self._thread = None
        return stopped
