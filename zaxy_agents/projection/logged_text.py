"""Summaries the catalog does not copy: the text of raw-text entities (turns, prompts) is read from the log.

A turn's summary is its event's text, bounded (``bounded(speaker: text)``): a copy of what the log holds, and
on a conversational memory it was most of the catalog (a realistic 20k-event memory: turns and prompts were
65 % of the stored summary bytes). The catalog stores such a version without its summary (see
:data:`~.catalog_rows.TEXT_FROM_LOG`); the summary is re-derived when a reader first asks for it, the way the
indexes give their hits a text: the cited line is re-read (``EventLog.lines_at``: a binary search per
session file), its hash checked against the version's citation and the chain (:func:`check_cited`), and the
event's extractor run again (extraction is a pure function of the event: it is what made the version).

Reading is lazy: a :class:`LoggedVersion` behaves as any :class:`EntityVersion` (same fields, equality,
hash, dict), and only touching ``summary`` reads the log (once; the value is then kept in the object). A
version whose cited line no longer matches its hash serves :data:`UNAVAILABLE` instead of any text: nothing is
served that its citation cannot back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from zaxy_agents.eventloom.integrity import CallReads
from zaxy_agents.projection.model import Extraction, entity_key
from zaxy_agents.projection.records import EntityVersion

UNAVAILABLE = "[text unavailable: its cited event no longer matches the log]"

Request = tuple[str, int, str, str]  # (session, seq, event hash, identity key) of a version
LinesAt = Callable[[list[tuple[str, int]]], dict[tuple[str, int], bytes]]

_SUMMARY = EntityVersion.__dict__["summary"]  # the slot of EntityVersion.summary (None: not read yet)


class LogTexts:
    """Summaries of versions re-derived from their events: ``(session, seq, hash, key) -> summary``."""

    def __init__(self, lines_at: LinesAt, extract: Callable[[dict[str, Any]], Extraction]) -> None:
        self.lines_at = lines_at
        self.extract = extract

    def summaries(self, requests: Iterable[Request], reads: CallReads | None = None) -> dict[Request, str]:
        """Every request's summary in one batched read of the log (:data:`UNAVAILABLE` for a line that fails its
        hash or chain check, ``""`` for an erased event or an event whose extraction no longer names the key).
        ``reads``: the reads of the call that serves them (a query): lines it already read and verified are not
        read or checked again (and it must read this memory's log)."""
        wanted = list(dict.fromkeys(requests))
        if not wanted:
            return {}
        reads = reads if reads is not None else CallReads(self.lines_at)
        check = reads.check([(session, seq, digest) for session, seq, digest, _ in wanted])
        extracted: dict[tuple[str, int], dict[str, str]] = {}
        found: dict[Request, str] = {}
        for request in wanted:
            session, seq, _digest, key = request
            where = (session, seq)
            if where in check.erased:
                found[request] = ""
                continue
            envelope = check.envelopes.get(where)
            if envelope is None:
                found[request] = UNAVAILABLE
                continue
            if where not in extracted:
                extraction = reads.extraction(where, self.extract)  # the envelope checked above: same decoded line
                drafts = extraction.entities if extraction is not None else []
                extracted[where] = {entity_key(session, d.entity_type, d.name): d.summary for d in drafts}
            found[request] = extracted[where].get(key, "")
        return found


class LoggedVersion(EntityVersion):
    """An :class:`EntityVersion` whose summary is read from its event on first use (see the module)."""

    __slots__ = ("_texts",)

    def __init__(self, texts: LogTexts, *fields: Any) -> None:
        object.__setattr__(self, "_texts", texts)
        super().__init__(*fields)  # type: ignore[arg-type]

    def _summary(self) -> str:
        value = _SUMMARY.__get__(self)
        if value is None:
            request = (self.session, self.source_event_seq, self.source_event_hash, self.key)
            value = self._texts.summaries([request])[request]
            _SUMMARY.__set__(self, value)
        return value

    def _set_summary(self, value: str | None) -> None:  # the dataclass __init__ (object.__setattr__) only
        _SUMMARY.__set__(self, value)

    summary = property(_summary, _set_summary)  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:  # equal to a plain EntityVersion of the same fields
        if not isinstance(other, EntityVersion):
            return NotImplemented
        return _fields(self) == _fields(other)

    def __hash__(self) -> int:
        return hash(_fields(self))


def _fields(version: EntityVersion) -> tuple[Any, ...]:
    return tuple(getattr(version, name) for name in EntityVersion.__dataclass_fields__)


def fill(versions: Iterable[EntityVersion], reads: CallReads | None = None) -> None:
    """Read the summaries of the not yet read :class:`LoggedVersion` among ``versions`` in one batched read (a
    caller about to use many summaries at once: a dump, an index replay); ``reads``: the serving call's reads
    (see :meth:`LogTexts.summaries`)."""
    pending: dict[Request, list[LoggedVersion]] = {}
    texts: LogTexts | None = None
    for version in versions:
        if isinstance(version, LoggedVersion) and _SUMMARY.__get__(version) is None:
            texts = version._texts
            request = (version.session, version.source_event_seq, version.source_event_hash, version.key)
            pending.setdefault(request, []).append(version)
    if texts is None:
        return
    for request, summary in texts.summaries(pending, reads).items():
        for version in pending[request]:
            _SUMMARY.__set__(version, summary)
