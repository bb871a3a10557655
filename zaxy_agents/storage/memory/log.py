"""An Eventloom held in lists: the same canonical lines, hashes and citations as the files backend."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from zaxy_agents.errors import ConflictError, IntegrityError, NotFoundError
from zaxy_agents.eventloom.canonical import GENESIS_HASH
from zaxy_agents.eventloom.chain import check_range, draft_fields
from zaxy_agents.eventloom.drafts import PreparedDraft, prepare_draft
from zaxy_agents.eventloom.erasure import ERASURE_TYPE, erased_line, is_erased, listed_form, range_forms
from zaxy_agents.eventloom.integrity import SessionReader, decode_line, line_problem
from zaxy_agents.eventloom.models import Event, EventDraft, EventHead, SessionSummary, VerifyReport, event_from_envelope
from zaxy_agents.eventloom.protocol import EventLog, LogCapability, SealedLine
from zaxy_agents.eventloom.sealing import json_string, seal
from zaxy_agents.eventloom.validation import DEFAULT_MAX_PAYLOAD_BYTES, validate_durability, validate_session_id
from zaxy_agents.eventloom.verifier import REPAIR_TYPE, ChainVerifier


class MemoryEventLog(EventLog):
    """Per session, the list of stored lines (each with its newline); one lock serialises appends."""

    capabilities = frozenset({LogCapability.CONTINUE_IMPORT})

    def __init__(self, *, durability: str = "fsync", max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES) -> None:
        validate_durability(durability)
        self.durability = durability
        self.max_payload_bytes = max_payload_bytes
        self.lines: dict[str, list[bytes]] = {}
        self.integrity_problems: dict[str, dict[int, str]] = {}
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
            count = len(drafts)
            for position, draft in enumerate(drafts, 1):
                seq += 1
                batch = (position, count) if count > 1 else None  # hashed: a whole batch is told from a cut one
                envelope, line = seal(draft, seq, prev, session, json_string(session), batch)
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

    def scrub(self, session: str, seqs: list[int], record_seq: int, *, whole_session: bool = False) -> int:
        """Replace the lines of ``seqs`` by their erased form (recorded by the erasure event at ``record_seq``);
        the old bytes are dropped from the list, so nothing holds them any more. Returns how many changed."""
        validate_session_id(session)
        changed = 0
        with self._lock:
            stored = self.lines.get(session, [])
            record = decode_line(stored[record_seq - 1]) if 1 <= record_seq <= len(stored) else None
            forms = range_forms(record.get("payload")) if record and record.get("type") == ERASURE_TYPE else {}
            for seq in sorted({seq for seq in seqs if 1 <= seq <= len(stored)}):
                envelope = decode_line(stored[seq - 1])
                if envelope is None or envelope.get("seq") != seq or is_erased(envelope):
                    continue
                stored[seq - 1] = erased_line(envelope, record_seq, listed_form(forms, seq, envelope))
                changed += 1
        return changed

    def repair(self, session: str, *, actor: str = "zaxy", dry_run: bool = False) -> dict[str, Any]:
        """As on PostgreSQL: a list holds no torn bytes, so repair only acknowledges a last event that does not
        verify (it stays excluded from reads) with an ``eventloom.repaired`` record."""
        validate_session_id(session)
        report: dict[str, Any] = {"session": session, "repaired": False, "set_aside": [], "acknowledged": []}
        with self._lock:
            stored = self.lines.get(session)
            if not stored:
                raise NotFoundError(f"no session {session!r}", field="session", remediation="See `zaxy sessions`.")
            envelope = decode_line(stored[-1])
            problem = "its last event cannot be read" if envelope is None else line_problem(stored[-1], envelope)
            if problem is None:
                report["note"] = "nothing to repair"
                return report
            report["acknowledged"] = [{"seq": len(stored), "problem": problem}]
            if dry_run:
                return report
            payload = {
                "ranges": [],
                "set_aside": [],
                "acknowledged": report["acknowledged"],
                "reason": "the last event does not verify; it stays excluded from every read",
            }
            prev = envelope["hash"] if envelope is not None else GENESIS_HASH
            sealed, line = seal(
                PreparedDraft(type=REPAIR_TYPE, actor=actor, payload=payload),
                len(stored) + 1,
                prev,
                session,
                json_string(session),
            )
            stored.append(line)
        self.integrity_problems.pop(session, None)
        return {**report, "repaired": True, "record_seq": sealed["seq"], "record_hash": sealed["hash"]}

    def sync(self) -> None:
        """Nothing to flush."""

    def close(self) -> None:
        """The backend owns the data; closing a handle keeps it."""

    # ------------------------------------------------------------------ reading
    def replay_lines(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[bytes]:
        yield from self._stored(session, from_seq, to_seq)

    def _stored(self, session: str, from_seq: int, to_seq: int | None) -> list[bytes]:
        validate_session_id(session)
        check_range(from_seq, to_seq)
        stored = self.lines.get(session, [])
        return stored[from_seq - 1 : len(stored) if to_seq is None else to_seq]

    def replay_envelopes(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[dict[str, Any]]:
        """An event whose bytes do not match its hash is skipped and recorded in :attr:`integrity_problems`."""
        problems = self.integrity_problems.setdefault(session, {})
        reader = SessionReader(session, from_seq, strict=False, problems=problems)
        for line in self._stored(session, from_seq, to_seq):
            envelope = reader.decode(line)
            if envelope is not None:
                yield envelope

    def replay(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Event]:
        """An event whose bytes do not match its hash raises :class:`IntegrityError` (never returned)."""
        reader = SessionReader(session, from_seq, strict=True)
        for line in self._stored(session, from_seq, to_seq):
            yield Event.model_validate(reader.decode(line))

    def lines_at(self, keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], bytes]:
        found: dict[tuple[str, int], bytes] = {}
        for session, seq in keys:
            stored = self.lines.get(session, [])
            if 1 <= seq <= len(stored):
                found[(session, seq)] = stored[seq - 1]
        return found

    def session_names(self) -> list[str]:
        return sorted(session for session, stored in self.lines.items() if stored)

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
        verifier = ChainVerifier(session)
        for line in self.lines[session]:
            if not verifier.feed(line):
                break
        if verifier.ok:
            verifier.finish()
        if not verifier.ok:
            seq = verifier.broken_seq or 1
            return VerifyReport(
                session=session,
                ok=False,
                event_count=seq - 1,
                head_hash=None,
                first_broken_seq=seq,
                reason=verifier.problem or "broken",
            )
        return VerifyReport(session=session, ok=True, event_count=verifier.count, head_hash=verifier.prev)

    def _checked_head(self, session: str) -> tuple[int, str]:
        """The head an append extends, refusing a last event that does not match its hash (as every backend)."""
        stored = self.lines.get(session)
        if not stored:
            return 0, GENESIS_HASH
        envelope = decode_line(stored[-1])
        if envelope is None or line_problem(stored[-1], envelope) is not None:
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
