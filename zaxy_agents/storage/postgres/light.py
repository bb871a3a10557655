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
        self.cache_root = settings.eventloom_dir  # the hooks of one workspace share its local folder
