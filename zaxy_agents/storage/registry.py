"""The one place that knows which backends exist and which one a location names.

A location is a URI (``postgresql://...``, ``memory://``) or a folder path (``./.eventloom``: the files
backend). :data:`DEFAULT_REGISTRY` is built here, explicitly, from :data:`BUILTIN_BACKENDS`: no module
registers itself on import, and a backend's module is imported only when a location names it (so the files
default never loads psycopg). A third-party backend is one more :class:`BackendEntry`::

    registry = DEFAULT_REGISTRY.with_entry(BackendEntry("sqlite", "my_pkg.backend:SqliteBackend", ("sqlite://",)))
    fabric = MemoryFabric(ZaxySettings.resolve(backend="sqlite:///tmp/m.db"), backend=registry.open(settings))

Stdlib only (the hook fast path resolves its light log through here): ``typing`` is imported for checkers only.
"""

from __future__ import annotations

from importlib import import_module

from zaxy_agents.config import BACKEND_JSONL, redact_uri
from zaxy_agents.errors import InvalidRequestError

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

    from zaxy_agents.config import ZaxySettings
    from zaxy_agents.eventloom.protocol import EventLog

    from .protocols import LightLog, StorageBackend


FOLDER_SETTINGS = (BACKEND_JSONL, "files", "embedded")  # backend settings meaning "the Eventloom folder"


class BackendEntry:
    """One backend: its name, the URI schemes it claims (none: it takes folder paths), and where its code is.

    ``backend`` and ``light`` are ``"module:attribute"`` strings (imported on first use) or the objects
    themselves. ``light`` is optional: without it the hook path uses the full backend's log through
    :class:`LogLight`. ``redact`` (default: hide URI passwords)
    turns a location into something safe to print.
    """

    __slots__ = ("backend", "light", "name", "redact", "schemes")

    def __init__(
        self,
        name: str,
        backend: Any,
        schemes: tuple[str, ...] = (),
        *,
        light: Any = None,
        redact: Any = None,
    ) -> None:
        self.name = name
        self.backend = backend
        self.schemes = schemes
        self.light = light
        self.redact = redact

    def claims(self, location: str) -> bool:
        """Whether ``location`` names this backend (a scheme-less entry takes every location without ``://``)."""
        if self.schemes:
            return location.startswith(self.schemes)
        return "://" not in location

    def backend_class(self) -> type[StorageBackend]:
        return _load(self.backend)

    def safe_location(self, location: str) -> str:
        return redact_uri(location) if self.redact is None else _load(self.redact)(location)

    def __repr__(self) -> str:
        return f"BackendEntry({self.name!r}, schemes={self.schemes!r})"


class BackendRegistry:
    """An ordered, immutable set of backends: the first entry that claims a location wins."""

    __slots__ = ("entries",)

    def __init__(self, entries: tuple[BackendEntry, ...]) -> None:
        names = [entry.name for entry in entries]
        if len(set(names)) != len(names):
            raise ValueError(f"backend names must be unique: {names}")
        self.entries = entries

    def with_entry(self, entry: BackendEntry) -> BackendRegistry:
        """A registry that also knows ``entry`` (ahead of the built-in ones, so it may claim their schemes)."""
        return BackendRegistry((entry, *(e for e in self.entries if e.name != entry.name)))

    def names(self) -> list[str]:
        return [entry.name for entry in self.entries]

    def entry_for(self, location: str) -> BackendEntry:
        for entry in self.entries:
            if entry.claims(location):
                return entry
        schemes = sorted(scheme for entry in self.entries for scheme in entry.schemes)
        raise InvalidRequestError(
            f"no storage backend for {location.split('://', 1)[0]}:// locations",
            field="backend",
            remediation=f"Use a folder path, or a URI starting with one of: {', '.join(schemes)}.",
        )

    def location_of(self, settings: ZaxySettings) -> str:
        """The settings' storage location: the backend URI, or the Eventloom folder when the backend setting is
        ``jsonl`` (also spelled ``files`` or ``embedded``)."""
        backend = settings.backend
        if backend.lower() in FOLDER_SETTINGS:
            return settings.eventloom_dir
        if "://" in backend:
            return backend
        raise InvalidRequestError(
            f"unknown backend {backend!r} (expected 'jsonl' or a backend URI such as postgresql://...)",
            field="backend",
            remediation="Set --backend / ZAXY_BACKEND to 'jsonl' (embedded default) or postgresql://user:pass@host/db.",
        )

    def describe(self, settings: ZaxySettings) -> tuple[str, str]:
        """``(backend name, location safe to print)`` without opening or importing the backend."""
        location = self.location_of(settings)
        entry = self.entry_for(location)
        return entry.name, entry.safe_location(location)

    def open(self, settings: ZaxySettings) -> StorageBackend:
        """The backend object for ``settings`` (cheap: pieces are opened when asked for)."""
        return self.entry_for(self.location_of(settings)).backend_class()(settings)

    def open_light(self, settings: ZaxySettings) -> LightLog:
        """The stdlib-only log the hook fast path appends to and reads the tail of."""
        entry = self.entry_for(self.location_of(settings))
        if entry.light is None:
            backend = entry.backend_class()(settings)
            return LogLight(backend.open_log(), backend)
        return _load(entry.light)(settings)


class LogLight:
    """The light-log interface over a full :class:`EventLog` (for backends without a stdlib-only light path)."""

    cache_root: str | None = None

    def __init__(self, log: EventLog, owner: StorageBackend | None = None) -> None:
        self._log = log
        self._owner = owner
        self.cache_root = None if owner is None else owner.cache_root

    def append_prepared(
        self, session: str, prepared: list[Any], *, lock_timeout: float | None = None, spool: bool = False
    ) -> list[dict[str, Any]]:
        return self._log.append_prepared(session, prepared)

    def head(self, session: str) -> tuple[int, str] | None:
        head = self._log.head(session)
        return None if head is None else (head.seq, head.hash)

    def lines(self, session: str, from_seq: int, to_seq: int) -> Any:
        return self._log.replay_lines(session, from_seq, to_seq)

    def newest_lines(self, session: str, count: int) -> tuple[int, list[bytes]]:
        head = self.head(session)
        if head is None:
            return 0, []
        return head[0], list(self.lines(session, max(1, head[0] - count + 1), head[0]))[::-1]

    def lines_at(self, keys: list[tuple[str, int]]) -> dict[tuple[str, int], bytes]:
        return self._log.lines_at(keys)

    def session_names(self) -> list[str]:
        return [summary.session for summary in self._log.sessions()]

    def close(self) -> None:
        self._log.close()
        if self._owner is not None:
            self._owner.close()


def _load(target: Any) -> Any:
    if not isinstance(target, str):
        return target
    module, _, attribute = target.partition(":")
    return import_module(module).__dict__[attribute]


BUILTIN_BACKENDS = (
    BackendEntry(
        "postgresql",
        "zaxy_agents.storage.postgres.backend:PostgresBackend",
        ("postgresql://", "postgres://"),
        light="zaxy_agents.storage.postgres.light:PostgresLightLog",
    ),
    BackendEntry("memory", "zaxy_agents.storage.memory.backend:MemoryBackend", ("memory://",)),
    BackendEntry(
        "files", "zaxy_agents.storage.files.backend:FilesBackend", light="zaxy_agents.storage.files.light:FilesLightLog"
    ),
)

DEFAULT_REGISTRY = BackendRegistry(BUILTIN_BACKENDS)
