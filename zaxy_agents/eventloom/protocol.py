"""The storage protocol every Eventloom backend implements (embedded JSONL, PostgreSQL).

Surfaces and domain code depend on this protocol, never on a backend class, so backends are interchangeable
and run the same contract tests.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol, runtime_checkable

from .citations import Citation
from .models import Event, EventDraft, EventHead, SessionSummary, VerifyReport


@runtime_checkable
class EventLog(Protocol):
    """Append-only, hash-chained, per-session event storage."""

    def append(
        self, session: str, type: str, payload: dict[str, Any] | None = None, *, actor: str = "agent"
    ) -> Event: ...

    def append_many(self, session: str, drafts: Iterable[EventDraft | dict[str, Any]]) -> list[Event]: ...

    def replay(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Event]: ...

    def replay_envelopes(
        self, session: str, from_seq: int = 1, to_seq: int | None = None
    ) -> Iterator[dict[str, Any]]: ...

    def get(self, session: str, seq: int) -> Event: ...

    def lines_at(self, keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], bytes]:
        """The stored, newline-terminated lines of the ``(session, seq)`` keys that exist (read-side checks)."""
        ...

    def resolve(self, citation: str | Citation) -> Event: ...

    def head(self, session: str) -> EventHead | None: ...

    def has_session(self, session: str) -> bool: ...

    def sessions(self) -> list[SessionSummary]: ...

    def verify(self, session: str) -> VerifyReport: ...

    def sync(self) -> None: ...

    def close(self) -> None: ...
