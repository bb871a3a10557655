"""What a hit shows, read from the log: the indexes keep no copy of event texts.

An index hit is ``(session, seq)``; its text is the event's searchable text (what was indexed: the same
extraction the projector ran) and its hash is the log's, so a citation always matches the content it cites.
Only the final hits of a query are read (tens of events, a seek each).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from zaxy_agents.errors import IntegrityError
from zaxy_agents.eventloom.integrity import CallReads
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.projection.model import Extraction

from .verbatim import TEXT_LIMIT

EventKey = tuple[str, int]


class EventTexts:
    """``(session, seq) -> (hash, event type, searchable text)`` straight from the log; an event whose line is
    damaged (not an event any more) is left out, so callers treat it as an event the log cannot give back."""

    def __init__(self, log: EventLog, extract: Callable[[dict[str, Any]], Extraction]) -> None:
        """``extract``: the fabric's extractor table (``features.extractors.extract``), as the projector uses."""
        self.log = log
        self.extract = extract

    def _envelope(self, session: str, seq: int) -> dict | None:
        try:
            for envelope in self.log.replay_envelopes(session, seq, seq):
                return envelope if envelope.get("seq") == seq else None
        except IntegrityError:
            return None
        return None

    def read(self, keys: Iterable[EventKey], reads: CallReads | None = None) -> dict[EventKey, tuple[str, str, str]]:
        """The stored lines of ``keys`` in one batched read (``EventLog.lines_at``). The hash is the one the line
        claims: the read-side check that follows (``check_cited``) drops, with an ``integrity_error`` warning, a
        hit whose line does not match it; a line that is not an event is left out here. ``reads``: the calling
        checkout's or query's reads, which that check then verifies without reading or decoding them again."""
        reads = reads if reads is not None else CallReads(self.log.lines_at)
        out: dict[EventKey, tuple[str, str, str]] = {}
        for key in reads.lines_at(keys):
            envelope = reads.parsed(key)
            if (
                not isinstance(envelope, dict)
                or envelope.get("seq") != key[1]
                or not isinstance(envelope.get("hash"), str)
            ):
                continue
            extraction = reads.extraction(key, self.extract)
            if extraction is None:
                continue
            out[key] = (envelope["hash"], str(envelope.get("type", "")), extraction.searchable_text[:TEXT_LIMIT])
        return out

    def cue_views(
        self, keys: Iterable[EventKey], reads: CallReads | None = None
    ) -> dict[EventKey, tuple[dict[str, Any], str]]:
        """``(payload, searchable text)`` of ``keys`` in one batched read: the cues an event recorded and the words
        it holds (cue blending). A damaged line is left out (the hit then simply has no cues). ``reads``: the
        calling query's reads (the lines read here are not read again to give the returned hits their text)."""
        reads = reads if reads is not None else CallReads(self.log.lines_at)
        out: dict[EventKey, tuple[dict[str, Any], str]] = {}
        for key in reads.lines_at(keys):
            envelope = reads.parsed(key)
            if not (
                isinstance(envelope, dict)
                and envelope.get("seq") == key[1]
                and isinstance(envelope.get("payload"), dict)
            ):
                continue
            extraction = reads.extraction(key, self.extract)
            text = extraction.searchable_text if extraction is not None else ""
            out[key] = (envelope["payload"], text[:TEXT_LIMIT])
        return out

    def texts(self, keys: Iterable[EventKey]) -> dict[EventKey, str]:
        """Full searchable texts (for embedding and for re-learning an index's vocabulary)."""
        out: dict[EventKey, str] = {}
        for session, seq in dict.fromkeys(keys):
            envelope = self._envelope(session, seq)
            if envelope is not None:
                out[(session, seq)] = self.extract(envelope).searchable_text
        return out

    def __call__(self, keys: Iterable[EventKey]) -> dict[EventKey, str]:
        return self.texts(keys)
