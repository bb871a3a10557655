"""The read side of the Eventloom on PostgreSQL: streaming replay in keyset pages, point and bulk reads, the
chain verification and the backend status.

Why a module of its own: :mod:`.log` is about writing one hash chain from many workers (the head-row protocol,
sealing, imports, repair and erasure); everything here only reads rows that writing left, with the same checks
as the JSONL files (every line is verified against its hash as it is read). :class:`PostgresLogReads` is the base
of :class:`~zaxy_agents.storage.postgres.log.PostgresEventLog`, which sets the connection pool and statements.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from zaxy_agents.errors import NotFoundError
from zaxy_agents.eventloom.chain import check_range
from zaxy_agents.eventloom.citations import Citation
from zaxy_agents.eventloom.integrity import SessionReader
from zaxy_agents.eventloom.models import Event, EventHead, SessionSummary, VerifyReport
from zaxy_agents.eventloom.resolve import resolve_citation
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.eventloom.verifier import ChainVerifier
from zaxy_agents.storage.postgres.connect import unavailable
from zaxy_agents.storage.postgres.migrations import migration_state
from zaxy_agents.storage.status import BackendStatus

from .log_schema import MIGRATIONS
from .log_sql import LAST_SEQ, PAGE_BYTES, PAGE_ROWS


class PostgresLogReads:
    """Reading an Eventloom stored in PostgreSQL (the pool, statements and location are set by the log)."""

    dsn: str
    schema: str
    location: str
    server_version: str
    integrity_problems: dict[str, dict[int, str]]
    _sql: dict[str, str]
    _pool: Any

    # ------------------------------------------------------------------ reading
    def replay(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Event]:
        """Stream events ``from_seq..to_seq`` (inclusive) in keyset pages (bounded memory).

        Every line is checked against its hash as it is read: an event whose bytes do not match raises
        :class:`IntegrityError` naming it (it is never returned), as does a row that is not an event.
        """
        reader = SessionReader(session, from_seq, strict=True)
        validate = Event.model_validate
        for _seq, line in self._pages(session, from_seq, to_seq):
            yield validate(reader.decode(line + b"\n"))

    def replay_envelopes(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[dict[str, Any]]:
        """Like :meth:`replay` but yields plain dicts: the fast path for projection, indexes and views.

        An event whose bytes do not match its hash is skipped (recorded in :attr:`integrity_problems`); a row
        that is not an event stops the replay with :class:`IntegrityError`.
        """
        reader = SessionReader(
            session, from_seq, strict=False, problems=self.integrity_problems.setdefault(session, {})
        )
        for _seq, line in self._pages(session, from_seq, to_seq):
            envelope = reader.decode(line + b"\n")
            if envelope is not None:
                yield envelope

    def lines_at(self, keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], bytes]:
        """The stored lines (newline-terminated) of the ``(session, seq)`` keys that exist, in one query."""
        wanted = sorted({(session, seq) for session, seq in keys if 1 <= seq <= LAST_SEQ})
        if not wanted:
            return {}
        rows = self._fetchall(self._sql["lines_at"], ([k[0] for k in wanted], [k[1] for k in wanted]))
        return {(str(session), int(seq)): bytes(line) + b"\n" for session, seq, line in rows}

    def replay_lines(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[bytes]:
        """The stored lines, newline-terminated: exactly the bytes of the equivalent JSONL file."""
        for _seq, line in self._pages(session, from_seq, to_seq):
            yield line + b"\n"

    def get(self, session: str, seq: int) -> Event:
        """The event at ``seq``; :class:`NotFoundError` when the session or seq does not exist."""
        validate_session_id(session)
        check_range(seq, seq)
        row = self._fetchone(self._sql["line"], (session, seq)) if seq <= LAST_SEQ else None
        if row is None:
            raise NotFoundError(
                f"session {session!r} has no event {seq}",
                field="seq",
                remediation="List sessions with `zaxy sessions` and pick a seq between 1 and the event count.",
            )
        return Event.model_validate(SessionReader(session, seq, strict=True).decode(bytes(row[0]) + b"\n"))

    def hashes_and_types(self, keys: list[tuple[str, int]]) -> dict[tuple[str, int], tuple[str, str]]:
        """``(session, seq) -> (hash, type)`` of the events that exist, in one query (citation checks in bulk:
        a checkout verifies every citation it hands out, which would otherwise be one round trip each)."""
        keys = [(session, seq) for session, seq in keys if 1 <= seq <= LAST_SEQ]
        if not keys:
            return {}
        rows = self._fetchall(self._sql["hashes_and_types"], ([k[0] for k in keys], [k[1] for k in keys]))
        return {(str(session), int(seq)): (str(digest), str(kind)) for session, seq, digest, kind in rows}

    def resolve(self, citation: str | Citation) -> Event:
        """Resolve a citation to its event, refusing one whose hash prefix does not match."""
        return resolve_citation(citation, self.get)

    def head(self, session: str) -> EventHead | None:
        """Seq and hash of the last event (one row read); ``None`` for an empty session."""
        validate_session_id(session)
        row = self._fetchone(self._sql["head"], (session,))
        if row is None or not row[0]:
            return None
        return EventHead(session=session, seq=int(row[0]), hash=str(row[1]))

    def has_session(self, session: str) -> bool:
        return self.head(session) is not None

    def sessions(self) -> list[SessionSummary]:
        """Every session with its event count, from the head rows (no scan of the events)."""
        rows = self._fetchall(self._sql["sessions"], ())
        return [
            SessionSummary(session=s, event_count=int(n), head_hash=h, size_bytes=int(size), modified=modified)
            for s, n, h, size, modified in rows
        ]

    def change_tokens(self, prefix: str) -> dict[str, object]:
        """Every session's ``(head seq, head hash)`` from the head rows in one query (``change_token`` per session)."""
        rows = self._fetchall(self._sql["heads_with_prefix"], (prefix,))
        return {str(session): (int(seq), str(digest)) for session, seq, digest in rows}

    def replay_sessions(self, sessions: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """Every readable envelope of each session in one query (like :meth:`replay_envelopes`: an event whose
        bytes do not match its hash is skipped and recorded; a row that is not an event raises)."""
        wanted = list(dict.fromkeys(sessions))
        for session in wanted:
            validate_session_id(session)
        found: dict[str, list[dict[str, Any]]] = {session: [] for session in wanted}
        if not wanted:
            return found
        readers = {
            session: SessionReader(session, 1, strict=False, problems=self.integrity_problems.setdefault(session, {}))
            for session in wanted
        }
        for session, line in self._fetchall(self._sql["sessions_lines"], (wanted,)):
            envelope = readers[session].decode(bytes(line) + b"\n")
            if envelope is not None:
                found[session].append(envelope)
        return found

    def verify(self, session: str) -> VerifyReport:
        """Recompute the whole chain from the stored lines; also check the columns and the head row."""
        validate_session_id(session)
        row = self._fetchone(self._sql["head"], (session,))
        if row is None or not row[0]:
            if self._fetchone(self._sql["any_event"], (session,))[0]:
                return _broken(session, 0, None, 1, "events exist but the session head row is missing or reset")
            raise NotFoundError(
                f"no log for session {session!r} in {self.location} (schema {self.schema})",
                field="session",
                remediation="List sessions with `zaxy sessions`.",
            )
        head_seq, head_hash = int(row[0]), str(row[1])
        verifier = ChainVerifier(session)
        for values in self._pages(session, 1, head_seq, verify=True):
            line = values[-1]
            if not verifier.feed(line + b"\n"):
                break
            problem = _column_problem(values, verifier.last_envelope)  # type: ignore[arg-type]
            if problem is not None:
                verifier.problem, verifier.broken_seq, verifier.count = problem, verifier.count, verifier.count - 1
                break
        if verifier.ok:
            verifier.finish()
        if not verifier.ok:
            seq = verifier.broken_seq or 1
            return _broken(session, seq - 1, None, seq, verifier.problem or "broken")
        count, prev = verifier.count, verifier.prev
        if count < head_seq:
            reason = f"event {count + 1} is missing (the session head records {head_seq} events)"
            return _broken(session, count, prev if count else None, count + 1, reason)
        if prev != head_hash:
            reason = "the session head row records a different hash than the last event (the head was modified)"
            return _broken(session, count, prev, head_seq, reason)
        return VerifyReport(session=session, ok=True, event_count=count, head_hash=prev)

    def status(self) -> BackendStatus:
        """Backend, server version, migration state and totals for ``zaxy backend status``."""
        with self._connection() as conn:
            state = migration_state(conn, self.schema, MIGRATIONS)
            try:
                sessions, events, size = conn.execute(self._sql["totals"]).fetchone()
            except pg_errors.UndefinedTable:
                sessions, events, size = 0, 0, 0
        fresh = all(record.state == "pending" for record in state.records)
        problems = [] if fresh else [_migration_problem(r.name, r.state) for r in state.records if r.state != "applied"]
        return BackendStatus(
            backend="postgresql",
            location=self.location,
            server_version=self.server_version,
            schema_name=self.schema,
            schema_ok=not problems,
            migrations=state.records,
            session_count=int(sessions),
            event_count=int(events),
            size_bytes=int(size),
            problems=problems,
            note="the schema is created on first use (or by `zaxy backend migrate`)" if fresh else None,
        )

    # ------------------------------------------------------------------ internals
    def _pages(self, session: str, from_seq: int, to_seq: int | None, *, verify: bool = False) -> Iterator[Any]:
        """Rows ``from_seq..to_seq`` in keyset pages; the connection goes back to the pool between pages."""
        validate_session_id(session)
        check_range(from_seq, to_seq)
        last = LAST_SEQ if to_seq is None else min(to_seq, LAST_SEQ)
        query = self._sql["verify_page" if verify else "page"]
        cursor = from_seq
        while cursor <= last:
            rows = self._fetchall(query, (session, cursor, last, PAGE_ROWS, PAGE_BYTES))
            if not rows:
                return
            page_bytes = 0
            for row in rows:
                line = bytes(row[-1])
                page_bytes += len(line)
                yield (*row[:-1], line)
            # A page cut short by PAGE_BYTES holds at least PAGE_BYTES; a short page below that is the end.
            if len(rows) < PAGE_ROWS and page_bytes < PAGE_BYTES:
                return
            cursor = int(rows[-1][0]) + 1

    @contextlib.contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg.Error as exc:
            raise unavailable(self.dsn, exc) from exc

    def _fetchone(self, query: str, params: tuple[Any, ...]) -> Any:
        with self._connection() as conn:
            return conn.execute(query, params).fetchone()

    def _fetchall(self, query: str, params: tuple[Any, ...]) -> list[Any]:
        with self._connection() as conn:
            return conn.execute(query, params).fetchall()


def _migration_problem(name: str, state: str) -> str:
    fixes = {
        "pending": "run `zaxy backend migrate`",
        "unknown": "the database is newer than this code: upgrade zaxy-agents",
        "changed": "its checksum differs from this code's: reinstall an official release",
    }
    return f"migration {name} is {state}: {fixes.get(state, 'see docs/deployment.md')}"


def _column_problem(values: tuple[Any, ...], envelope: dict[str, Any]) -> str | None:
    """Why the queryable columns disagree with the stored line (an UPDATE of a column), or ``None``."""
    seq, event_hash_, prev_hash, event_id, kind, actor, recorded_at, _line = values
    if "tombstone" in envelope:  # an erased spec-1 event or unreadable bytes: only its place is known
        return None if seq == envelope["seq"] else f"the seq column says {seq!r} but the line says {envelope['seq']!r}"
    pairs = {
        "seq": (seq, envelope["seq"]),
        "hash": (event_hash_, envelope["hash"]),
        "prev_hash": (prev_hash, envelope["prev_hash"]),
        "event_id": (event_id, envelope["id"]),
        "type": (kind, envelope["type"]),
        "actor": (actor, envelope["actor"]),
    }
    for column, (stored, expected) in pairs.items():
        if stored != expected:
            return f"the {column} column says {stored!r} but the stored line says {expected!r} (the row was modified)"
    try:
        stamp_matches = datetime.fromisoformat(envelope["timestamp"]) == recorded_at
    except (TypeError, ValueError):
        stamp_matches = False
    if not stamp_matches:
        return f"the recorded_at column says {recorded_at} but the line says {envelope['timestamp']!r}"
    return None


def _broken(session: str, count: int, head: str | None, seq: int, reason: str) -> VerifyReport:
    return VerifyReport(
        session=session, ok=False, event_count=count, head_hash=head, first_broken_seq=seq, reason=reason
    )
