"""Fabric operations for the LangGraph checkpointer: open a :class:`~zaxy_agents.checkpoints.CheckpointStore`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .service import FabricService

if TYPE_CHECKING:
    from zaxy_agents.checkpoints import CheckpointStore
    from zaxy_agents.eventloom.protocol import EventLog


class CheckpointService(FabricService):
    """Service: the checkpoint part of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def checkpoint_store(
        self,
        *,
        session_prefix: str | None = None,
        capture_transcripts: bool = True,
        actor: str = "langgraph",
        concurrent_writes: str = "warn",
    ) -> CheckpointStore:
        """Checkpoints of every LangGraph thread, one session per thread (``langgraph.<thread_id>``).

        With ``capture_transcripts`` (default) each new message in a checkpointed message list is also written
        as a ``transcript.turn`` event, so the graph's conversation becomes retrievable memory.
        ``concurrent_writes`` (``warn`` / ``error``): what a put that forks another writer's checkpoint does.
        """
        from zaxy_agents.checkpoints import DEFAULT_SESSION_PREFIX, CheckpointStore
        from zaxy_agents.storage.protocols import Capability

        store = CheckpointStore(
            self.log,
            session_prefix=session_prefix or DEFAULT_SESSION_PREFIX,
            capture_transcripts=capture_transcripts,
            actor=actor,
            writes_log=self._pending_writes_log,  # opened on the first pending write, not at construction
            concurrent_writes=concurrent_writes,
            index_dir=self.backend.derived_path / "checkpoints",  # per deployment, like the item store's state
            identity=str(self.backend.derived_path),
            # Workers of a shared backend (PostgreSQL) each have their own derived folder: a stored copy of a
            # thread's values there could outlive an erasure run by another worker, so none is kept.
            store_latest=Capability.SHARED_GRAPH not in self.backend.capabilities,
        )
        self.core.erase_hooks.append(store.on_erased)  # EraseService.on_erase, without building it
        return store

    def _pending_writes_log(self) -> EventLog:
        """A group-commit handle on the same log for pending writes (see ``CheckpointStore``).

        Checkpoints stay durable before ``put`` returns, and that flush also covers every write appended before
        it; a pending write alone is durable against a process crash at once and against an OS (or database
        server) crash within the group-commit window. Embedded: a ``batch``-durability log on the same folder;
        PostgreSQL: the same log committing without waiting for the WAL flush (``RelaxedCommits``).
        """
        return self.backend.group_commit_log(self.log)
