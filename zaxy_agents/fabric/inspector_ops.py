"""Fabric reads behind the Memory Inspector (``zaxy ui``): sessions with chain status, a filtered timeline, an
event with its proof, and what an erase would remove (the entity pages are :mod:`.inspector_entities`).

Everything here reads through the log protocol and the projection catalog, like every other operation: the
inspector never opens a file or a table itself. Each read is bounded (a page, a scan budget) so a long session
costs what is shown, not its whole history; only :meth:`chain_status` reads a whole session (that is what
verifying a chain means) and it is cached until the session changes.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from zaxy_agents.errors import InvalidRequestError, NotFoundError, ZaxyError
from zaxy_agents.eventloom.canonical import GENESIS_HASH, event_hash
from zaxy_agents.eventloom.citations import format_citation
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.instants import format_instant, parse_instant

from .cognitive_ops import _check_range as _check_int
from .service import FabricCore, FabricService

if TYPE_CHECKING:
    from zaxy_agents.eventloom.models import SessionSummary
    from zaxy_agents.projection.records import EntityVersion

    from .log_ops import LogService
    from .projection_ops import ProjectionService

MAX_PAGE = 500
MAX_SCAN = 50_000
DEFAULT_SCAN = 5_000
MAX_TEXT_FILTER = 200
MAX_ERASE_PREVIEW = 10_000
CHAIN_TTL = 60.0  # seconds a chain verification is reused while the session looks unchanged


class InspectorService(FabricService):
    """Service: the read side of the Memory Inspector (``zaxy ui``), see docs/ui.md."""

    def __init__(self, core: FabricCore, events: LogService, projection: ProjectionService) -> None:
        super().__init__(core)
        self.events = events
        self.projection = projection
        self._chain_cache: dict[str, tuple[tuple[Any, ...], dict[str, Any], float]] = {}

    # ------------------------------------------------------------------ sessions
    def session_overview(self, sessions: list[str] | None = None) -> list[dict[str, Any]]:
        """Every session (or those named) with its event count, size, last activity and cached chain status.

        ``chain`` is ``None`` until :meth:`chain_status` verified the session as it is now (the inspector
        asks for it per row, so a long list appears at once).
        """
        wanted = None if sessions is None else {validate_session_id(name) for name in sessions}
        rows = []
        for summary in self.events.sessions():
            if wanted is not None and summary.session not in wanted:
                continue
            last = None
            if summary.event_count:
                try:
                    last = self.log.get(summary.session, summary.event_count).timestamp
                except ZaxyError:
                    last = None  # a damaged tail: chain_status says why
            cached = self._chain_cache.get(summary.session)
            fresh = cached is not None and cached[0] == _summary_token(summary)
            fresh = fresh and cached is not None and time.monotonic() - cached[2] < CHAIN_TTL
            rows.append(
                {
                    "session": summary.session,
                    "event_count": summary.event_count,
                    "size_bytes": summary.size_bytes,
                    "last_activity": last or summary.modified,
                    "head": format_citation(summary.session, summary.event_count, summary.head_hash)
                    if summary.head_hash
                    else None,
                    "chain": cached[1] if fresh and cached is not None else None,
                }
            )
        return rows

    def chain_status(self, session: str, *, refresh: bool = False) -> dict[str, Any]:
        """``{"status": "verified" | "damaged", "event_count", "first_broken_seq", "reason", "verified_at"}``: the
        whole chain recomputed (hashes and prev links). Kept for up to a minute while the session's head, size
        and modification time stay the same (an edit that changes none of them within that minute is caught
        by the next check); ``refresh`` recomputes now."""
        validate_session_id(session)
        summary = next((s for s in self.events.sessions() if s.session == session), None)
        if summary is None:
            raise NotFoundError(
                f"no session {session!r}", field="session", remediation="Pick a session from the session list."
            )
        token = _summary_token(summary)
        cached = self._chain_cache.get(session)
        if not refresh and cached is not None and cached[0] == token and time.monotonic() - cached[2] < CHAIN_TTL:
            return cached[1]
        report = self.events.verify(session)
        status = {
            "status": "verified" if report.ok else "damaged",
            "event_count": report.event_count,
            "first_broken_seq": report.first_broken_seq,
            "reason": report.reason,
            "warnings": list(report.warnings),
            "torn_tail_bytes": report.torn_tail_bytes,
            "verified_at": format_instant(datetime.now(UTC)),
        }
        self._chain_cache[session] = (token, status, time.monotonic())
        return status

    # ------------------------------------------------------------------ timeline
    def timeline_page(
        self,
        session: str,
        *,
        before_seq: int | None = None,
        after_seq: int | None = None,
        limit: int = 100,
        types: list[str] | None = None,
        actor: str | None = None,
        since: str | None = None,
        until: str | None = None,
        text: str | None = None,
        scan: int = DEFAULT_SCAN,
    ) -> dict[str, Any]:
        """A page of a session's events, newest first, that pass every filter given.

        ``before_seq`` pages back (the previous page's ``next_before_seq``); ``after_seq`` returns only events
        after that seq (what a live view polls with). Filters: ``types`` (exact types, or a prefix ending in
        ``.``/``*``: ``"task.*"``), ``actor`` (exact), ``since``/``until`` (instants, inclusive), ``text``
        (case-insensitive substring of the type, actor or payload). At most ``scan`` events are read per
        call: ``next_before_seq`` says where to continue when the page is not full yet.
        """
        validate_session_id(session)
        _check_int("limit", limit, 1, MAX_PAGE)
        _check_int("scan", scan, 1, MAX_SCAN)
        head = self.log.head(session)
        if head is None:
            if not self.log.has_session(session):
                raise NotFoundError(
                    f"no session {session!r}", field="session", remediation="Pick a session from the session list."
                )
            return {"session": session, "head_seq": 0, "events": [], "next_before_seq": None, "scanned": 0}
        matcher = _EventFilter(types, actor, since, until, text)
        upper = head.seq if before_seq is None else min(head.seq, _seq("before_seq", before_seq) - 1)
        lower = 1 if after_seq is None else _seq("after_seq", after_seq, minimum=0) + 1
        found: list[dict[str, Any]] = []
        scanned = 0
        window = min(scan, 256)
        while upper >= lower and len(found) < limit and scanned < scan:
            start = max(lower, upper - window + 1, upper - (scan - scanned) + 1)
            chunk = list(self.log.replay_envelopes(session, start, upper))
            scanned += len(chunk)
            for envelope in reversed(chunk):
                if matcher(envelope):
                    found.append(_event_row(envelope))
                    if len(found) == limit:
                        upper = envelope["seq"] - 1
                        break
            else:
                upper = start - 1
            window = min(window * 2, 4096)
        return {
            "session": session,
            "head_seq": head.seq,
            "events": found,
            "next_before_seq": upper + 1 if upper >= lower else None,
            "scanned": scanned,
        }

    # ------------------------------------------------------------------ one event and its proof
    def prove_event(self, session: str, seq: int) -> dict[str, Any]:
        """One event as stored, with its proof: the hash recomputed from the stored envelope, the previous
        event's hash its ``prev_hash`` must equal, and the next event's link back to it."""
        validate_session_id(session)
        seq = _seq("seq", seq)
        head = self.log.head(session)
        if head is None or seq > head.seq:
            raise NotFoundError(
                f"session {session!r} has no event {seq}",
                field="seq",
                remediation="Open a seq between 1 and the session's event count.",
            )
        envelope, refused = self._stored(session, seq)
        if envelope is None:  # the log itself refuses to serve it: that is the proof's answer
            return {
                "session": session,
                "seq": seq,
                "citation": None,
                "envelope": None,
                "proof": {"hash_ok": False, "prev_link_ok": False, "problem": refused},
                "entities": [],
            }
        try:
            recomputed = event_hash(envelope)
        except (KeyError, TypeError, ValueError) as exc:
            recomputed = f"cannot be recomputed: {exc}"
        previous = self._stored(session, seq - 1)[0] if seq > 1 else None
        following = self._stored(session, seq + 1)[0] if seq < head.seq else None
        expected_prev = GENESIS_HASH if seq == 1 else (previous or {}).get("hash")
        stored = envelope.get("hash")
        return {
            "session": session,
            "seq": seq,
            "citation": format_citation(session, seq, stored) if isinstance(stored, str) else None,
            "envelope": envelope,
            "proof": {
                "stored_hash": stored,
                "recomputed_hash": recomputed,
                "hash_ok": recomputed == stored,
                "prev_hash": envelope.get("prev_hash"),
                "previous": _link(session, previous) if previous is not None else None,
                "prev_link_ok": expected_prev is not None and envelope.get("prev_hash") == expected_prev,
                "genesis": seq == 1,
                "next": _link(session, following) if following is not None else None,
                "next_link_ok": None if following is None else following.get("prev_hash") == stored,
            },
            "entities": [_version_row(v) for v in self._event_versions(session, seq)],
        }

    def _stored(self, session: str, seq: int) -> tuple[dict[str, Any] | None, str | None]:
        """``(envelope as stored, None)``, or ``(None, why the log refused to serve it)``."""
        try:
            for envelope in self.log.replay_envelopes(session, seq, seq):
                return envelope, None
        except ZaxyError as exc:
            return None, f"{exc.code}: {exc.message}"
        return None, "missing"

    def _event_versions(self, session: str, seq: int) -> list[EntityVersion]:
        self.projection.project([session])
        return self.projection.projector.catalog.event_versions(session, seq)

    # ------------------------------------------------------------------ forgetting
    def erase_preview(self, session: str, from_seq: int, to_seq: int) -> dict[str, Any]:
        """Exactly what erasing ``from_seq..to_seq`` of ``session`` would make unrecoverable: each event (seq,
        type, actor, time, citation) and every entity version those events created. Reads only."""
        validate_session_id(session)
        from_seq, to_seq = _seq("from_seq", from_seq), _seq("to_seq", to_seq)
        if to_seq < from_seq:
            raise InvalidRequestError(
                f"to_seq ({to_seq}) is before from_seq ({from_seq})", field="to_seq", remediation="Swap the bounds."
            )
        if to_seq - from_seq + 1 > MAX_ERASE_PREVIEW:
            raise InvalidRequestError(
                f"at most {MAX_ERASE_PREVIEW} events can be erased at once",
                field="to_seq",
                remediation="Erase a shorter range, or the whole session.",
            )
        head = self.log.head(session)
        if head is None or to_seq > head.seq:
            raise NotFoundError(
                f"session {session!r} has {head.seq if head else 0} events, not {to_seq}",
                field="to_seq",
                remediation="Pick a range inside the session.",
            )
        self.projection.project([session])
        catalog = self.projection.projector.catalog
        events, versions = [], []
        for envelope in self.log.replay_envelopes(session, from_seq, to_seq):
            row = _event_row(envelope)
            row.pop("payload", None)
            events.append(row)
            versions += [_version_row(v) for v in catalog.event_versions(session, envelope["seq"])]
        return {
            "session": session,
            "from_seq": from_seq,
            "to_seq": to_seq,
            "event_count": len(events),
            "events": events,
            "entity_versions": versions,
            "already_erased": sum(1 for e in events if e.get("erased")),
        }


class _EventFilter:
    """The timeline's filters, checked once and applied to each envelope."""

    def __init__(
        self,
        types: list[str] | None,
        actor: str | None,
        since: str | None,
        until: str | None,
        text: str | None,
    ) -> None:
        if types is not None and (
            not isinstance(types, list) or not all(isinstance(t, str) and 0 < len(t) <= 128 for t in types)
        ):
            raise InvalidRequestError(
                "types must be a list of event types", field="types", remediation='Use e.g. ["task.completed"].'
            )
        self.exact = {t for t in types or () if not t.endswith(("*", "."))}
        self.prefixes = tuple(t.rstrip("*") for t in types or () if t.endswith(("*", ".")))
        if actor is not None and (not isinstance(actor, str) or len(actor) > 256):
            raise InvalidRequestError("actor must be a string", field="actor", remediation="Use an actor name.")
        self.actor = actor or None
        self.since = parse_instant(since, field="since") if since else None
        self.until = parse_instant(until, field="until") if until else None
        needle = _text_filter(text)
        self.text = needle.casefold() if needle else None

    def __call__(self, envelope: dict[str, Any]) -> bool:
        kind = envelope.get("type", "")
        if (self.exact or self.prefixes) and kind not in self.exact and not kind.startswith(self.prefixes or ("\0",)):
            return False
        if self.actor is not None and envelope.get("actor") != self.actor:
            return False
        stamp = envelope.get("timestamp", "")
        if self.since is not None and stamp < self.since:
            return False
        if self.until is not None and stamp > self.until:
            return False
        if self.text is not None:
            haystack = f"{kind}\n{envelope.get('actor', '')}\n" + json.dumps(
                envelope.get("payload", {}), ensure_ascii=False
            )
            if self.text not in haystack.casefold():
                return False
        return True


def _text_filter(text: str | None) -> str | None:
    if text is None or text == "":
        return None
    if not isinstance(text, str) or len(text) > MAX_TEXT_FILTER:
        raise InvalidRequestError(
            f"text must be a string of at most {MAX_TEXT_FILTER} characters",
            field="text",
            remediation="Search for a shorter phrase.",
        )
    return text.strip() or None


def _event_row(envelope: dict[str, Any]) -> dict[str, Any]:
    seq, digest = envelope.get("seq"), envelope.get("hash")
    row = {
        "seq": seq,
        "type": envelope.get("type"),
        "actor": envelope.get("actor"),
        "timestamp": envelope.get("timestamp"),
        "citation": format_citation(envelope.get("session", ""), seq, digest) if isinstance(digest, str) else None,
        "payload": envelope.get("payload", {}),
    }
    if "erased" in envelope or "tombstone" in envelope:
        row["erased"] = True
    return row


def _link(session: str, envelope: dict[str, Any]) -> dict[str, Any]:
    digest = envelope.get("hash")
    return {
        "seq": envelope.get("seq"),
        "type": envelope.get("type"),
        "hash": digest,
        "prev_hash": envelope.get("prev_hash"),
        "citation": format_citation(session, envelope.get("seq", 0), digest) if isinstance(digest, str) else None,
    }


def _version_row(version: EntityVersion) -> dict[str, Any]:
    row = version.to_dict()
    row["asserted"] = version.asserted
    return row


def _summary_token(summary: SessionSummary) -> tuple[Any, ...]:
    return (summary.event_count, summary.head_hash, summary.size_bytes, summary.modified)


def _seq(field: str, value: object, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidRequestError(
            f"{field} must be an integer >= {minimum}", field=field, remediation=f"Use a seq of {minimum} or more."
        )
    return value
