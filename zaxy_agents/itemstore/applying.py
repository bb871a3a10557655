"""Deriving a store's items from its events: the hooks :class:`~zaxy_agents.storage.derived_sqlite.DerivedFollower`
calls (apply one event, reset, does an erasure touch a live item) and what a batch's own appends change.

Why a module of its own: :mod:`.service` runs LangGraph's operations (batches, reads, writes, TTL); this is the
other direction, from events back to items, shared by catching up with other processes, rebuilding after an
erasure and absorbing the store's own batches (chunked values joined, vectors kept in step when they are known).
:class:`ItemEvents` is the base of :class:`~zaxy_agents.itemstore.service.ItemStore`, which sets the state below.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from zaxy_agents.eventloom.erasure import ERASURE_TYPE, is_erased
from zaxy_agents.eventloom.integrity import decode_line
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.storage.derived_sqlite import DerivedFollower

from . import events as ev
from . import values as vals
from . import versions
from .embedding_cache import EmbeddingCache
from .state import ItemState
from .vectors import VectorIndex

logger = logging.getLogger("zaxy_agents.itemstore.service")  # the store's log name, as before the split


@dataclass(slots=True)
class _PreparedPut:
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any] | None
    index: Any
    ttl: float | None
    texts: list[tuple[str, str]] | None = None
    vectors: np.ndarray | None = None
    text: str | None = None  # the value's JSON text when it is too large for one event (written as chunks)


class ItemEvents:
    """Applying store events to the derived items (the state is set up by ``ItemStore.__init__``)."""

    session: str
    log: EventLog
    closed: bool
    state: ItemState
    vectors: VectorIndex | None
    _cache: EmbeddingCache | None
    _chunks: tuple[tuple[tuple[str, ...], str], dict[int, str]] | None
    _lock: threading.RLock
    _follower: DerivedFollower

    def _catch_up(self) -> None:
        if self._follower.catch_up():  # another process (or a rebuild) changed the items: vectors follow later
            self.vectors = None
            self.state.forget_indexes()
        self.state.settle()

    def _absorb(self, events: list[Any], prepared: dict[tuple[tuple[str, ...], str], _PreparedPut]) -> None:
        if self._follower.absorb(events, lambda event: self._apply_own(event, prepared)):
            self.vectors = None
            self.state.forget_indexes()
        self.state.settle()

    def _reset(self) -> None:
        self.state.clear()
        versions.clear(self.state.conn)
        self.vectors = None
        self._chunks = None
        if self._cache is not None:
            self._cache.forget()

    def on_erased(self, session: str) -> None:
        """An erasure in ``session`` scrubbed the log: catch up now (the follower empties and rebuilds the
        derived file, then compacts it), so no erased value waits in it for the next call."""
        if session != self.session:
            return
        with self._lock:
            if not self.closed:
                self._catch_up()

    def locate(self, session: str, keys: list[tuple[tuple[str, ...], str]]) -> tuple[list[int], int] | None:
        """Where the events naming ``keys`` are (what a delete erases): ``(seqs, through)``, the indexed seqs and the
        seq up to which the index saw every event of the session (the caller replays only the log after it and
        re-reads each seq; see :mod:`.versions`). ``None`` when this store cannot say (another session, closed, a
        namespace label that is not a string)."""
        if session != self.session or not all(isinstance(label, str) for ns, _key in keys for label in ns):
            return None
        with self._lock:
            if self.closed:
                return None
            conn = self.state.conn
            with self._follower.db.lock:
                conn.execute("BEGIN")  # one snapshot: the position and the rows it covers
                try:
                    through = self._follower.db.position()[0]
                    seqs = versions.seqs_of(conn, keys)
                finally:
                    conn.execute("COMMIT")
        return seqs, through

    def _derives_from(self, ranges: list[tuple[int, int]]) -> bool:
        """Whether a live item was written by an erased event, or is a chunked put whose chunks end a range (then
        the erasure rebuilds the items from the log). A store delete or TTL sweep erases every event of the key,
        so it never does: the items keep their order (namespace births included), as InMemoryStore does."""
        if self.state.derives_from(ranges):
            return True
        lines = self.log.lines_at([(self.session, last + 1) for _first, last in ranges])
        for (_session, seq), line in lines.items():
            envelope = decode_line(line)
            if (
                envelope is not None
                and not is_erased(envelope)
                and envelope.get("type") == ev.ITEM_PUT
                and "value_chunks" in (envelope.get("payload") or {})
                and self.state.derives_from([(seq, seq)])
            ):
                return True
        return False

    def _apply_own(self, event: Any, prepared: dict[tuple[tuple[str, ...], str], _PreparedPut]) -> bool:
        settled = self._apply(event.seq, event.type, event.timestamp, event.payload, own=True)
        if self.vectors is None or event.type not in (ev.ITEM_PUT, ev.ITEM_DELETED):
            return settled
        uid, namespace, key = self._last_applied
        if uid is None:
            return settled
        put = prepared.get((namespace, key))
        if event.type == ev.ITEM_DELETED or put is None or put.vectors is None:
            self.vectors.remove(uid)
            if event.type == ev.ITEM_PUT and put is not None and put.texts:
                self.vectors = None  # vectors unknown here: rebuilt through the cache on the next vector search
            return settled
        record = self.state.get(namespace, key)
        if record is not None:
            _set_vectors(self.vectors, uid, record.order, put.vectors)
        return settled

    _last_applied: tuple[int | None, tuple[str, ...], str] = (None, (), "")

    def _apply(self, seq: int, event_type: str, timestamp: str, payload: dict[str, Any], *, own: bool = False) -> bool:
        """Write one event into the derived state. False while a chunked value waits for its put."""
        self._last_applied = (None, (), "")
        if event_type == ERASURE_TYPE:  # what a delete must erase is indexed here (see .versions)
            versions.forget(self.state.conn, payload)
        else:
            versions.record(self.state.conn, seq, event_type, payload)
        if event_type == vals.ITEM_CHUNK:
            return self._collect_chunk(seq, payload)
        open_group, self._chunks = self._chunks, None  # anything but the next chunk ends an open group
        if event_type not in ev.STORE_EVENT_TYPES:
            return True
        if not own and self.vectors is not None:
            self.vectors = None  # replayed: rebuilt on the next vector search
        try:
            namespace, key = tuple(payload["namespace"]), str(payload["key"])
            if event_type == ev.ITEM_PUT:
                value_json = self._put_text(payload, open_group, namespace, key, own)
                uid = self.state.upsert(
                    namespace,
                    key,
                    value_json,
                    timestamp,
                    index=payload.get("index"),
                    seq=seq,
                    ttl_minutes=payload.get("ttl_minutes"),
                    expires_at=ev.parse_epoch(payload.get("expires_at")),
                )
                self._last_applied = (uid, namespace, key)
            elif event_type == ev.ITEM_DELETED:
                self._last_applied = (self.state.remove(namespace, key), namespace, key)
            else:
                expires_at = ev.parse_epoch(payload.get("expires_at"))
                if expires_at is not None:
                    self.state.touch(namespace, key, expires_at)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            logger.warning("skipping malformed %s event at %s seq %s (%s)", event_type, self.session, seq, exc)
        return True

    def _put_text(
        self,
        payload: dict[str, Any],
        group: tuple[tuple[tuple[str, ...], str], dict[int, str]] | None,
        namespace: tuple[str, ...],
        key: str,
        own: bool,
    ) -> str:
        """The put's value as JSON text in the caller's key order (joined from its chunks when it has some)."""
        descriptor = payload.get("value_chunks")
        if descriptor is not None:
            if group is None or group[0] != (namespace, key):
                raise ValueError("a chunked put without its chunks")
            text = vals.join_chunks(group[1], descriptor)
            json.loads(text)  # a value that does not parse is malformed, never stored
            return text
        value = payload["value"]
        if not isinstance(value, dict):
            raise TypeError("value is not an object")
        return vals.dumps(value if own else vals.restore_key_order(value, payload.get("key_order")))

    def _collect_chunk(self, seq: int, payload: dict[str, Any]) -> bool:
        try:
            target = (tuple(payload["namespace"]), str(payload["key"]))
            part, text = int(payload["part"]), vals.chunk_text(payload)
        except (KeyError, TypeError, ValueError) as exc:
            logger.warning("skipping malformed store.item.chunk at %s seq %s (%s)", self.session, seq, exc)
            self._chunks = None
            return True
        if part == 0 or self._chunks is None or self._chunks[0] != target:
            self._chunks = (target, {})
        self._chunks[1][part] = text
        return False


def _set_vectors(vectors: VectorIndex, uid: int, order: tuple[int, int], rows: np.ndarray) -> None:
    namespace_birth, item_birth = order
    vectors.set(uid, namespace_birth, (namespace_birth << 32) | item_birth, rows)
