"""CheckpointStore: LangGraph checkpoints kept in the Eventloom, one session per thread.

The domain service behind ``zaxy_agents.langgraph.ZaxyCheckpointer``. The serde is passed per call because a
saver's ``with_allowlist`` clone shares this service but carries its own serializer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from langgraph.checkpoint.serde.base import SerializerProtocol

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.protocol import EventLog

from .blobs import ElementCache
from .index import CheckpointIndex
from .latest import SUFFIX as LATEST_SUFFIX
from .latest import LatestCheckpoints
from .maintenance import CheckpointMaintenance
from .reads import CheckpointReads
from .sessions import DEFAULT_SESSION_PREFIX, check_prefix
from .views import ThreadViews
from .writes import CheckpointWrites

CONCURRENT_WRITE_MODES = ("warn", "error")

# Room left in an event for the envelope and the other payload fields when a value is split into parts.
_PAYLOAD_HEADROOM = 16 * 1024


class CheckpointStore(CheckpointReads, CheckpointWrites, CheckpointMaintenance):
    def __init__(
        self,
        log: EventLog,
        *,
        session_prefix: str = DEFAULT_SESSION_PREFIX,
        capture_transcripts: bool = True,
        actor: str = "langgraph",
        cache: ElementCache | None = None,
        writes_log: EventLog | Callable[[], EventLog] | None = None,
        concurrent_writes: str = "warn",
        index_dir: Path | None = None,
        identity: str = "",
        store_latest: bool = True,
    ) -> None:
        """``index_dir``: where the checkpoint index and the stored latest checkpoints live (none: neither is
        kept). ``store_latest``: keep copies of long threads' latest checkpoints there (see :mod:`.latest`); a
        deployment whose workers have separate derived folders passes False, since an erasure run by one worker
        could not delete another worker's copy."""
        if concurrent_writes not in CONCURRENT_WRITE_MODES:
            raise InvalidRequestError(
                f"unknown concurrent_writes mode {concurrent_writes!r}",
                field="concurrent_writes",
                remediation="Use 'warn' (save and report a fork) or 'error' (refuse a put that forks the thread).",
            )
        self.concurrent_writes = concurrent_writes
        index = None
        self.latest: LatestCheckpoints | None = None
        if index_dir is not None:  # one file per log and prefix (a server's schema has its own)
            digest = hashlib.sha256(identity.encode()).hexdigest()[:12]
            stem = f"{check_prefix(session_prefix)}.{digest}"
            index = CheckpointIndex(log, index_dir / f"{stem}.sqlite3", prefix=session_prefix, identity=identity)
            if store_latest:
                self.latest = LatestCheckpoints(
                    log, index_dir / f"{stem}{LATEST_SUFFIX}", prefix=session_prefix, identity=identity
                )
        self.views = ThreadViews(log, session_prefix, cache, index=index)
        # Pending writes may go through a group-commit log: the next checkpoint's fsync (or the group commit
        # within 50 ms) makes them durable; a lost pending write only means its task runs again on resume.
        self._writes_log = writes_log or log
        self.capture_transcripts = capture_transcripts
        self.actor = actor
        max_payload = log.max_payload_bytes
        self.chunk_chars = max(1024, max_payload - _PAYLOAD_HEADROOM)

    @property
    def writes_log(self) -> EventLog:
        """The log pending writes go to (a factory given to the constructor is called on first use)."""
        if not isinstance(self._writes_log, EventLog):
            self._writes_log = self._writes_log()
        return self._writes_log

    @property
    def closed(self) -> bool:
        return self.views.closed

    def check_open(self) -> None:
        self.views.check_open()

    def close(self, serde: SerializerProtocol | None = None) -> None:
        """Every later call raises ``ClosedError``; the views are dropped. With ``serde``, the latest checkpoint
        of each long thread in memory is stored first (see :mod:`.latest`), so a cold read finds it."""
        if serde is not None and self.latest is not None and not self.views.closed:
            with self.views.lock:
                for session in self.views.loaded_sessions():
                    self.store_latest(session, serde)
        self.views.close()
        if self.latest is not None:
            self.latest.close()

    def on_erased(self, session: str) -> None:
        """An erasure in ``session`` scrubbed the log: drop its thread view, decoded values and stored copy now."""
        self.views.forget(session)
        if self.latest is not None:
            self.latest.forget(session)

    def session_of(self, thread_id: str) -> str:
        """The Eventloom session that holds ``thread_id`` (see :mod:`.sessions`)."""
        return self.views.session(thread_id)
