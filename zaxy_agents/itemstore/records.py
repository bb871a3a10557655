"""The materialised form of one store item (what the log's ``store.item.*`` events add up to)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal


@dataclass(slots=True, eq=False)
class ItemRecord:
    """One live item. ``order`` is ``(namespace birth, item birth)``: unranked search returns items in it.

    ``created_at`` is kept across updates (it is the first put since the item last did not exist);
    ``updated_at`` is the latest put's event time. ``expires_at`` is epoch seconds (``None``: never expires);
    ``persisted_expires_at`` is the expiry the log currently records, so read refreshes can be coalesced.
    """

    uid: int
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    order: tuple[int, int]
    index: Literal[False] | list[str] | None
    seq: int
    ttl_minutes: float | None = None
    expires_at: float | None = None
    persisted_expires_at: float | None = None

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and self.expires_at <= now
