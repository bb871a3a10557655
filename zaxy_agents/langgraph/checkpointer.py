"""ZaxyCheckpointer: a drop-in LangGraph ``BaseCheckpointSaver`` on the Eventloom.

Replace ``InMemorySaver()`` / ``SqliteSaver(...)`` with ``ZaxyCheckpointer.from_path(".eventloom")``: every
checkpoint is a hash-chained, citable event in the thread's session, growing message lists are stored as
deltas, and new messages also become ``transcript.turn`` memory. See docs/langgraph.md.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Self

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from zaxy_agents.checkpoints import next_version
from zaxy_agents.errors import NotFoundError
from zaxy_agents.eventloom.redaction import check_policy, redaction_policy
from zaxy_agents.fabric import MemoryFabric

from .connect import open_fabric, remove_temporary, setup_backend


class ZaxyCheckpointer(BaseCheckpointSaver[str]):
    """LangGraph checkpointer whose threads live in Eventloom sessions ``<session_prefix>.<thread_id>``.

    Args:
        fabric: a shared :class:`MemoryFabric`; ``None`` opens one at ``ZAXY_EVENTLOOM_PATH`` or ``./.eventloom``
            (owned, closed by :meth:`close`).
        serde: LangGraph serializer for channel values and writes (default ``JsonPlusSerializer``; use
            ``EncryptedSerializer`` for sensitive state: redaction cannot see inside serialized values).
        capture_transcripts: also write each new message as a ``transcript.turn`` event (default on).
        session_prefix: prefix of the per-thread session ids.
        redaction: the secret-redaction policy of this saver's writes. Default ``None``: ``values`` for checkpoint
            data and metadata (secret-shaped text is redacted; key names never change a value, so ``{"token": 42}``
            and ``list(filter={"token": "abc"})`` round-trip) and ``standard`` for captured transcript turns;
            ``"standard"`` or ``"off"`` apply to everything it writes. See docs/eventloom.md#redaction.
        concurrent_writes: what to do when another process (or another saver) wrote a checkpoint to the same
            thread since this one last saw it, so that this ``put`` forks the thread: ``"warn"`` (default: save,
            log a warning and append a ``checkpoint.concurrent_write`` event) or ``"error"`` (strict: refuse the
            put with a ``ConflictError`` and write nothing).
    """

    def __init__(
        self,
        fabric: MemoryFabric | None = None,
        *,
        serde: SerializerProtocol | None = None,
        capture_transcripts: bool = True,
        session_prefix: str | None = None,
        redaction: str | None = None,
        concurrent_writes: str = "warn",
    ) -> None:
        super().__init__(serde=serde)
        self._redaction = None if redaction is None else check_policy(redaction)
        self._owns_fabric = fabric is None
        self._temporary: str | None = None
        self._fabric = fabric if fabric is not None else MemoryFabric.from_path()
        self._store = self._fabric.checkpoint_store(
            session_prefix=session_prefix, capture_transcripts=capture_transcripts, concurrent_writes=concurrent_writes
        )

    @classmethod
    def from_path(
        cls,
        eventloom_path: str | os.PathLike[str] | None = None,
        *,
        serde: SerializerProtocol | None = None,
        capture_transcripts: bool = True,
        session_prefix: str | None = None,
        redaction: str | None = None,
        concurrent_writes: str = "warn",
        **fabric_settings: Any,
    ) -> Self:
        """Open the checkpointer on the Eventloom folder at ``eventloom_path`` (``durability=`` passes through)."""
        saver = cls(
            MemoryFabric.from_path(eventloom_path, **fabric_settings),
            serde=serde,
            capture_transcripts=capture_transcripts,
            session_prefix=session_prefix,
            redaction=redaction,
            concurrent_writes=concurrent_writes,
        )
        saver._owns_fabric = True
        return saver

    @classmethod
    def from_conn_string(
        cls,
        conn_string: str | os.PathLike[str],
        *,
        eventloom_path: str | os.PathLike[str] | None = None,
        serde: SerializerProtocol | None = None,
        capture_transcripts: bool = True,
        session_prefix: str | None = None,
        concurrent_writes: str = "warn",
        redaction: str | None = None,
        **fabric_settings: Any,
    ) -> Self:
        """``SqliteSaver.from_conn_string`` / ``PostgresSaver.from_conn_string``, for a one-line migration.

        ``conn_string`` is an Eventloom folder, a ``postgresql://`` DSN (``eventloom_path`` then names the
        local folder for derived state, default ``ZAXY_EVENTLOOM_PATH`` or ``./.eventloom``) or ``":memory:"``
        (a temporary folder removed on close). Use it as LangGraph's: ``with ... as saver: saver.setup()``.
        """
        fabric, temporary = open_fabric(conn_string, eventloom_path, fabric_settings)
        saver = cls(
            fabric,
            serde=serde,
            capture_transcripts=capture_transcripts,
            session_prefix=session_prefix,
            concurrent_writes=concurrent_writes,
            redaction=redaction,
        )
        saver._owns_fabric, saver._temporary = True, temporary
        return saver

    def setup(self) -> None:
        """Create what the backend needs (idempotent): the folder, or check the PostgreSQL schema is current."""
        self._store.check_open()
        setup_backend(self._fabric)

    @property
    def fabric(self) -> MemoryFabric:
        return self._fabric

    def session_of(self, thread_id: str) -> str:
        """The Eventloom session holding ``thread_id``."""
        return self._store.session_of(thread_id)

    @property
    def captures_transcripts(self) -> bool:
        """Whether new messages become ``transcript.turn`` events (the memory nodes then leave turns to it)."""
        return self._store.capture_transcripts

    # ------------------------------------------------------------------ sync
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._store.get_tuple(config, self.serde)  # type: ignore[arg-type]

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        return self._store.list(config, self.serde, filter=filter, before=before, limit=limit)  # type: ignore[arg-type]

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        with redaction_policy(self._redaction):
            return self._store.put(config, checkpoint, metadata, new_versions, self.serde)  # type: ignore[arg-type,return-value]

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        with redaction_policy(self._redaction):
            self._store.put_writes(config, writes, task_id, task_path, self.serde)  # type: ignore[arg-type]

    def delete_thread(self, thread_id: str) -> None:
        """Delete the thread for real: a ``checkpoint.thread_deleted`` event hides it at once, then every event
        of its session (checkpoints, blobs, writes, transcript turns, the marker) is erased from the log and from
        every derived file (``MemoryFabric.erase_session``); an ``eventloom.erased`` record says when and by whom.
        The thread id stays usable: later puts continue the same chain."""
        with redaction_policy(self._redaction):
            self._store.delete_thread(thread_id)
        try:
            self._fabric.erase_session(
                self._store.session_of(thread_id), actor=self._store.actor, reason="delete_thread"
            )
        except NotFoundError:  # a thread that never had an event
            return

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        with redaction_policy(self._redaction):
            self._store.delete_for_runs(run_ids, self.serde)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        with redaction_policy(self._redaction):
            self._store.copy_thread(source_thread_id, target_thread_id, self.serde)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        with redaction_policy(self._redaction):
            self._store.prune(thread_ids, strategy, self.serde)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return self._store.delta_channel_history(config, channels, self.serde)  # type: ignore[arg-type]

    def get_next_version(self, current: str | None, channel: None) -> str:
        return next_version(current)

    # ------------------------------------------------------------------ async (writes off the event loop)
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.get_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return self.get_delta_channel_history(config=config, channels=channels)

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Release what this saver opened; every later call raises ``ClosedError`` (as SqliteSaver raises)."""
        if self._store.closed:
            return
        self._store.close(self.serde)  # type: ignore[arg-type]
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


class AsyncZaxyCheckpointer(ZaxyCheckpointer):
    """The name ``AsyncSqliteSaver`` / ``AsyncPostgresSaver`` users reach for, with an awaitable :meth:`setup`::

        async with AsyncZaxyCheckpointer.from_conn_string(DSN) as saver:
            await saver.setup()

    Every async method runs its file or database work in a worker thread (``ZaxyCheckpointer`` answers warm
    reads inline, which is faster but blocks the event loop for the time of a read): what a server's event
    loop wants, and what ``langgraph dev`` insists on.
    """

    async def setup(self) -> None:  # type: ignore[override]
        await asyncio.to_thread(ZaxyCheckpointer.setup, self)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        iterator = self.list(config, filter=filter, before=before, limit=limit)
        while True:
            item = await asyncio.to_thread(next, iterator, None)
            if item is None:
                return
            yield item

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return await asyncio.to_thread(self.get_delta_channel_history, config=config, channels=channels)
