"""The Eventloom on PostgreSQL: the same hash chain, citations and verification as the JSONL files, shared by
every worker on every host that points ``ZAXY_BACKEND`` at one server.

Storage (see :mod:`.log_schema`): one row per event holding the exact canonical line, one head row per
session. Drafts are validated and redacted by the same :func:`prepare_draft` as the embedded backend and
sealed by the same code, so a PostgreSQL event and a JSONL event with equal fields have equal bytes.

Writers of one session serialise on its head row. An append first tries a single statement that moves the
head from the ``(seq, hash)`` this process last saw and inserts the batch in the same statement; when another
writer got there first (or this process never saw the head) it locks the head row ``FOR UPDATE`` in a
transaction, checks the tail event against the head, seals the batch and runs that statement again. Either
way a batch is one atomic statement: readers see all of it or none of it, and a writer killed mid-append
leaves nothing behind. Writers of different sessions never wait for each other.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import weakref
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from zaxy_agents.errors import ConflictError, IntegrityError, InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.canonical import GENESIS_HASH, encode_line, event_hash
from zaxy_agents.eventloom.chain import check_range, draft_fields
from zaxy_agents.eventloom.citations import Citation
from zaxy_agents.eventloom.drafts import PreparedDraft, prepare_draft
from zaxy_agents.eventloom.erasure import erased_line, is_erased
from zaxy_agents.eventloom.integrity import SessionReader, decode_line, line_problem
from zaxy_agents.eventloom.models import Event, EventDraft, EventHead, SessionSummary, VerifyReport, event_from_envelope
from zaxy_agents.eventloom.protocol import EventLog, LogCapability
from zaxy_agents.eventloom.resolve import resolve_citation
from zaxy_agents.eventloom.sealing import json_string, seal
from zaxy_agents.eventloom.validation import DEFAULT_MAX_PAYLOAD_BYTES, validate_durability, validate_session_id
from zaxy_agents.eventloom.verifier import REPAIR_TYPE, ChainVerifier
from zaxy_agents.storage.postgres.connect import (
    acquire_pool,
    probe_connection,
    release_pool,
    server_version,
    unavailable,
)
from zaxy_agents.storage.postgres.dsn import PostgresOptions, redact_dsn
from zaxy_agents.storage.postgres.migrations import ensure_schema, migration_state
from zaxy_agents.storage.status import BackendStatus

from .log_schema import MIGRATIONS
from .log_sql import LAST_SEQ, PAGE_BYTES, PAGE_ROWS, STATEMENTS


class PostgresEventLog(EventLog):
    """Append-only, hash-chained event logs in PostgreSQL; implements the ``EventLog`` protocol.

    ``schema_mode``: ``auto`` (default) creates the tables in an empty schema and refuses a schema with pending
    migrations; ``apply`` applies pending migrations; ``check`` only refuses; ``skip`` opens whatever is there
    (for status reports). ``durability="batch"`` turns off ``synchronous_commit`` for this process's
    connections: a crash of the server (not of this process) can lose the last fraction of a second.
    """

    capabilities = frozenset({LogCapability.BULK_HASHES, LogCapability.CONTINUE_IMPORT})

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        durability: str = "fsync",
        max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
        schema_mode: str = "auto",
        options: PostgresOptions | None = None,
    ) -> None:
        validate_durability(durability)
        self.dsn = dsn
        self.options = options or PostgresOptions.from_env(schema=schema)
        self.schema = self.options.schema
        self.durability = durability
        self.max_payload_bytes = max_payload_bytes
        self.location = redact_dsn(dsn)
        self._sql = {name: text.replace("{schema}", f'"{self.schema}"') for name, text in STATEMENTS.items()}
        self._heads: dict[str, tuple[int, str]] = {}  # (seq, hash) this process wrote or checked last
        self._contended: set[str] = set()  # sessions where another writer moved the head since our last append
        # Events a streaming read excluded because their bytes do not match their hash: {session: {seq: why}}.
        self.integrity_problems: dict[str, dict[int, str]] = {}
        probe = probe_connection(dsn, self.options)
        try:
            self.server_version = server_version(probe)
            self.migrations = ensure_schema(probe, self.schema, MIGRATIONS, schema_mode)
        except psycopg.Error as exc:
            raise unavailable(dsn, exc) from exc
        finally:
            probe.close()
        configure = _asynchronous_commit if durability == "batch" else None
        self._pool = acquire_pool(dsn, self.options, configure=configure, name=f"zaxy-{self.schema}")
        self._closed = False
        atexit.register(_close_quietly, weakref.ref(self))

    # ------------------------------------------------------------------ writing
    def append(self, session: str, type: str, payload: dict[str, Any] | None = None, *, actor: str = "agent") -> Event:
        """Append one event and return it (with ``.citation``). Raises before writing on bad input."""
        draft = prepare_draft(type, {} if payload is None else payload, actor, self.max_payload_bytes)
        return event_from_envelope(self.append_prepared(session, [draft])[-1])

    def append_many(
        self, session: str, drafts: Iterable[EventDraft | dict[str, Any]], *, wait_for_flush: bool = True
    ) -> list[Event]:
        """Append several events in one statement (one transaction). All-or-nothing validation.

        ``wait_for_flush=False`` commits without waiting for the server's WAL flush (see :class:`RelaxedCommits`).
        """
        prepared = []
        for index, draft in enumerate(drafts):
            kind, payload, actor = draft_fields(draft, index)
            prepared.append(
                prepare_draft(kind, payload, actor, self.max_payload_bytes, field_prefix=f"events[{index}].")
            )
        if not prepared:
            return []
        stored = self.append_prepared(session, prepared, wait_for_flush=wait_for_flush)
        return [event_from_envelope(envelope) for envelope in stored]

    def append_prepared(
        self, session: str, drafts: list[PreparedDraft], *, wait_for_flush: bool = True
    ) -> list[dict[str, Any]]:
        """Seal and store validated drafts; returns their envelopes (the pydantic-free path for hooks)."""
        validate_session_id(session)
        statement = self._sql["append" if wait_for_flush else "append_relaxed"]
        try:
            with self._pool.connection() as conn:
                known = self._heads.get(session)
                if known is not None and session not in self._contended:
                    envelopes = self._try_append(conn, session, drafts, known, statement)
                    if envelopes is not None:
                        return envelopes
                    self._contended.add(session)  # another writer is active here: lock first from now on
                with conn.transaction():
                    head = self._lock_head(conn, session)
                    envelopes = self._try_append(conn, session, drafts, head, statement)
                    if envelopes is None:  # impossible while we hold the row lock
                        raise IntegrityError(f"the head of session {session!r} moved under its lock")
                if head == known:  # nobody else wrote since our last append: go back to the one-statement path
                    self._contended.discard(session)
                return envelopes
        except pg_errors.UniqueViolation as exc:
            self._heads.pop(session, None)
            raise IntegrityError(
                f"session {session!r} already has events after the seq its head row records (rows were added "
                "outside Zaxy)",
                field="session",
                remediation="Run `zaxy verify --session-id <session>`; the table was modified outside Zaxy.",
            ) from exc
        except psycopg.Error as exc:
            raise unavailable(self.dsn, exc) from exc

    def repair(self, session: str, *, actor: str = "zaxy", dry_run: bool = False) -> dict[str, Any]:
        """Let a session whose last event does not verify continue: that event stays as it is (excluded from
        reads, reported by ``verify``) and an ``eventloom.repaired`` record acknowledging it is appended.

        Rows are never rewritten; a PostgreSQL row holds no torn bytes, so there is nothing to set aside.
        """
        validate_session_id(session)
        report: dict[str, Any] = {"session": session, "repaired": False, "set_aside": [], "acknowledged": []}
        try:
            with self._pool.connection() as conn, conn.transaction():
                row = conn.execute(self._sql["lock_head"], (session,)).fetchone()
                if row is None or not row[0]:
                    raise NotFoundError(f"no session {session!r}", field="session", remediation="See `zaxy sessions`.")
                head = (int(row[0]), str(row[1]))
                tail = conn.execute(self._sql["line"], (session, head[0])).fetchone()
                line = None if tail is None else bytes(tail[0]) + b"\n"
                envelope = None if line is None else decode_line(line)
                problem = "its last event cannot be read" if envelope is None else line_problem(line, envelope)
                if problem is None:
                    report["note"] = "nothing to repair"
                    return report
                report["acknowledged"] = [{"seq": head[0], "problem": problem}]
                if dry_run:
                    return report
                payload = {
                    "ranges": [],
                    "set_aside": [],
                    "acknowledged": report["acknowledged"],
                    "reason": "the last event does not verify; it stays excluded from every read",
                }
                drafts = [PreparedDraft(type=REPAIR_TYPE, actor=actor, payload=payload)]
                envelopes = self._try_append(conn, session, drafts, head, self._sql["append"])
                if envelopes is None:
                    raise ConflictError(f"session {session!r} moved during the repair", remediation="Run it again.")
        except psycopg.Error as exc:
            raise unavailable(self.dsn, exc) from exc
        self.integrity_problems.pop(session, None)
        return {**report, "repaired": True, "record_seq": envelopes[0]["seq"], "record_hash": envelopes[0]["hash"]}

    def scrub(self, session: str, seqs: list[int], record_seq: int, *, whole_session: bool = False) -> int:
        """Remove the content of ``seqs`` (recorded by the erasure event at ``record_seq``): each row's line is
        replaced by its erased form in one transaction (a spec-1 tombstone also loses its ``event_id``), then the
        table is vacuumed so the old row versions are gone from it. Returns how many events changed."""
        validate_session_id(session)
        wanted = sorted({seq for seq in seqs if 1 <= seq <= LAST_SEQ})
        changed, shrink = 0, 0
        try:
            with self._pool.connection() as conn:
                with conn.transaction():
                    conn.execute(self._sql["lock_head"], (session,))
                    rows = conn.execute(self._sql["lines_at"], ([session] * len(wanted), wanted)).fetchall()
                    for _session, seq, stored in rows:
                        line = bytes(stored)
                        envelope = decode_line(line + b"\n")
                        if envelope is None or envelope.get("seq") != seq or is_erased(envelope):
                            continue
                        erased = erased_line(envelope, record_seq)[:-1]
                        tombstone = b'"tombstone":' in erased and "tombstone" not in envelope
                        conn.execute(self._sql["scrub"], (erased, "" if tombstone else envelope["id"], session, seq))
                        changed, shrink = changed + 1, shrink + len(line) - len(erased)
                    if changed:
                        conn.execute(self._sql["shrink"], (shrink, session))
                if changed:
                    conn.execute(self._sql["vacuum"])
        except psycopg.Error as exc:
            raise unavailable(self.dsn, exc) from exc
        return changed

    def session_names(self) -> list[str]:
        """Every session (PostgreSQL reads heads from their rows, so a damaged event never hides one)."""
        return [summary.session for summary in self.sessions()]

    def _lock_head(self, conn: psycopg.Connection[Any], session: str) -> tuple[int, str]:
        """Lock the session's head row (creating it for a new session) and check the tail event it names."""
        row = conn.execute(self._sql["lock_head"], (session,)).fetchone()
        if row is None:
            conn.execute(self._sql["create_head"], (session, GENESIS_HASH))
            row = conn.execute(self._sql["lock_head"], (session,)).fetchone()
        head = (int(row[0]), str(row[1]))
        if head[0] and head != self._heads.get(session):
            # A new statement after the lock: it sees the tail that the previous lock holder committed.
            tail = conn.execute(self._sql["line"], (session, head[0])).fetchone()
            _check_tail(session, head, None if tail is None else bytes(tail[0]))
        return head

    def _try_append(
        self,
        conn: psycopg.Connection[Any],
        session: str,
        drafts: list[PreparedDraft],
        head: tuple[int, str],
        statement: str,
    ) -> list[dict[str, Any]] | None:
        """Seal ``drafts`` after ``head`` and store them if the head is still there; ``None`` if it moved.

        The batch travels as two parameters, not one array per column: the concatenated lines (bytea) and one
        tab-separated row of columns per event (``seq, hash, prev_hash, id, type, actor, timestamp, offset,
        length``). None of those fields can hold a tab or newline (actors reject control characters), and
        adapting a single str and bytes costs the client a quarter of what eight Python lists do.
        """
        seq, prev = head
        session_json = json_string(session)
        envelopes: list[dict[str, Any]] = []
        rows: list[str] = []
        chunks: list[bytes] = []
        offset = 1  # PostgreSQL substring() counts from 1
        count = len(drafts)
        for position, draft in enumerate(drafts, start=1):
            seq += 1
            envelope, line = seal(draft, seq, prev, session, session_json, (position, count) if count > 1 else None)
            size = len(line) - 1  # stored without the newline
            rows.append(
                f"{seq}\t{envelope['hash']}\t{prev}\t{envelope['id']}\t{envelope['type']}\t{envelope['actor']}\t"
                f"{envelope['timestamp']}\t{offset}\t{size}"
            )
            chunks.append(line[:-1])
            offset += size
            envelopes.append(envelope)
            prev = envelope["hash"]
        params = {
            "rows": "\n".join(rows),
            "lines": b"".join(chunks),
            "session": session,
            "seq": seq,
            "hash": prev,
            "size": offset - 1 + len(drafts),
            "old_seq": head[0],
            "old_hash": head[1],
        }
        if conn.execute(statement, params, prepare=True).rowcount != len(drafts):
            return None
        self._heads[session] = (seq, prev)
        return envelopes

    def import_lines(self, session: str, lines: Iterable[tuple[dict[str, Any], bytes]], after: tuple[int, str]) -> int:
        """Append already-sealed, checked lines after ``after`` (the head the caller compared against) with one
        COPY in one transaction: the whole import lands or none of it does."""
        validate_session_id(session)
        count, size, last = 0, 0, after
        try:
            with self._pool.connection() as conn, conn.transaction():
                head = self._lock_head(conn, session)
                if head != after:
                    raise ConflictError(
                        f"session {session!r} changed during the import (head is now seq {head[0]})",
                        field="session",
                        remediation="Re-run the import: events already present are skipped.",
                    )
                with conn.cursor().copy(self._sql["copy"]) as copy:
                    for envelope, line in lines:
                        copy.write_row(
                            (
                                session,
                                envelope["seq"],
                                envelope["hash"],
                                envelope["prev_hash"],
                                envelope["id"],
                                envelope["type"],
                                envelope["actor"],
                                envelope["timestamp"],
                                line[:-1],
                            )
                        )
                        count, size, last = count + 1, size + len(line), (envelope["seq"], envelope["hash"])
                if count:
                    conn.execute(self._sql["move_head"], (last[0], last[1], size, session))
        except pg_errors.DataError as exc:
            raise InvalidRequestError(
                f"an imported event has a value PostgreSQL cannot store: {exc}".strip(),
                field="path",
                remediation="Check the event timestamps (UTC ISO-8601 such as 2026-01-01T00:00:00.000000Z).",
            ) from exc
        except psycopg.Error as exc:
            raise unavailable(self.dsn, exc) from exc
        self._heads[session] = last
        return count

    def sync(self) -> None:
        """Nothing to flush: every append is committed before it returns."""

    def close(self) -> None:
        """Release the connection pool (shared with this process's other components). Safe to call twice."""
        if not self._closed:
            self._closed = True
            release_pool(self._pool)

    def __enter__(self) -> PostgresEventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
        reader = SessionReader(session, from_seq, strict=False, problems=self._problems(session))
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

    def _problems(self, session: str) -> dict[int, str]:
        problems = self.integrity_problems.get(session)
        if problems is None:
            problems = self.integrity_problems.setdefault(session, {})
        return problems

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
            session: SessionReader(session, 1, strict=False, problems=self._problems(session)) for session in wanted
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


def _check_tail(session: str, head: tuple[int, str], line: bytes | None) -> None:
    """Refuse to chain onto a tail event whose stored bytes no longer match the head (as JSONL does)."""
    intact = False
    if line is not None:
        with contextlib.suppress(ValueError, TypeError):
            envelope = json.loads(line)
            intact = (
                isinstance(envelope, dict)
                and envelope.get("hash") == head[1] == event_hash(envelope)
                and encode_line(envelope) == line + b"\n"
            )
    if not intact:
        raise IntegrityError(
            f"the last event of session {session!r} (seq {head[0]}) does not match its hash",
            field="session",
            remediation="Run `zaxy verify --session-id <session>`; the log was modified outside Zaxy.",
        )


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


def _asynchronous_commit(conn: psycopg.Connection[Any]) -> None:
    conn.execute("SET synchronous_commit = off")


def _close_quietly(ref: weakref.ReferenceType[PostgresEventLog]) -> None:
    log = ref()
    if log is not None:
        with contextlib.suppress(Exception):
            log.close()
