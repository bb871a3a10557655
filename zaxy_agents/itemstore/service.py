"""ItemStore: LangGraph store operations executed against the Eventloom.

Every put and delete is a ``store.item.*`` event in one session (default ``langgraph-store``); the items,
their order, field indexes and vectors are a view materialised from that session and kept current, also
when other processes append. A batch follows InMemoryStore: reads see the state before the batch's writes,
the last put per key wins, and all writes (plus TTL refreshes) are one atomic append with one fsync.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from langgraph.store.base import (
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from zaxy_agents.eventloom.follower import SessionFollower
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.eventloom.redaction import policy_for, redact_value
from zaxy_agents.eventloom.validation import validate_session_id

from . import events as ev
from .embedding_cache import EmbeddingCache
from .filters import validate_filter
from .indexing import IndexSettings, item_texts, resolve_index
from .namespaces import list_namespaces
from .records import ItemRecord
from .state import ItemState
from .ttl import TOUCH_COALESCE_SHARE, TTLSweeper, check_ttl, check_ttl_config
from .vectors import VectorIndex

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class _PreparedPut:
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any] | None
    index: Any
    ttl: float | None
    texts: list[tuple[str, str]] | None = None
    vectors: np.ndarray | None = None


class ItemStore:
    """The domain service behind ``zaxy_agents.langgraph.ZaxyStore`` (one instance per store object)."""

    def __init__(
        self,
        log: EventLog,
        session: str = ev.DEFAULT_STORE_SESSION,
        *,
        index: Any = None,
        ttl: Any = None,
        cache_dir: Path | None = None,
        actor: str = "langgraph",
    ) -> None:
        self.session = validate_session_id(session, field="session")
        self.log = log
        self.actor = actor
        self.index: IndexSettings | None = resolve_index(index)
        self.ttl = check_ttl_config(ttl)
        self.state = ItemState()
        self.vectors = VectorIndex(self.index.dims) if self.index else None
        self._cache = EmbeddingCache(self.index.model_id, cache_dir) if self.index else None
        self._unembedded: set[int] = set()
        self._lock = threading.RLock()
        self._follower = SessionFollower(log, self.session, self._apply)
        self.sweeper = TTLSweeper(self.sweep_expired)
        with self._lock:
            self._follower.catch_up()
        if self.ttl.get("sweep_interval_minutes"):
            self.sweeper.start(float(self.ttl["sweep_interval_minutes"]))

    @property
    def omit_expired(self) -> bool:
        return bool(self.ttl.get("omit_expired", False))

    # ------------------------------------------------------------------ batches
    def execute(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        puts, queries = self._prepare(ops)
        with self._lock:
            self._follower.catch_up()
            now = time.time()
            touches: dict[tuple[tuple[str, ...], str], float] = {}
            results = [self._read(op, queries, now, touches) for op in ops]
            drafts = self._write_drafts(puts, touches, now)
            if drafts:
                prepared = {(p.namespace, p.key): p for p in puts}
                events = self.log.append_many(self.session, drafts)
                self._follower.absorb(events, lambda event: self._apply_own(event, prepared))
        return results

    async def aexecute(self, ops: Iterable[Op]) -> list[Result]:
        """Writes and vector queries (fsync, embedding) run in a worker thread; pure reads run inline."""
        ops = list(ops)
        if any(isinstance(op, PutOp) or (isinstance(op, SearchOp) and op.query and self.index) for op in ops):
            return await asyncio.to_thread(self.execute, ops)
        return self.execute(ops)

    def _prepare(self, ops: list[Op]) -> tuple[list[_PreparedPut], dict[str, np.ndarray]]:
        """Validate every op and do the slow, state-free work (copying, embedding) before taking the lock."""
        winners: dict[tuple[tuple[str, ...], str], PutOp] = {}
        query_texts: set[str] = set()
        for op in ops:
            if not isinstance(op, (GetOp, SearchOp, ListNamespacesOp, PutOp)):
                raise ValueError(f"Unknown operation type: {type(op)}")
            validate_op_namespace(op)
            if isinstance(op, PutOp):
                winners[(tuple(op.namespace), str(op.key))] = op
            elif isinstance(op, SearchOp):
                validate_filter(op.filter)
                if op.query and self.index:
                    query_texts.add(op.query)
        puts = [self._prepare_put(namespace, key, op) for (namespace, key), op in winners.items()]
        embedded = [p for p in puts if p.texts]
        if embedded and self.index and self._cache:
            matrix = self._cache.embed([t for p in embedded for _, t in p.texts or ()], self._embed_documents)
            assert self.vectors is not None
            self.vectors.check(matrix)
            start = 0
            for p in embedded:
                count = len(p.texts or ())
                p.vectors, start = matrix[start : start + count], start + count
        queries = {}
        if query_texts and self.index:
            queries = {text: np.asarray(self.index.embedder.embed_query(text)) for text in query_texts}
        return puts, queries

    def _prepare_put(self, namespace: tuple[str, ...], key: str, op: PutOp) -> _PreparedPut:
        if op.value is None:
            return _PreparedPut(namespace, key, None, None, None)
        value = ev.plain_value(op.value)
        if self.index:  # redact before indexing, so texts and vectors match what the log keeps and replays
            value, _paths = redact_value(value, policy=policy_for(ev.ITEM_PUT))
        index = op.index if op.index is False or op.index is None else [str(path) for path in op.index]
        texts = item_texts(value, self.index, index) if self.index else None
        return _PreparedPut(namespace, key, value, index, check_ttl(op.ttl), texts=texts)

    def _embed_documents(self, texts: list[str]) -> np.ndarray:
        assert self.index is not None
        return np.asarray(self.index.embedder.embed_documents(texts), dtype=np.float32)

    # ------------------------------------------------------------------ reads
    def _read(
        self,
        op: Op,
        queries: dict[str, np.ndarray],
        now: float,
        touches: dict[tuple[tuple[str, ...], str], float],
    ) -> Result:
        if isinstance(op, GetOp):
            record = self.state.get(tuple(op.namespace), str(op.key))
            if record is None or (self.omit_expired and record.expired(now)):
                return None
            if op.refresh_ttl:
                self._refresh_ttl(record, now, touches)
            return _item(record)
        if isinstance(op, SearchOp):
            found = self._search(op, queries.get(op.query) if op.query else None, now)
            if op.refresh_ttl:
                for record, _score in found:
                    self._refresh_ttl(record, now, touches)
            return [_search_item(record, score) for record, score in found]
        if isinstance(op, ListNamespacesOp):
            return list_namespaces(self._live_namespaces(now), op.match_conditions, op.max_depth, op.limit, op.offset)
        return None  # PutOp: applied after the reads

    def _live_namespaces(self, now: float) -> Iterable[tuple[str, ...]]:
        if not self.omit_expired:
            return self.state.namespaces
        return [ns for ns, items in self.state.namespaces.items() if any(not r.expired(now) for r in items.values())]

    def _search(self, op: SearchOp, query: np.ndarray | None, now: float) -> list[tuple[ItemRecord, float | None]]:
        prefix = tuple(op.namespace_prefix)
        keep = (lambda record: not record.expired(now)) if self.omit_expired else None
        if query is None or self.vectors is None:
            bounded = op.offset >= 0 and op.limit >= 0
            records = self.state.select(prefix, op.filter, stop=op.offset + op.limit if bounded else None, keep=keep)
            return [(record, None) for record in records[op.offset : op.offset + op.limit]]
        self._embed_unembedded()
        candidates: list[ItemRecord] | None = None
        namespaces = None
        if op.filter or keep:
            candidates = self.state.select(prefix, op.filter, keep=keep)
            if not candidates:
                return []
        elif prefix:
            namespaces = np.fromiter(
                (self.state.namespace_birth[ns] for ns in self.state.namespaces_under(prefix)), dtype=np.int64
            )
            if not namespaces.size:
                return []
        uids = None if candidates is None else np.fromiter((r.uid for r in candidates), dtype=np.int64)
        found, scores = self.vectors.search(query, op.offset + op.limit, uids=uids, namespaces=namespaces)
        by_uid = self.state.by_uid
        kept: list[tuple[ItemRecord, float | None]] = [
            (by_uid[int(uid)], float(score)) for uid, score in zip(found[op.offset :], scores[op.offset :], strict=True)
        ]
        if len(kept) < op.limit:  # InMemoryStore fills up with items that have no vectors, in order
            pool = candidates if candidates is not None else self.state.scan(prefix)
            for record in pool:
                if len(kept) >= op.limit:
                    break
                if record.uid not in self.vectors:
                    kept.append((record, None))
        return kept

    def _embed_unembedded(self) -> None:
        """Embed items replayed from the log (other processes' puts, or a fresh open) on first vector query."""
        if not self._unembedded or self.index is None or self._cache is None or self.vectors is None:
            return
        records = [self.state.by_uid[uid] for uid in self._unembedded if uid in self.state.by_uid]
        texts = [item_texts(record.value, self.index, record.index) for record in records]
        matrix = self._cache.embed([t for group in texts for _, t in group], self._embed_documents)
        start = 0
        for record, group in zip(records, texts, strict=True):
            self._set_vectors(record, matrix[start : start + len(group)])
            start += len(group)
        self._unembedded.clear()

    def _set_vectors(self, record: ItemRecord, vectors: np.ndarray) -> None:
        assert self.vectors is not None
        namespace_birth, item_birth = record.order
        self.vectors.set(record.uid, namespace_birth, (namespace_birth << 32) | item_birth, vectors)

    def _refresh_ttl(self, record: ItemRecord, now: float, touches: dict[tuple[tuple[str, ...], str], float]) -> None:
        if record.ttl_minutes is None:
            return
        record.expires_at = now + record.ttl_minutes * 60
        persisted = record.persisted_expires_at
        if persisted is None or record.expires_at - persisted >= TOUCH_COALESCE_SHARE * record.ttl_minutes * 60:
            touches[(record.namespace, record.key)] = record.expires_at

    # ------------------------------------------------------------------ writes
    def _write_drafts(
        self, puts: list[_PreparedPut], touches: dict[tuple[tuple[str, ...], str], float], now: float
    ) -> list[dict[str, Any]]:
        drafts = []
        for put in puts:
            if put.value is None:
                if self.state.get(put.namespace, put.key) is not None:
                    drafts.append(self._draft(ev.ITEM_DELETED, ev.deleted_payload(put.namespace, put.key, "delete")))
                continue
            touches.pop((put.namespace, put.key), None)
            expires = None if put.ttl is None else now + put.ttl * 60
            payload = ev.put_payload(
                put.namespace,
                put.key,
                put.value,
                index=put.index,
                texts=put.texts,
                ttl_minutes=put.ttl,
                expires_at=expires,
            )
            drafts.append(self._draft(ev.ITEM_PUT, payload))
        for (namespace, key), expires_at in touches.items():
            drafts.append(self._draft(ev.ITEM_TOUCHED, ev.touched_payload(namespace, key, expires_at)))
        return drafts

    def _draft(self, event_type: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"type": event_type, "payload": payload, "actor": self.actor}

    def sweep_expired(self) -> int:
        """Delete every expired item (one ``store.item.deleted`` with reason ``ttl_expired`` each)."""
        with self._lock:
            self._follower.catch_up()
            now = time.time()
            expired = [record for record in self.state.by_uid.values() if record.expired(now)]
            if not expired:
                return 0
            drafts = [
                self._draft(ev.ITEM_DELETED, ev.deleted_payload(r.namespace, r.key, "ttl_expired")) for r in expired
            ]
            self._follower.absorb(self.log.append_many(self.session, drafts))
            return len(expired)

    def close(self) -> None:
        self.sweeper.stop(timeout=1.0)

    # ------------------------------------------------------------------ applying events
    def _apply_own(self, event: Any, prepared: dict[tuple[tuple[str, ...], str], _PreparedPut]) -> None:
        record = self._apply(event.seq, event.type, event.timestamp, event.payload)
        if record is not None and event.type == ev.ITEM_PUT and self.vectors is not None:
            put = prepared.get((record.namespace, record.key))
            if put is not None and put.vectors is not None and put.value is record.value:
                self._set_vectors(record, put.vectors)
                self._unembedded.discard(record.uid)
            elif put is not None and not put.texts:
                self.vectors.remove(record.uid)
                self._unembedded.discard(record.uid)

    def _apply(self, seq: int, event_type: str, timestamp: str, payload: dict[str, Any]) -> ItemRecord | None:
        if event_type not in ev.STORE_EVENT_TYPES:
            return None
        try:
            namespace, key = tuple(payload["namespace"]), str(payload["key"])
            if event_type == ev.ITEM_PUT:
                record = self.state.upsert(
                    namespace,
                    key,
                    payload["value"],
                    ev.parse_time(timestamp),
                    index=payload.get("index"),
                    seq=seq,
                    ttl_minutes=payload.get("ttl_minutes"),
                    expires_at=ev.parse_epoch(payload.get("expires_at")),
                )
                if self.vectors is not None:
                    self.vectors.remove(record.uid)
                    self._unembedded.add(record.uid)
                return record
            if event_type == ev.ITEM_DELETED:
                record = self.state.remove(namespace, key)
                if record is not None and self.vectors is not None:
                    self.vectors.remove(record.uid)
                    self._unembedded.discard(record.uid)
                return record
            record = self.state.get(namespace, key)
            expires_at = ev.parse_epoch(payload.get("expires_at"))
            if record is not None and expires_at is not None:
                if record.expires_at is None or expires_at > record.expires_at:
                    record.expires_at = expires_at
                record.persisted_expires_at = expires_at
            return record
        except (KeyError, TypeError, ValueError, AttributeError):
            logger.warning("skipping malformed %s event at %s seq %s", event_type, self.session, seq)
            return None


def _item(record: ItemRecord) -> Item:
    return Item(
        value=record.value,
        key=record.key,
        namespace=record.namespace,
        created_at=record.created_at,
        updated_at=record.updated_at,
    )


def _search_item(record: ItemRecord, score: float | None) -> SearchItem:
    return SearchItem(
        namespace=record.namespace,
        key=record.key,
        value=record.value,
        created_at=record.created_at,
        updated_at=record.updated_at,
        score=score,
    )
