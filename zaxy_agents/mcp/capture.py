"""Lifecycle capture: one ``tool.call.completed`` event per MCP tool call, best-effort and off the call's path.

Recorded: tool name, status (``ok`` / ``error`` + error code), the argument *keys* (never their values), a
bounded result summary, duration, transport and ``capture: "lifecycle"``. The projection treats events marked
``capture: "lifecycle"`` as log-only (no entity, not indexed), so the server's audit trail never floods
retrieval; they stay replayable and verifiable like every other event.

Events are queued and appended by one background thread with the stdlib light append (no graph, works in proxy
processes too); a full queue drops the event and counts it. Capture appends go straight to the log, never
through a tool call, so the capture is never itself captured. ``MCP_LIFECYCLE_CAPTURE_ENABLED=false`` turns it
off.

When the server shuts down it records ``session.ended`` (``reason: "mcp_server_shutdown"``) for its default
session, after the queued events, with the same best-effort rules (seed 003).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from pathlib import Path
from typing import Any

logger = logging.getLogger("zaxy.mcp")
CAPTURE_EVENT = "tool.call.completed"
SESSION_ENDED_EVENT = "session.ended"
LOCK_TIMEOUT_S = 2.0  # a held log lock never blocks capture (or shutdown): the event is spooled instead
QUEUE_LIMIT = 1000
MAX_ARGUMENT_KEYS = 32


class LifecycleCapture:
    def __init__(self, eventloom_path: Path, *, enabled: bool = True) -> None:
        self.eventloom_path = Path(eventloom_path)
        self.enabled = enabled
        self.recorded = 0
        self.dropped = 0
        self.failed = 0
        self._queue: queue.Queue[tuple[str, str, dict[str, Any]] | None] = queue.Queue(maxsize=QUEUE_LIMIT)
        self.started = time.monotonic()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def record(
        self,
        session: str,
        *,
        tool: str,
        status: str,
        arguments: dict[str, Any] | None,
        summary: str,
        duration_ms: float,
        transport: str,
        error_code: str | None = None,
    ) -> None:
        """Queue one capture event; never raises, never blocks."""
        if not self.enabled:
            return
        payload: dict[str, Any] = {
            "tool": tool,
            "status": status,
            "argument_keys": sorted(arguments or {})[:MAX_ARGUMENT_KEYS],
            "result_summary": summary,
            "duration_ms": round(duration_ms, 3),
            "transport": transport,
            "capture": "lifecycle",
        }
        if error_code:
            payload["error_code"] = error_code
        self._put(session, CAPTURE_EVENT, payload)

    def record_session_ended(self, session: str, *, transport: str, client: str | None = None) -> None:
        """``session.ended`` for the server's default session when it shuts down (seed 003; best effort)."""
        if not self.enabled:
            return
        payload: dict[str, Any] = {
            "reason": "mcp_server_shutdown",
            "transport": transport,
            "tool_calls_recorded": self.recorded,
            "uptime_s": round(time.monotonic() - self.started, 3),
            "capture": "lifecycle",
        }
        if client:
            payload["client"] = client
        self._put(session, SESSION_ENDED_EVENT, payload)

    def _put(self, session: str, event_type: str, payload: dict[str, Any]) -> None:
        self._ensure_thread()
        try:
            self._queue.put_nowait((session, event_type, payload))
        except queue.Full:
            self.dropped += 1

    def _ensure_thread(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="zaxy-capture", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        from zaxy_agents.fabric.light import light_append_many

        while True:
            item = self._queue.get()
            if item is None:
                return
            session, event_type, payload = item
            if event_type == SESSION_ENDED_EVENT:  # every call queued before it has been written by now
                payload["tool_calls_recorded"] = self.recorded
            try:
                light_append_many(
                    session,
                    [{"type": event_type, "payload": payload, "actor": "zaxy-mcp"}],
                    eventloom_path=self.eventloom_path,
                    lock_timeout=LOCK_TIMEOUT_S,
                    spool=True,
                )
                self.recorded += event_type == CAPTURE_EVENT
            except Exception:  # best-effort: a capture failure never affects a call
                self.failed += 1
                logger.debug("lifecycle capture failed", exc_info=True)

    def stats(self) -> dict[str, Any]:
        return {"enabled": self.enabled, "recorded": self.recorded, "dropped": self.dropped, "failed": self.failed}

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued (bounded wait), then stop the thread."""
        with self._lock:
            thread = self._thread
        if thread is None:
            return
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            return
        thread.join(timeout=timeout)
