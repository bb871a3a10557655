"""The storage contract: one backend object per engine hands out every storage piece of one memory.

The pieces' own contracts are declared by the domain that uses them (:class:`~zaxy_agents.eventloom.protocol.
EventLog`, :class:`~zaxy_agents.projection.protocol.ProjectionStore`, :class:`~zaxy_agents.retrieval.
vector_index.DurableVectors`); this module declares the object that hands them out, and the stdlib-only
:class:`LightLog` the hook fast path uses.

As in langgraph's checkpoint base, the required methods are abstract and the **optional capabilities** are
declared here with a default, named in :class:`Capability`; a backend overrides the optional methods it
offers and lists them in ``capabilities`` (``zaxy_agents.storage.conformance`` checks that the two agree).
Nothing outside :mod:`zaxy_agents.storage.registry` asks which backend it has: callers use these methods.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from .status import BackendStatus

if TYPE_CHECKING:
    from zaxy_agents.config import ZaxySettings
    from zaxy_agents.eventloom.protocol import EventLog
    from zaxy_agents.projection.protocol import ProjectionStore
    from zaxy_agents.retrieval.vector_index import DurableVectors

SchemaMode = Literal["auto", "apply", "check", "skip"]


class Capability(StrEnum):
    """Optional parts of a backend, by name (a backend lists those it overrides)."""

    PERSISTENT = "persistent"  # memory outlives the process (every backend except memory://)
    SHARED_GRAPH = "shared_graph"  # open_graph() is written by many processes at once (catch-up per session)
    SHARED_VECTORS = "shared_vectors"  # open_vectors(): vectors stored once in the backend, shared by workers
    GROUP_COMMIT = "group_commit"  # group_commit_log(): a handle whose appends skip the per-append flush
    MIGRATIONS = "migrations"  # migrate(): a versioned schema that `zaxy backend migrate` upgrades
    GRAPH_SCHEMA_PLAN = "graph_schema_plan"  # graph_schema_plan(): the graph migrations as data, no database


class StorageBackend(ABC):
    """One storage engine for one memory (a folder, a server schema, a process).

    Built by the registry from ``ZaxySettings``; owns what it opens for the fabric and closes it in
    :meth:`close` (after the fabric closed its own layers).
    """

    name: ClassVar[str]  # the registry name: files | postgresql | memory | ...
    graph_name: ClassVar[str]  # what its graph store is called in status reports: kuzu | postgresql | memory
    capabilities: ClassVar[frozenset[Capability]] = frozenset()

    def __init__(self, settings: ZaxySettings) -> None:
        self.settings = settings

    # ------------------------------------------------------------------ required
    @property
    @abstractmethod
    def location(self) -> str:
        """Where memory lives, safe to print (a folder, a server URI without its password)."""

    @property
    @abstractmethod
    def derived_path(self) -> Path:
        """This process's folder for derived, rebuildable state (snapshots, caches, local indexes).

        Never inside the log itself; distinct per deployment, so switching backends never mixes state."""

    @abstractmethod
    def open_log(self, *, schema_mode: SchemaMode = "auto") -> EventLog:
        """The Eventloom. ``schema_mode`` matters to backends with :attr:`Capability.MIGRATIONS`."""

    @abstractmethod
    def open_graph(self) -> ProjectionStore:
        """The graph of record for the projection; raises ``LockedError`` when another process holds it."""

    @abstractmethod
    def status(self, log: EventLog) -> BackendStatus:
        """What ``zaxy backend status`` reports: kind, location, schema state, how much memory it holds."""

    # ------------------------------------------------------------------ optional (see Capability)
    def open_vectors(self) -> DurableVectors:
        """Vectors stored in the backend and shared by every worker (:attr:`Capability.SHARED_VECTORS`)."""
        raise NotImplementedError(f"the {self.name} backend keeps vectors in each process")

    def group_commit_log(self, log: EventLog) -> EventLog:
        """A handle on ``log`` whose appends do not wait for their own flush (:attr:`Capability.GROUP_COMMIT`);
        the next synchronous append (or a short timer) makes them durable. Default: ``log`` itself."""
        return log

    def migrate(self) -> list[str]:
        """Apply pending migrations of every component; the names applied now (:attr:`Capability.MIGRATIONS`)."""
        return []

    @classmethod
    def graph_schema_plan(cls) -> dict[str, Any]:
        """``{"backend", "migrations"}`` of the graph store, without opening anything."""
        return {"backend": cls.name, "migrations": []}

    @property
    def cache_root(self) -> str | None:
        """A folder every process of this memory shares, for caches derived from the log (the working-set
        folds); ``None`` (the default): keep such caches in each process's memory."""
        return None

    def close(self) -> None:  # noqa: B027 - optional: most backends open nothing on their own behalf
        """Close what this backend opened on its own behalf (group-commit handles, temporary folders)."""


class LightLog(Protocol):
    """The hook fast path's view of a log: plain dicts and bytes, no pydantic (see ``fabric/light.py``).

    Implementations must import only the standard library (and ``zaxy_agents`` stdlib-only modules).
    """

    cache_root: str | None  # a folder every process of this memory shares for log-derived caches (None: none)

    def append_prepared(
        self, session: str, prepared: list[Any], *, lock_timeout: float | None = None, spool: bool = False
    ) -> list[dict[str, Any]]:
        """Append validated, redacted drafts with one lock and one flush; the stored envelopes. ``lock_timeout``:
        how long a backend with a per-session lock may wait for it; past it, with ``spool``, the drafts wait in
        the backend's spool for the next writer (``[]`` is returned), else the backend's timeout error is raised.
        Backends that never wait on a lock ignore both."""
        ...

    def head(self, session: str) -> tuple[int, str] | None:
        """``(seq, hash)`` of the last event, ``None`` for a session without events."""
        ...

    def lines(self, session: str, from_seq: int, to_seq: int) -> Iterable[bytes]:
        """The stored lines ``from_seq..to_seq`` (each with its newline), oldest first."""
        ...

    def newest_lines(self, session: str, count: int) -> tuple[int, list[bytes]]:
        """``(head seq, the last count stored lines newest first)``, tolerant of a torn tail; ``(0, [])``."""
        ...

    def lines_at(self, keys: list[tuple[str, int]]) -> dict[tuple[str, int], bytes]:
        """The stored lines (newline-terminated) of the ``(session, seq)`` keys that exist (read-side checks)."""
        ...

    def session_names(self) -> list[str]: ...

    def close(self) -> None: ...
