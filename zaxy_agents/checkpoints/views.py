"""Thread views: each thread session replayed on first use and kept current (also across processes).

A view that meets an ``eventloom.erased`` record (its thread was erased here or by another process) is dropped
with its decoded values and replayed from the scrubbed log, so no erased value stays in memory."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from zaxy_agents.errors import ClosedError
from zaxy_agents.eventloom.erasure import ERASURE_TYPE
from zaxy_agents.eventloom.follower import SessionFollower
from zaxy_agents.eventloom.protocol import EventLog

from .blobs import ElementCache
from .codec import copy_json, decode_typed
from .index import CheckpointIndex
from .sessions import DEFAULT_SESSION_PREFIX, check_prefix, is_thread_session, thread_session
from .state import CheckpointRecord, ThreadState

DEFAULT_MAX_VIEWS = 512
PRELOAD_MAX_EVENTS = 4096  # events read in one bulk query by ThreadViews.preload


class ThreadView:
    __slots__ = ("erased", "follower", "fresh", "observed", "state")

    def __init__(self, log: EventLog, session: str, cache: ElementCache) -> None:
        self.state = ThreadState(session, cache)
        self.follower = SessionFollower(log, session, self._apply)
        # Per namespace, the newest checkpoint this saver has seen as the thread's latest (read, loaded or
        # written): a put whose thread has a newer latest that this saver never saw forks a concurrent writer.
        self.observed: dict[str, str | None] = {}
        self.erased = False  # an erasure record was applied: state may hold erased values
        self.fresh = False  # just bulk-read with a token taken moments before: the next use skips one catch-up

    def observe_all(self) -> None:
        for ns, space in self.state.namespaces.items():
            self.observed[ns] = space.ids[-1] if space.ids else None

    def _apply(self, seq: int, event_type: str, _timestamp: str, payload: dict[str, Any]) -> None:
        if event_type == ERASURE_TYPE:
            self.erased = True
        self.state.apply(seq, event_type, payload)


class ThreadViews:
    """Loads thread views lazily (a process touching one thread never replays the others) and keeps the most
    recently used ``max_views`` in memory; an evicted thread is replayed again on its next use."""

    def __init__(
        self,
        log: EventLog,
        prefix: str = DEFAULT_SESSION_PREFIX,
        cache: ElementCache | None = None,
        max_views: int = DEFAULT_MAX_VIEWS,
        index: CheckpointIndex | None = None,
    ) -> None:
        self.log = log
        self.index = index  # live checkpoints of every thread on disk: list(None) without replaying them all
        self.prefix = check_prefix(prefix)
        self.cache = cache or ElementCache()
        self.lock = threading.RLock()
        self.max_views = max_views
        self.closed = False
        self._views: OrderedDict[str, ThreadView] = OrderedDict()
        self._served: dict[str, dict[str, str]] = {}  # see served()

    def check_open(self) -> None:
        if self.closed:
            raise ClosedError(
                "this checkpointer is closed",
                field="checkpointer",
                remediation="Open a new ZaxyCheckpointer (or use it inside its `with` block).",
            )

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self._views.clear()
            if self.index is not None:
                self.index.close()

    def session(self, thread_id: str) -> str:
        return thread_session(str(thread_id), self.prefix)

    def loaded(self, session: str) -> bool:
        """Whether ``session``'s view is in memory (a read of it is warm)."""
        return session in self._views

    def peek(self, session: str) -> ThreadView | None:
        """The view of ``session`` if in memory, as it is (no catch-up)."""
        return self._views.get(session)

    def loaded_sessions(self) -> list[str]:
        return list(self._views)

    def served(self, session: str, ns: str, checkpoint_id: str) -> None:
        """A read served ``checkpoint_id`` as the latest of ``session`` / ``ns`` without loading its view: when
        the view is loaded later (a put), that is what this saver has seen (concurrent-writer detection)."""
        self._served.setdefault(session, {})[ns] = checkpoint_id

    def view(self, thread_id: str) -> ThreadView:
        """The caught-up view of ``thread_id`` (caller holds ``lock``)."""
        return self.view_of_session(self.session(thread_id))

    def view_of_session(self, session: str) -> ThreadView:
        self.check_open()
        view = self._views.get(session)
        if view is None:
            view = self._views[session] = ThreadView(self.log, session, self.cache)
            while len(self._views) > self.max_views:
                self._views.popitem(last=False)
            view.follower.catch_up()
            view.observe_all()
            view.observed.update(self._served.pop(session, {}))
            view.erased = False  # built from the scrubbed log
            return view
        self._views.move_to_end(session)
        if view.fresh:  # preloaded by the listing in progress: as current as a catch-up would make it
            return view
        view.follower.catch_up()
        if view.erased:
            self.forget(session)
            return self.view_of_session(session)
        return view

    def preload(self, tokens: dict[str, object]) -> list[str]:
        """Build the views of ``tokens``' sessions not in memory from one bulk read (``EventLog.replay_sessions``:
        one query on PostgreSQL instead of a head and a replay query per thread). ``tokens`` are each session's
        change token taken before this call (the index's refresh). Only threads of up to
        ``PRELOAD_MAX_EVENTS`` events together are read at once; the others load one by one on use. Caller holds
        ``lock``. Returns the sessions read: the caller calls :meth:`settle` with them when its listing is done
        (until then their views skip the catch-up)."""
        self.check_open()
        wanted: list[str] = []
        total = 0
        for session, token in tokens.items():
            if session in self._views or token is None:
                continue
            size = _event_count(token)
            if size is None or total + size > PRELOAD_MAX_EVENTS:
                continue
            wanted.append(session)
            total += size
        if len(wanted) < 2:
            return []  # one thread: the ordinary catch-up costs the same
        for session, envelopes in self.log.replay_sessions(wanted).items():
            view = ThreadView(self.log, session, self.cache)
            view.follower.load(envelopes, tokens[session])
            view.observe_all()
            view.observed.update(self._served.pop(session, {}))
            view.fresh = True
            self._views[session] = view
        while len(self._views) > self.max_views:
            self._views.popitem(last=False)
        return wanted

    def settle(self, sessions: list[str]) -> None:
        """End of a listing: preloaded views follow the log again from their next use."""
        for session in sessions:
            view = self._views.get(session)
            if view is not None:
                view.fresh = False

    def forget(self, session: str) -> None:
        """Drop the view of ``session`` and its decoded values (after an erasure); the next use replays it."""
        with self.lock:
            self._views.pop(session, None)
            self._served.pop(session, None)
            self.cache.forget_session(session)

    def all_views(self) -> Iterator[ThreadView]:
        """Every thread in the log (discovers sessions other processes created)."""
        self.check_open()
        sessions = {s.session for s in self.log.sessions() if is_thread_session(s.session, self.prefix)}
        for session in sorted(sessions | set(self._views)):
            yield self.view_of_session(session)


def _event_count(token: object) -> int | None:
    """The event count a head token ``(seq, hash)`` names; ``None`` for other tokens (a file's inode and size),
    which say nothing about the count: such threads are not bulk-read."""
    if isinstance(token, tuple) and len(token) == 2 and isinstance(token[0], int) and isinstance(token[1], str):
        return token[0]
    return None


def record_body(record: CheckpointRecord, serde: SerializerProtocol) -> dict[str, Any]:
    """A fresh copy of the checkpoint body (without channel values)."""
    if record.body is not None:
        return copy_json(record.body)
    assert record.body_serialized is not None
    return decode_typed(record.body_serialized, serde)


def record_metadata(record: CheckpointRecord, serde: SerializerProtocol) -> dict[str, Any]:
    """A fresh copy of the checkpoint metadata."""
    if record.metadata is not None:
        return copy_json(record.metadata)
    assert record.metadata_serialized is not None
    return decode_typed(record.metadata_serialized, serde)


def record_versions(record: CheckpointRecord, serde: SerializerProtocol) -> dict[str, Any]:
    if record.body is not None:
        return record.versions
    return dict(record_body(record, serde).get("channel_versions", {}))
