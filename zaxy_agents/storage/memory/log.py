"""An Eventloom held in lists: the same canonical lines, hashes and citations as the files backend."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from zaxy_agents.errors import ConflictError, IntegrityError, InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.canonical import GENESIS_HASH
from zaxy_agents.eventloom.chain import check_line, check_range, draft_fields
from zaxy_agents.eventloom.drafts import PreparedDraft, prepare_draft
from zaxy_agents.eventloom.models import Event, EventDraft, EventHead, SessionSummary, VerifyReport, event_from_envelope
from zaxy_agents.eventloom.protocol import EventLog, LogCapability, SealedLine
from zaxy_agents.eventloom.validation import DEFAULT_MAX_PAYLOAD_BYTES, validate_session_id

from ..files.jsonl_file import _json_string, _seal
from ..files.jsonl_log import DURABILITY_MODES


class MemoryEventLog(EventLog):
    """Per session, the list of stored lines (each with its newline); one lock serialises appends."""

    capabilities = frozenset({LogCapability.CONTINUE_IMPORT})

    def __init__(self, *, durability: str = "fsync", max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES) -> None:
        if durability not in DURABILITY_MODES:  # nothing to flush, but the setting means the same everywhere
            raise InvalidRequestError(
                f"unknown durability mode {durability!r}",
                field="durability",
                remediation=f"Use one of {', '.join(DURABILITY_MODES)}.",
            )
        self.durability = durability
        self.max_payload_bytes = max_payload_bytes
        self.lines: dict[str, list[bytes]] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ writing
    def append(self, session: str, type: str, payload: dict[str, Any] | None = None, *, actor: str = "agent") -> Event:
        draft = prepare_draft(type, {} if payload is None else payload, actor, self.max_payload_bytes)
        return event_from_envelope(self.append_prepared(session, [draft])[-1])

    def append_many(self, session: str, drafts: Iterable[EventDraft | dict[str, Any]]) -> list[Event]:
        prepared = []
        for index, draft in enumerate(drafts):
            kind, payload, actor = draft_fields(draft, index)
            prepared.append(
                prepare_draft(kind, payload, actor, self.max_payload_bytes, field_prefix=f"events[{index}].")
            )
        return [event_from_envelope(envelope) for envelope in self.append_prepared(session, prepared)]

    def append_prepared(self, session: str, drafts: list[PreparedDraft]) -> list[dict[str, Any]]:
        validate_session_id(session)
        if not drafts:
            return []
        with self._lock:
            stored = self.lines.setdefault(session, [])
            seq, prev = self._checked_head(session)
            envelopes = []
            for draft in drafts:
                seq += 1
                envelope, line = _seal(draft, seq, prev, session, _json_string(session))
                stored.append(line)
                envelopes.append(envelope)
                prev = envelope["hash"]
            return envelopes

    def import_lines(self, session: str, lines: Iterable[SealedLine], after: tuple[int, str]) -> int:
        validate_session_id(session)
        with self._lock:
            if self._head(session) != after:
                raise ConflictError(
                    f"session {session!r} changed during the import",
                    field="session",
                    remediation="Re-run the import: events already present are skipped.",
                )
            imported = [line for _envelope, line in lines]
            self.lines.setdefault(session, []).extend(imported)
            return len(imported)

    def sync(self) -> None:
        """Nothing to flush."""

    def close(self) -> None:
        """The backend owns the data; closing a handle keeps it."""

    # ------------------------------------------------------------------ reading
    def replay_lines(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[bytes]:
        validate_session_id(session)
        check_range(from_seq, to_seq)
        stored = self.lines.get(session, [])
        yield from stored[from_seq - 1 : len(stored) if to_seq is None else to_seq]

    def replay_envelopes(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[dict[str, Any]]:
        for line in self.replay_lines(session, from_seq, to_seq):
            yield json.loads(line)

    def replay(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Event]:
        for line in self.replay_lines(session, from_seq, to_seq):
            yield Event.model_validate_json(line)

    def head(self, session: str) -> EventHead | None:
        validate_session_id(session)
        seq, digest = self._head(session)
        return None if seq == 0 else EventHead(session=session, seq=seq, hash=digest)

    def has_session(self, session: str) -> bool:
        validate_session_id(session)
        return bool(self.lines.get(session))

    def sessions(self) -> list[SessionSummary]:
        return [
            SessionSummary(
                session=session,
                event_count=len(stored),
                head_hash=self._head(session)[1],
                size_bytes=sum(len(line) for line in stored),
                modified=json.loads(stored[-1])["timestamp"][:19] + "Z",
            )
            for session, stored in sorted(self.lines.items())
            if stored
        ]

    def verify(self, session: str) -> VerifyReport:
        validate_session_id(session)
        if not self.lines.get(session):
            raise NotFoundError(f"no log for session {session!r}", field="session", remediation="List sessions.")
        prev = GENESIS_HASH
        for count, line in enumerate(self.lines[session]):
            problem = check_line(line, count + 1, prev, session)
            if problem is not None:
                head = None if count == 0 else prev
                return VerifyReport(
                    session=session,
                    ok=False,
                    event_count=count,
                    head_hash=head,
                    first_broken_seq=count + 1,
                    reason=problem,
                )
            prev = json.loads(line)["hash"]
        return VerifyReport(session=session, ok=True, event_count=len(self.lines[session]), head_hash=prev)

    def _checked_head(self, session: str) -> tuple[int, str]:
        """The head an append extends, refusing a last event that does not match its hash (as every backend)."""
        stored = self.lines.get(session)
        if not stored:
            return 0, GENESIS_HASH
        before = json.loads(stored[-2])["hash"] if len(stored) > 1 else GENESIS_HASH
        if check_line(stored[-1], len(stored), before, session) is not None:
            raise IntegrityError(
                f"the last event of session {session!r} (seq {len(stored)}) does not match its hash",
                field="session",
                remediation="Run `zaxy verify --session-id <session>`; the log was modified outside Zaxy.",
            )
        return self._head(session)

    def _head(self, session: str) -> tuple[int, str]:
        stored = self.lines.get(session)
        if not stored:
            return 0, GENESIS_HASH
        return len(stored), json.loads(stored[-1])["hash"]
