"""The log contract every Eventloom backend implements (files, PostgreSQL, in-memory, third-party).

Surfaces and domain code depend on this protocol, never on a backend class, so backends are interchangeable
and run the same conformance kit (:mod:`zaxy_agents.storage.conformance`).

Like langgraph's ``BaseCheckpointSaver``, the contract is one class: the required methods are bare
declarations, and the **optional capabilities** are declared here too, each with a correct default built on
the required methods. A backend inherits this class explicitly, overrides what it does better, and names what
it overrides in ``capabilities`` (the conformance kit checks that the two agree). Callers never probe with
``getattr``: they call the method, or ask ``LogCapability.X in log.capabilities`` when the choice changes
their own strategy.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from zaxy_agents.errors import IntegrityError, NotFoundError, ZaxyError

from .citations import Citation
from .models import Event, EventDraft, EventHead, SessionSummary, VerifyReport
from .resolve import resolve_citation

if TYPE_CHECKING:
    from .drafts import PreparedDraft

SealedLine = tuple[dict[str, Any], bytes]  # (envelope, its stored line with the newline)


class LogCapability(StrEnum):
    """Optional parts of the log contract a backend may do better than the default."""

    CHANGE_TOKEN = "change_token"  # change_token() is cheaper than head() (files: one stat), last_written() known
    BULK_HASHES = "bulk_hashes"  # hashes_and_types() checks many citations in one round trip
    CONTINUE_IMPORT = "continue_import"  # import_lines() can continue a session that already has events


@runtime_checkable
class EventLog(Protocol):
    """Append-only, hash-chained, per-session event storage.

    Reads are checked against the hash chain (docs/eventloom.md, "Read-side verification"): ``replay``, ``get``
    and ``resolve`` raise ``IntegrityError`` for an edited event; ``replay_envelopes`` skips it and records it in
    ``integrity_problems`` (session -> {seq: why}).
    """

    integrity_problems: dict[str, dict[int, str]]

    capabilities: ClassVar[frozenset[LogCapability]] = frozenset()
    max_payload_bytes: int

    # ------------------------------------------------------------------ required
    def append(
        self, session: str, type: str, payload: dict[str, Any] | None = None, *, actor: str = "agent"
    ) -> Event: ...

    def append_many(self, session: str, drafts: Iterable[EventDraft | dict[str, Any]]) -> list[Event]: ...

    def append_prepared(self, session: str, drafts: list[PreparedDraft]) -> list[dict[str, Any]]:
        """Seal and store drafts ``eventloom.drafts.prepare_draft`` already validated and redacted, with one
        lock and one flush; their stored envelopes as plain dicts (the hook path and importers use this)."""
        ...

    def replay(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Event]: ...

    def replay_envelopes(
        self, session: str, from_seq: int = 1, to_seq: int | None = None
    ) -> Iterator[dict[str, Any]]: ...

    def replay_lines(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[bytes]:
        """The stored canonical lines (each with its newline), byte for byte: export moves these."""
        ...

    def import_lines(self, session: str, lines: Iterable[SealedLine], after: tuple[int, str]) -> int:
        """Store already-checked lines after ``after`` = (seq, hash) of the session's head; returns how many.

        Without :attr:`LogCapability.CONTINUE_IMPORT` a backend imports only sessions it does not hold yet
        (and raises ``ConflictError`` otherwise)."""
        ...

    def get(self, session: str, seq: int) -> Event:
        """The event at ``seq``; :class:`NotFoundError` when the session or seq does not exist. Default: a
        one-event replay (override with a direct lookup where the engine has one)."""
        for event in self.replay(session, seq, seq):
            if event.seq != seq:
                raise IntegrityError(
                    f"line {seq} of session {session!r} holds seq {event.seq}",
                    field="session",
                    remediation="Run `zaxy verify`; the log was modified outside Zaxy.",
                )
            return event
        raise NotFoundError(
            f"session {session!r} has no event {seq}",
            field="seq",
            remediation="List sessions with `zaxy sessions` and pick a seq between 1 and the event count.",
        )

    def lines_at(self, keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], bytes]:
        """The stored, newline-terminated lines of the ``(session, seq)`` keys that exist (read-side checks)."""
        ...

    def resolve(self, citation: str | Citation) -> Event:
        """The event a citation names, refused when its hash prefix does not match (the same on every backend)."""
        return resolve_citation(citation, self.get)

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

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ optional (defaults on the required part)
    def change_token(self, session: str) -> object:
        """A value that changes whenever the session does (``None``: no log yet). Default: the head itself."""
        head = self.head(session)
        return None if head is None else (head.seq, head.hash)

    def change_tokens(self, prefix: str) -> dict[str, object]:
        """``change_token`` of every session whose id starts with ``prefix``, in one pass where the backend can
        (a follower of many sessions checks them all at once). Default: one ``change_token`` per session."""
        return {name: self.change_token(name) for name in self.session_names() if name.startswith(prefix)}

    def replay_sessions(self, sessions: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """Every readable envelope of each of ``sessions`` (whole, in seq order), in one round trip where the
        backend can: a reader that needs several small sessions at once (a checkpoint listing the newest
        threads) pays one query, not two per session. The caller bounds the sizes. Default: one
        ``replay_envelopes`` per session."""
        return {session: list(self.replay_envelopes(session)) for session in dict.fromkeys(sessions)}

    def last_written(self, session: str) -> tuple[object, int] | None:
        """``(change token, seq)`` as of this process's last append to ``session``, without I/O; ``None`` when
        unknown (the default)."""
        return None

    def hashes_and_types(self, keys: list[tuple[str, int]]) -> dict[tuple[str, int], tuple[str, str]]:
        """``(session, seq) -> (hash, type)`` of the events that exist (citation checks in bulk). Default: one
        ``get`` per key."""
        found: dict[tuple[str, int], tuple[str, str]] = {}
        for session, seq in keys:
            try:
                event = self.get(session, seq)
            except ZaxyError:
                continue
            found[(session, seq)] = (event.hash, event.type)
        return found
