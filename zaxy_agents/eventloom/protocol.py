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
    """Append-only, hash-chained, per-session event storage.

    Reads are checked against the hash chain (docs/eventloom.md, "Read-side verification"): ``replay``, ``get``
    and ``resolve`` raise ``IntegrityError`` for an edited event; ``replay_envelopes`` skips it and records it in
    ``integrity_problems`` (session -> {seq: why}).
    """

    integrity_problems: dict[str, dict[int, str]]

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

    def session_names(self) -> list[str]:
        """Every session, including those whose log cannot be read (``sessions()`` reports them as damaged)."""
        ...

    def repair(self, session: str, *, actor: str = "zaxy", dry_run: bool = False) -> dict[str, Any]:
        """Set unreadable bytes aside and let a log whose last event does not verify continue (`zaxy repair`)."""
        ...

    def sync(self) -> None: ...

    def close(self) -> None: ...
