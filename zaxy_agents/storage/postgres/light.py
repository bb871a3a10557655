"""The PostgreSQL backend's light log for the hook fast path (psycopg's start-up makes it ~0.2 s slower than
the files backend's; pydantic is still not needed to append)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..registry import LogLight
from .log import PostgresEventLog

if TYPE_CHECKING:
    from zaxy_agents.config import ZaxySettings


class PostgresLightLog(LogLight):
    """Always ``fsync`` durability and the ``auto`` schema mode, whatever the settings say: a hook's event must
    be committed before its short-lived process exits."""

    def __init__(self, settings: ZaxySettings) -> None:
        super().__init__(PostgresEventLog(settings.backend, max_payload_bytes=settings.max_payload_bytes))
        self.cache_root = _cache_folder(settings)


def _cache_folder(settings: ZaxySettings) -> str:
    """Standing-state caches of hooks on a server backend: in the user's cache folder, one per server and schema
    (never in whatever folder the process runs in); a cache is used only while the log still holds its event."""
    import os
    from hashlib import sha256

    from .dsn import PostgresOptions, redact_dsn

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    identity = f"{redact_dsn(settings.backend)}\x1f{PostgresOptions.from_env().schema}"
    return os.path.join(base, "zaxy", "postgres-" + sha256(identity.encode()).hexdigest()[:16])
