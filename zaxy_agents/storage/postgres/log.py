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

This module is the write side and the log's lifecycle; reading, verification and status are
:mod:`.log_reads` (the base class).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import weakref
from collections.abc import Iterable
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from zaxy_agents.errors import ConflictError, IntegrityError, InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.canonical import GENESIS_HASH, encode_line, event_hash
from zaxy_agents.eventloom.chain import draft_fields
from zaxy_agents.eventloom.drafts import PreparedDraft, prepare_draft
from zaxy_agents.eventloom.erasure import ERASURE_TYPE, erased_line, is_erased, listed_form, range_forms
from zaxy_agents.eventloom.integrity import decode_line, line_problem
from zaxy_agents.eventloom.models import Event, EventDraft, event_from_envelope
from zaxy_agents.eventloom.protocol import EventLog, LogCapability
from zaxy_agents.eventloom.sealing import json_string, seal
from zaxy_agents.eventloom.validation import DEFAULT_MAX_PAYLOAD_BYTES, validate_durability, validate_session_id
from zaxy_agents.eventloom.verifier import REPAIR_TYPE
from zaxy_agents.storage.postgres.connect import (
    acquire_pool,
    probe_connection,
    release_pool,
    server_version,
    unavailable,
)
from zaxy_agents.storage.postgres.dsn import PostgresOptions, redact_dsn
from zaxy_agents.storage.postgres.migrations import ensure_schema

from .log_reads import PostgresLogReads
from .log_schema import MIGRATIONS
from .log_sql import LAST_SEQ, STATEMENTS


class PostgresEventLog(PostgresLogReads, EventLog):
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
                    keys = [*wanted, record_seq]
                    rows = conn.execute(self._sql["lines_at"], ([session] * len(keys), keys)).fetchall()
                    lines = {seq: bytes(stored) for _session, seq, stored in rows}
                    record = decode_line(lines.pop(record_seq, b"") + b"\n")
                    forms = range_forms(record.get("payload")) if record and record.get("type") == ERASURE_TYPE else {}
                    for seq in wanted:
                        line = lines.get(seq)
                        envelope = None if line is None else decode_line(line + b"\n")
                        if line is None or envelope is None or envelope.get("seq") != seq or is_erased(envelope):
                            continue
                        erased = erased_line(envelope, record_seq, listed_form(forms, seq, envelope))[:-1]
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


def _asynchronous_commit(conn: psycopg.Connection[Any]) -> None:
    conn.execute("SET synchronous_commit = off")


def _close_quietly(ref: weakref.ReferenceType[PostgresEventLog]) -> None:
    log = ref()
    if log is not None:
        with contextlib.suppress(Exception):
            log.close()
