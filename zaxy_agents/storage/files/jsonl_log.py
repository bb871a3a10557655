"""The embedded Eventloom backend: one hash-chained JSONL file per session under a folder.

``JsonlEventLog`` validates and redacts drafts, hands them to the per-session :class:`SessionFile` engine,
and returns pydantic :class:`Event` objects with their citations. It implements the
:class:`~zaxy_agents.eventloom.protocol.EventLog` protocol that every backend shares.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
import weakref
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from zaxy_agents.errors import InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.canonical import GENESIS_HASH
from zaxy_agents.eventloom.chain import check_line as _check_line
from zaxy_agents.eventloom.chain import check_range as _check_range
from zaxy_agents.eventloom.chain import draft_fields as _draft_fields
from zaxy_agents.eventloom.drafts import prepare_draft
from zaxy_agents.eventloom.models import Event, EventDraft, EventHead, SessionSummary, VerifyReport, event_from_envelope
from zaxy_agents.eventloom.protocol import EventLog, LogCapability
from zaxy_agents.eventloom.validation import DEFAULT_MAX_PAYLOAD_BYTES, validate_session_id

from .jsonl_file import PreparedDraft, SessionFile, classify_torn_tail

DURABILITY_MODES = ("fsync", "batch")
DEFAULT_GROUP_COMMIT_SECONDS = 0.05


class JsonlEventLog(EventLog):
    """Append-only, hash-chained JSONL logs, one file per session, under ``root``.

    ``durability="fsync"`` (default) makes every append durable before it returns. ``"batch"`` is group
    commit: appends are written immediately (visible to other processes, safe if this process dies) and a
    background flusher fsyncs them every ``group_commit_seconds``; an OS crash can lose at most that window.
    """

    capabilities = frozenset({LogCapability.CHANGE_TOKEN})

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        durability: str = "fsync",
        max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
        group_commit_seconds: float = DEFAULT_GROUP_COMMIT_SECONDS,
    ) -> None:
        if durability not in DURABILITY_MODES:
            raise InvalidRequestError(
                f"unknown durability mode {durability!r}",
                field="durability",
                remediation=f"Use one of {', '.join(DURABILITY_MODES)}.",
            )
        self.root = Path(root)
        self.durability = durability
        self.max_payload_bytes = max_payload_bytes
        self._files: dict[str, SessionFile] = {}
        self._files_lock = threading.Lock()
        self._closed = False
        if durability == "batch":
            _start_group_commit(self, group_commit_seconds)
        atexit.register(_close_quietly, weakref.ref(self))

    # ------------------------------------------------------------------ writing
    def append(
        self,
        session: str,
        type: str,
        payload: dict[str, Any] | None = None,
        *,
        actor: str = "agent",
    ) -> Event:
        """Append one event and return it (with ``.citation``). Raises before writing on bad input."""
        draft = prepare_draft(type, {} if payload is None else payload, actor, self.max_payload_bytes)
        return event_from_envelope(self._file(session).append([draft])[-1])

    def append_many(self, session: str, drafts: Iterable[EventDraft | dict[str, Any]]) -> list[Event]:
        """Append several events with one lock, one write and one fsync. All-or-nothing validation."""
        prepared = []
        for index, draft in enumerate(drafts):
            kind, payload, actor = _draft_fields(draft, index)
            prepared.append(
                prepare_draft(kind, payload, actor, self.max_payload_bytes, field_prefix=f"events[{index}].")
            )
        if not prepared:
            return []
        return [event_from_envelope(envelope) for envelope in self._file(session).append(prepared)]

    def append_prepared(self, session: str, drafts: list[PreparedDraft]) -> list[dict[str, Any]]:
        """Seal and store drafts ``prepare_draft`` already checked; their envelopes (no pydantic)."""
        return self._file(session).append(drafts) if drafts else []

    def sync(self) -> None:
        """Force pending group-commit writes to disk."""
        for handle in list(self._files.values()):
            handle.sync()

    def close(self) -> None:
        """fsync pending writes and release file handles. Safe to call twice."""
        self._closed = True
        with self._files_lock:
            for handle in self._files.values():
                handle.close()
            self._files.clear()

    def __enter__(self) -> JsonlEventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reading
    def replay(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Event]:
        """Stream events ``from_seq..to_seq`` (inclusive) without loading the whole file."""
        validate_session_id(session)
        _check_range(from_seq, to_seq)
        validate = Event.model_validate_json
        for _offset, line in self._file(session).iter_lines(from_seq, to_seq):
            yield validate(line)

    def replay_envelopes(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[dict[str, Any]]:
        """Like :meth:`replay` but yields plain dicts: the fast path for projection and indexing."""
        validate_session_id(session)
        _check_range(from_seq, to_seq)
        loads = json.loads
        for _offset, line in self._file(session).iter_lines(from_seq, to_seq):
            yield loads(line)

    def replay_lines(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[bytes]:
        """The stored lines byte for byte, newline included (what ``zaxy eventloom export`` writes)."""
        validate_session_id(session)
        _check_range(from_seq, to_seq)
        for _offset, line in self._file(session).iter_lines(from_seq, to_seq):
            yield line

    def import_lines(self, session: str, lines: Iterable[tuple[dict[str, Any], bytes]], after: tuple[int, str]) -> int:
        """Create a session from checked lines (see :mod:`.transfer`); only new sessions can be imported."""
        from .jsonl_import import import_new_session

        validate_session_id(session)
        return import_new_session(self.root, session, lines, after)

    def head(self, session: str) -> EventHead | None:
        """Seq and hash of the last event (O(1): reads the tail only); ``None`` for an empty session."""
        tail = self._file(session).read_tail()
        return None if tail is None else EventHead(session=session, seq=tail[0], hash=tail[1])

    def change_token(self, session: str) -> tuple[int, int] | None:
        """A cheap value that changes whenever the session's file does (one ``stat``; ``None``: no log yet).

        Views that follow a session compare it before each read instead of reading the tail.
        """
        try:
            stat = os.stat(self._file(session).path)
        except FileNotFoundError:
            return None
        return (stat.st_ino, stat.st_size)

    def last_written(self, session: str) -> tuple[tuple[int, int], int] | None:
        """``(change token, seq)`` as of this process's last append to ``session`` (no I/O).

        When :meth:`change_token` still equals that token, nobody appended since, so a view that applied
        events up to that seq is current without reading anything.
        """
        handle = self._files.get(session)
        return None if handle is None else handle.last_written()

    def has_session(self, session: str) -> bool:
        validate_session_id(session)
        return (self.root / f"{session}.jsonl").exists()

    def sessions(self) -> list[SessionSummary]:
        """Every session in the folder with its event count (from the tail, not a scan)."""
        summaries = []
        if not self.root.is_dir():
            return summaries
        for path in sorted(self.root.glob("*.jsonl")):
            session = path.name[: -len(".jsonl")]
            try:
                validate_session_id(session)
            except InvalidRequestError:
                continue
            head = self.head(session)
            stat = path.stat()
            summaries.append(
                SessionSummary(
                    session=session,
                    event_count=head.seq if head else 0,
                    head_hash=head.hash if head else None,
                    size_bytes=stat.st_size,
                    modified=datetime.fromtimestamp(stat.st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                )
            )
        return summaries

    def verify(self, session: str) -> VerifyReport:
        """Recompute the whole chain; report the first broken seq and why (tampering, gaps, reordering)."""
        validate_session_id(session)
        path = self.root / f"{session}.jsonl"
        if not path.exists():
            raise NotFoundError(
                f"no log for session {session!r} in {self.root}",
                field="session",
                remediation="List sessions with `zaxy sessions`.",
            )
        expected_seq, prev, count = 1, GENESIS_HASH, 0
        previous: dict[str, Any] | None = None
        with open(path, "rb", buffering=1 << 20) as handle:
            for line in handle:
                if not line.endswith(b"\n"):
                    return _torn_tail_report(session, line, previous, count)
                problem = _check_line(line, expected_seq, prev, session)
                if problem is not None:
                    return VerifyReport(
                        session=session,
                        ok=False,
                        event_count=count,
                        head_hash=None if count == 0 else prev,
                        first_broken_seq=expected_seq,
                        reason=problem,
                    )
                previous = json.loads(line)
                prev = previous["hash"]
                expected_seq += 1
                count += 1
        return VerifyReport(session=session, ok=True, event_count=count, head_hash=prev if count else None)

    # ------------------------------------------------------------------ internals
    def _file(self, session: str) -> SessionFile:
        handle = self._files.get(session)
        if handle is None:
            validate_session_id(session)
            with self._files_lock:
                handle = self._files.setdefault(session, SessionFile(self.root, session, durability=self.durability))
        return handle


def _torn_tail_report(session: str, torn: bytes, previous: dict[str, Any] | None, count: int) -> VerifyReport:
    head = None if previous is None else previous["hash"]
    kind = classify_torn_tail(torn, previous)
    if kind == "complete":
        head = json.loads(torn)["hash"]
    if kind in ("terminator_altered", "tampered"):
        return VerifyReport(
            session=session,
            ok=False,
            event_count=count,
            head_hash=head,
            first_broken_seq=count + 1,
            reason="the final event's line terminator was altered (a crash never does this)"
            if kind == "terminator_altered"
            else "the final line is a complete event that does not match its hash and lacks its newline: it was "
            "modified (a crash only ever leaves part of a line)",
        )
    note = (
        "final event lacks only its newline (completed on the next append)"
        if kind == "complete"
        else f"torn final line of {len(torn)} bytes, never acknowledged (moved aside on the next append)"
    )
    return VerifyReport(
        session=session,
        ok=True,
        event_count=count + (kind == "complete"),
        head_hash=head,
        torn_tail_bytes=0 if kind == "complete" else len(torn),
        warnings=[note],
    )


def _close_quietly(ref: weakref.ReferenceType[JsonlEventLog]) -> None:
    log = ref()
    if log is not None:
        with contextlib.suppress(OSError):
            log.close()


def _start_group_commit(log: JsonlEventLog, interval: float) -> None:
    """A daemon thread that fsyncs dirty session files every ``interval`` seconds (batch durability)."""
    ref = weakref.ref(log)

    def run() -> None:
        stop = threading.Event()
        while not stop.wait(interval):
            target = ref()
            if target is None or target._closed:
                return
            with contextlib.suppress(OSError):
                target.sync()
            del target

    threading.Thread(target=run, name="eventloom-group-commit", daemon=True).start()
