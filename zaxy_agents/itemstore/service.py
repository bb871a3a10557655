"""ItemStore: LangGraph store operations executed against the Eventloom.

Every put and delete is a ``store.item.*`` event in one session (default ``langgraph-store``); the items,
their order and field indexes are derived state in an SQLite file kept current with that session, also when
other processes append (see :mod:`.state`); opening costs the same whatever the history. Vectors live in
memory, built on the first vector search from the on-disk embedding cache. A batch follows InMemoryStore:
reads see the state before the batch's writes, the last put per key wins, and all writes (plus TTL refreshes)
are one atomic append with one fsync. Applying events back to the items is :mod:`.applying` (the base class).
"""

from __future__ import annotations

import asyncio
import hashlib
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
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

from zaxy_agents.errors import ClosedError
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.eventloom.redaction import policy_for, redact_value
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.storage.derived_sqlite import DerivedDatabase, DerivedFollower

from . import events as ev
from . import values as vals
from . import versions
from .applying import ItemEvents, _PreparedPut, _set_vectors
from .embedding_cache import EmbeddingCache
from .filters import validate_filter
from .indexing import IndexSettings, item_texts, resolve_index
from .namespaces import list_namespaces
from .records import ItemRecord
from .state import FORMAT_VERSION, SCHEMA, ItemState
from .ttl import TOUCH_COALESCE_SHARE, TTLSweeper, check_ttl, check_ttl_config
from .vectors import VectorIndex


class ItemStore(ItemEvents):
    """The domain service behind ``zaxy_agents.langgraph.ZaxyStore`` (one instance per store object).

    ``state_dir`` holds the derived SQLite file (``None``: a private temporary file); ``identity`` names the
    log (folder or server), so a file built from another log is never trusted.
    """

    def __init__(
        self,
        log: EventLog,
        session: str = ev.DEFAULT_STORE_SESSION,
        *,
        index: Any = None,
        ttl: Any = None,
        cache_dir: Path | None = None,
        state_dir: Path | None = None,
        identity: str = "",
        actor: str = "langgraph",
    ) -> None:
        self.session = validate_session_id(session, field="session")
        self.log = log
        self.actor = actor
        self.index: IndexSettings | None = resolve_index(index)
        self.ttl = check_ttl_config(ttl)
        self.closed = False
        self._chunk_chars = vals.chunk_chars(log.max_payload_bytes)
        self._temporary: tempfile.TemporaryDirectory[str] | None = None
        if state_dir is None:
            self._temporary = tempfile.TemporaryDirectory(prefix="zaxy-itemstore-")
            state_dir = Path(self._temporary.name)
        digest = hashlib.sha256(identity.encode()).hexdigest()[:12]
        self.db = DerivedDatabase(
            state_dir / f"{self.session}.{digest}.sqlite3",
            kind="itemstore",
            format_version=FORMAT_VERSION,
            session=self.session,
            identity=identity,
            schema=SCHEMA + versions.SCHEMA,
        )
        self.state = ItemState(self.db.conn)
        self.vectors: VectorIndex | None = None  # built on the first vector search, then kept current
        self._cache = EmbeddingCache(self.index.model_id, cache_dir) if self.index else None
        self._chunks: tuple[tuple[tuple[str, ...], str], dict[int, str]] | None = None
        self._lock = threading.RLock()
        self._follower = DerivedFollower(log, self.db, self._apply, self._reset, self._derives_from)
        self._sweeper: TTLSweeper | None = None  # built on first use (see ``sweeper``)
        # Called by every sweep that deleted items: ``on_expired(keys, through_seq)`` (see ``sweep_expired``).
        self.on_expired: Callable[[list[tuple[tuple[str, ...], str]], int], None] | None = None
        with self._lock:
            self._catch_up()
        if self.ttl.get("sweep_interval_minutes"):
            self.sweeper.start(float(self.ttl["sweep_interval_minutes"]))

    @property
    def sweeper(self) -> TTLSweeper:
        """The background TTL sweeper, built on first use: most stores never sweep on a timer, and building it
        (a ``threading.Event``) was part of every open."""
        with self._lock:
            if self._sweeper is None:
                self._sweeper = TTLSweeper(self.sweep_expired)
            return self._sweeper

    @property
    def omit_expired(self) -> bool:
        return bool(self.ttl.get("omit_expired", False))

    def check_open(self) -> None:
        if self.closed:
            raise ClosedError(
                "this store is closed",
                field="store",
                remediation="Open a new ZaxyStore (or use it inside its `with` block).",
            )

    # ------------------------------------------------------------------ batches
    def execute(self, ops: Iterable[Op]) -> list[Result]:
        self.check_open()
        ops = list(ops)
        puts, queries = self._prepare(ops)
        with self._lock:
            self.check_open()
            self._catch_up()
            now = time.time()
            touches: dict[tuple[tuple[str, ...], str], float] = {}
            results = [self._read(op, queries, now, touches) for op in ops]
            drafts = self._write_drafts(puts, touches, now)
            if drafts:
                prepared = {(p.namespace, p.key): p for p in puts}
                events = self.log.append_many(self.session, drafts)
                self._absorb(events, prepared)
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
            VectorIndex(self.index.dims).check(matrix)
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
        text = None
        if len(vals.dumps(value)) > self._chunk_chars:  # too large for one event: written as chunks
            value, text = vals.redacted_text(value)  # redacted whole, before it is cut
            vals.check_size(text)
        index = op.index if op.index is False or op.index is None else [str(path) for path in op.index]
        texts = item_texts(value, self.index, index) if self.index else None
        return _PreparedPut(namespace, key, value, index, check_ttl(op.ttl), texts=texts, text=text)

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
            live = self.state.namespaces(now if self.omit_expired else None)
            return list_namespaces(live, op.match_conditions, op.max_depth, op.limit, op.offset)
        return None  # PutOp: applied after the reads

    def _search(self, op: SearchOp, query: np.ndarray | None, now: float) -> list[tuple[ItemRecord, float | None]]:
        prefix = tuple(op.namespace_prefix)
        keep = (lambda record: not record.expired(now)) if self.omit_expired else None
        if query is None or self.index is None:
            bounded = op.offset >= 0 and op.limit >= 0
            records = self.state.select(prefix, op.filter, stop=op.offset + op.limit if bounded else None, keep=keep)
            return [(record, None) for record in records[op.offset : op.offset + op.limit]]
        vectors = self._ensure_vectors()
        candidates: list[ItemRecord] | None = None
        namespaces = None
        if op.filter or keep:
            candidates = self.state.select(prefix, op.filter, keep=keep)
            if not candidates:
                return []
        elif prefix:
            namespaces = np.asarray(self.state.namespace_births(prefix), dtype=np.int64)
            if not namespaces.size:
                return []
        uids = None if candidates is None else np.fromiter((r.uid for r in candidates), dtype=np.int64)
        found, scores = vectors.search(query, op.offset + op.limit, uids=uids, namespaces=namespaces)
        chosen = [int(uid) for uid in found[op.offset :]]
        by_uid = self.state.by_uids(chosen)
        kept: list[tuple[ItemRecord, float | None]] = [
            (by_uid[uid], float(score)) for uid, score in zip(chosen, scores[op.offset :], strict=True)
        ]
        if len(kept) < op.limit:  # InMemoryStore fills up with items that have no vectors, in order
            pool = candidates if candidates is not None else self.state.scan(prefix)
            for record in pool:
                if len(kept) >= op.limit:
                    break
                if record.uid not in vectors:
                    kept.append((record, None))
        return kept

    def _ensure_vectors(self) -> VectorIndex:
        """The vector index, built from the derived items through the embedding cache when missing."""
        if self.vectors is not None:
            return self.vectors
        assert self.index is not None and self._cache is not None
        vectors = VectorIndex(self.index.dims)
        records = list(self.state.all_records())
        texts = [item_texts(record.value, self.index, record.index) for record in records]
        matrix = self._cache.embed([t for group in texts for _, t in group], self._embed_documents)
        start = 0
        for record, group in zip(records, texts, strict=True):
            _set_vectors(vectors, record.uid, record.order, matrix[start : start + len(group)])
            start += len(group)
        self.vectors = vectors
        return vectors

    def _refresh_ttl(self, record: ItemRecord, now: float, touches: dict[tuple[tuple[str, ...], str], float]) -> None:
        if record.ttl_minutes is None:
            return
        record.expires_at = now + record.ttl_minutes * 60
        self.state.refresh(record)
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
                None if put.text is not None else put.value,
                index=put.index,
                texts=put.texts if put.text is None else None,
                ttl_minutes=put.ttl,
                expires_at=expires,
            )
            if put.text is not None:
                chunks, payload["value_chunks"] = vals.chunk_payloads(
                    list(put.namespace), put.key, put.text, self._chunk_chars
                )
                del payload["value"]
                payload["text"] = put.text[: vals.PREVIEW_CHARS]
                drafts.extend(self._draft(vals.ITEM_CHUNK, chunk) for chunk in chunks)
            elif order := vals.key_order(put.value):
                payload["key_order"] = order
            drafts.append(self._draft(ev.ITEM_PUT, payload))
        for (namespace, key), expires_at in touches.items():
            drafts.append(self._draft(ev.ITEM_TOUCHED, ev.touched_payload(namespace, key, expires_at)))
        return drafts

    def _draft(self, event_type: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"type": event_type, "payload": payload, "actor": self.actor}

    def sweep_expired(self) -> int:
        """Delete every expired item (one ``store.item.deleted`` with reason ``ttl_expired`` each), then hand the
        expired keys and the last delete's seq to ``on_expired`` (the LangGraph store erases them there)."""
        with self._lock:
            self.check_open()
            self._catch_up()
            expired = self.state.expired(time.time())
            if not expired:
                return 0
            drafts = [self._draft(ev.ITEM_DELETED, ev.deleted_payload(ns, key, "ttl_expired")) for ns, key in expired]
            written = self.log.append_many(self.session, drafts)
            self._absorb(written, {})
        if self.on_expired is not None:  # outside the lock: the erasure calls back into on_erased
            self.on_expired(expired, written[-1].seq)
        return len(expired)

    def close(self) -> None:
        """Stop the sweeper and release the derived file; every later call raises ``ClosedError``."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
        if self._sweeper is not None:
            self._sweeper.stop(timeout=1.0)
        with self._lock:
            self.db.close()
            if self._temporary is not None:
                self._temporary.cleanup()


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
