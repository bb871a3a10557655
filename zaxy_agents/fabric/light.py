"""The stdlib-only face of the fabric for latency-critical surfaces (IDE hook sinks).

Same validation, redaction, hashing and locking as :class:`MemoryFabric.append`, returned as plain dicts
with citations, without importing pydantic, numpy or the graph; plus a bounded tail read and the working-set
packets the SessionStart hook injects. Use the full fabric everywhere else.

The backend's light log (:class:`~zaxy_agents.storage.protocols.LightLog`) comes from the storage registry: the
files backend appends to the session file directly; PostgreSQL goes through its log (psycopg's start-up makes
that path ~0.2 s slower; the files path never imports it).
"""

from __future__ import annotations

from zaxy_agents.config import ZaxySettings
from zaxy_agents.eventloom.citations import format_citation
from zaxy_agents.eventloom.drafts import prepare_draft
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.storage.registry import DEFAULT_REGISTRY

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from zaxy_agents.storage.protocols import LightLog
    from zaxy_agents.workingset import Packet, WorkingSet


def light_append(
    session: str,
    event_type: str,
    payload: dict[str, Any],
    *,
    actor: str = "agent",
    eventloom_path: str | Path | None = None,
) -> dict[str, Any]:
    """Append one event durably; returns the stored envelope plus ``citation``."""
    return light_append_many(
        session, [{"type": event_type, "payload": payload, "actor": actor}], eventloom_path=eventloom_path
    )[-1]


def light_append_many(
    session: str,
    drafts: list[dict[str, Any]],
    *,
    eventloom_path: str | Path | None = None,
    lock_timeout: float | None = None,
    spool: bool = False,
) -> list[dict[str, Any]]:
    """Append several ``{"type", "payload", "actor"}`` drafts with one lock, one write and one fsync.

    Every draft is validated and redacted before anything is written: one bad draft writes nothing.
    ``lock_timeout`` bounds the wait for the log lock (files backend); past it, with ``spool``, the drafts
    go to the session's spool for the next writer to drain in order (``[]`` is returned), without it
    :class:`~zaxy_agents.storage.files.file_io.LogLockTimeout` is raised (``LightLog.append_prepared``).
    The hook sink uses both, so a held lock never stalls the IDE.
    """
    settings = ZaxySettings.resolve(eventloom_path)
    validate_session_id(session)
    prepared = [
        prepare_draft(
            draft.get("type"),
            draft.get("payload", {}),
            draft.get("actor", "agent"),
            settings.max_payload_bytes,
            field_prefix=f"events[{index}]." if len(drafts) > 1 else "",
        )
        for index, draft in enumerate(drafts)
    ]
    if not prepared:
        return []
    log = DEFAULT_REGISTRY.open_light(settings)
    try:
        envelopes = log.append_prepared(session, prepared, lock_timeout=lock_timeout, spool=spool)
    finally:
        log.close()
    return [
        {**envelope, "citation": format_citation(session, envelope["seq"], envelope["hash"])} for envelope in envelopes
    ]


def light_tail(session: str, limit: int, *, eventloom_path: str | Path | None = None) -> list[dict[str, Any]]:
    """The last ``limit`` events of ``session`` as plain envelopes, oldest first (``[]`` for no session).

    Seeks by binary search over the file, so the cost depends on ``limit``, not on the log's length.
    """
    from json import loads

    _tail, _start, lines = _recent_lines(ZaxySettings.resolve(eventloom_path), session, limit)
    return [loads(line) for line in lines]


def light_recent_lines(
    session: str, count: int, *, eventloom_path: str | Path | None = None
) -> tuple[int, list[bytes]]:
    """``(head seq, the last count stored lines newest first)``; the cost depends on ``count``, not on the log's
    length (the files backend reads backwards from the end of the file)."""
    settings = ZaxySettings.resolve(eventloom_path)
    validate_session_id(session)
    log = DEFAULT_REGISTRY.open_light(settings)
    try:
        return log.newest_lines(session, count)
    finally:
        log.close()


def light_session_names(*, eventloom_path: str | Path | None = None) -> list[str]:
    """Every session of the Eventloom (names only; a folder listing for the files backend)."""
    log = DEFAULT_REGISTRY.open_light(ZaxySettings.resolve(eventloom_path))
    try:
        return log.session_names()
    finally:
        log.close()


def light_working_set(
    session: str,
    *,
    window: int | None = None,
    eventloom_path: str | Path | None = None,
    sessions: list[str] | None = None,
    persist: bool = True,
) -> WorkingSet:
    """The working set of ``session``: standing state over its whole log, recent sections from the last ``window``.

    ``sessions``: other sessions (of the same workspace) merged in, each item citing its own session.
    Standing state is folded incrementally through ``<eventloom>/.zaxy/workingset/`` (see
    :mod:`zaxy_agents.workingset.cache`; ``persist=False`` reads it but never writes). Only events the folds
    read are decoded: a stored line is canonical JSON whose last key is ``type`` (docs/eventloom.md), so the
    type is read off the line's end and other events are skipped undecoded.
    """
    from zaxy_agents.eventloom.canonical import sha256
    from zaxy_agents.workingset.cache import fold_session
    from zaxy_agents.workingset.digest import DEFAULT_WINDOW, merge
    from zaxy_agents.workingset.verified import verified

    settings = ZaxySettings.resolve(eventloom_path)
    folds = []
    log = DEFAULT_REGISTRY.open_light(settings)
    try:
        for name in [session, *[other for other in sessions or () if other != session]]:
            validate_session_id(name)
            folds.append(
                fold_session(
                    name,
                    _FoldReader(log, name).source(),
                    window=window or DEFAULT_WINDOW,
                    cache_dir=log.cache_root,
                    persist=persist,
                )
            )
    finally:
        log.close()
    own = folds[0]
    head_seq, head_hash = own.head if own.head is not None else (0, "")
    working = merge(
        session,
        [fold.standing for fold in folds if fold.head is not None or fold is own],
        [fold.recent for fold in folds],
        head_seq=head_seq,
        head_citation=format_citation(session, head_seq, head_hash) if own.head is not None else None,
        window_from_seq=own.window_from_seq,
    )
    return verified(working, lambda keys: _lines_at(settings, keys), sha=sha256)


def light_packet(
    session: str,
    kind: str,
    max_chars: int,
    *,
    window: int | None = None,
    eventloom_path: str | Path | None = None,
    sessions: list[str] | None = None,
    persist: bool = True,
) -> Packet:
    """A ``recovery`` or ``bootstrap`` packet for ``session`` under ``max_chars`` characters."""
    from zaxy_agents.workingset.packet import render_packet

    working = light_working_set(
        session, window=window, eventloom_path=eventloom_path, sessions=sessions, persist=persist
    )
    return render_packet(working, kind, max_chars)


class _FoldReader:
    """One session's log, read for :func:`~zaxy_agents.workingset.cache.fold_session` through the light log."""

    def __init__(self, log: LightLog, session: str) -> None:
        self.log = log
        self.session = session

    def source(self) -> Any:
        from zaxy_agents.workingset.cache import FoldSource

        return FoldSource(self.head, self.hash_at, self.envelopes)

    def head(self) -> tuple[int, str] | None:
        return self.log.head(self.session)

    def _lines(self, from_seq: int, to_seq: int) -> Any:
        return self.log.lines(self.session, from_seq, to_seq)

    def hash_at(self, seq: int) -> str | None:
        from json import loads

        for line in self._lines(seq, seq):
            return str(loads(line).get("hash"))
        return None

    def envelopes(self, from_seq: int, to_seq: int) -> Any:
        from json import loads

        from zaxy_agents.eventloom.canonical import stored_line_sound
        from zaxy_agents.workingset.digest import RELEVANT_TYPES

        for line in self._lines(from_seq, to_seq):
            marker = line.rfind(b',"type":"')
            kind = line[marker + 9 : -3] if marker != -1 and line.endswith(b'"}\n') else None
            if (
                kind is not None
                and b'"' not in kind
                and kind.decode() not in RELEVANT_TYPES
                and kind != ERASURE_TYPE_BYTES
                and b'"supersedes":' not in line
            ):
                continue
            envelope = loads(line.decode())
            # Read-side verification: an event whose bytes no longer match its hash is never folded in (the
            # packet's items are re-checked against the log before they are served, see verified()); erased
            # events and tombstones hold nothing to fold.
            readable = isinstance(envelope, dict) and "erased" not in envelope and "tombstone" not in envelope
            if readable and stored_line_sound(line, envelope):
                yield envelope


ERASURE_TYPE_BYTES = b"eventloom.erased"


def _lines_at(settings: ZaxySettings, keys: list[tuple[str, int]]) -> dict[tuple[str, int], bytes]:
    """The stored lines of ``(session, seq)`` keys (for the read-side check of a packet's citations)."""
    log = DEFAULT_REGISTRY.open_light(settings)
    try:
        return log.lines_at(keys)
    finally:
        log.close()


def _recent_lines(settings: ZaxySettings, session: str, count: int) -> tuple[tuple[int, str] | None, int, Any]:
    """``(head (seq, hash) or None, first seq, newline-terminated lines of the last count events)``."""
    validate_session_id(session)
    log = DEFAULT_REGISTRY.open_light(settings)
    try:
        head = log.head(session)
        if head is None:
            return None, 0, []
        start = max(1, head[0] - max(1, count) + 1)
        return head, start, list(log.lines(session, start, head[0]))
    finally:
        log.close()
