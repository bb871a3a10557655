"""A PostgreSQL log whose appends do not wait for the server's WAL flush (the backend's group-commit handle)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from zaxy_agents.eventloom.citations import Citation
from zaxy_agents.eventloom.models import Event, EventDraft, EventHead, SessionSummary, VerifyReport
from zaxy_agents.eventloom.protocol import EventLog, SealedLine

from .log import PostgresEventLog

if TYPE_CHECKING:
    from zaxy_agents.eventloom.drafts import PreparedDraft


class RelaxedCommits(EventLog):
    """``log`` whose ``append_many`` does not wait for the WAL flush; everything else is ``log``'s own.

    For writes whose loss on a *server* crash is harmless because a later synchronous commit covers them: the
    WAL is sequential, so the next synchronous commit of any transaction flushes every earlier asynchronous
    one. LangGraph's pending writes use it (the analogue of the files backend's group-commit handle): durable
    against a worker crash at once, against a server crash once the next checkpoint commits (or within the
    server's ``wal_writer_delay``); a lost pending write only means its task runs again on resume.
    Closing it closes nothing: the log belongs to its opener.
    """

    capabilities = PostgresEventLog.capabilities

    def __init__(self, log: PostgresEventLog) -> None:
        self._log = log
        self.max_payload_bytes = log.max_payload_bytes

    def append(self, session: str, type: str, payload: dict[str, Any] | None = None, *, actor: str = "agent") -> Event:
        return self._log.append(session, type, payload, actor=actor)

    def append_many(self, session: str, drafts: Iterable[EventDraft | dict[str, Any]]) -> list[Event]:
        return self._log.append_many(session, drafts, wait_for_flush=False)

    def append_prepared(self, session: str, drafts: list[PreparedDraft]) -> list[dict[str, Any]]:
        return self._log.append_prepared(session, drafts)

    def replay(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Event]:
        return self._log.replay(session, from_seq, to_seq)

    def replay_envelopes(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[dict[str, Any]]:
        return self._log.replay_envelopes(session, from_seq, to_seq)

    def replay_lines(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[bytes]:
        return self._log.replay_lines(session, from_seq, to_seq)

    def import_lines(self, session: str, lines: Iterable[SealedLine], after: tuple[int, str]) -> int:
        return self._log.import_lines(session, lines, after)

    def get(self, session: str, seq: int) -> Event:
        return self._log.get(session, seq)

    def hashes_and_types(self, keys: list[tuple[str, int]]) -> dict[tuple[str, int], tuple[str, str]]:
        return self._log.hashes_and_types(keys)

    def resolve(self, citation: str | Citation) -> Event:
        return self._log.resolve(citation)

    def head(self, session: str) -> EventHead | None:
        return self._log.head(session)

    def has_session(self, session: str) -> bool:
        return self._log.has_session(session)

    def sessions(self) -> list[SessionSummary]:
        return self._log.sessions()

    def verify(self, session: str) -> VerifyReport:
        return self._log.verify(session)

    def sync(self) -> None:
        self._log.sync()

    def close(self) -> None:
        """The wrapped log is closed by whoever opened it."""
