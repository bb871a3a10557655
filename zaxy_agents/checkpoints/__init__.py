"""Checkpoint state behind the LangGraph checkpointer: checkpoints, blobs, pending writes, versions.

The log's ``checkpoint.*`` events are the source of truth; :class:`CheckpointStore` materialises them per
thread. Surfaces reach it through ``MemoryFabric.checkpoint_store()``.
"""

from .events import CHECKPOINT_EVENT_TYPES, TRANSCRIPT_TURN
from .service import CheckpointStore
from .sessions import DEFAULT_SESSION_PREFIX, thread_session
from .writes import next_version

__all__ = [
    "CHECKPOINT_EVENT_TYPES",
    "DEFAULT_SESSION_PREFIX",
    "TRANSCRIPT_TURN",
    "CheckpointStore",
    "next_version",
    "thread_session",
]
