"""What a hit shows, read from the log: the indexes keep no copy of event texts.

An index hit is ``(session, seq)``; its text is the event's searchable text (what was indexed: the same
extraction the projector ran) and its hash is the log's, so a citation always matches the content it cites.
Only the final hits of a query are read (tens of events, a seek each).
"""

from __future__ import annotations

from collections.abc import Iterable

from zaxy_agents.errors import IntegrityError
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.projection.registry import extract

from .verbatim import TEXT_LIMIT

EventKey = tuple[str, int]


class EventTexts:
    """``(session, seq) -> (hash, event type, searchable text)`` straight from the log; an event whose line is
    damaged (not an event any more) is left out, so callers treat it as an event the log cannot give back."""

    def __init__(self, log: EventLog) -> None:
        self.log = log

    def _envelope(self, session: str, seq: int) -> dict | None:
        try:
            for envelope in self.log.replay_envelopes(session, seq, seq):
                return envelope if envelope.get("seq") == seq else None
        except IntegrityError:
            return None
        return None

    def read(self, keys: Iterable[EventKey]) -> dict[EventKey, tuple[str, str, str]]:
        out: dict[EventKey, tuple[str, str, str]] = {}
        for session, seq in dict.fromkeys(keys):
            envelope = self._envelope(session, seq)
            if envelope is not None:
                text = extract(envelope).searchable_text
                out[(session, seq)] = (envelope["hash"], envelope["type"], text[:TEXT_LIMIT])
        return out

    def texts(self, keys: Iterable[EventKey]) -> dict[EventKey, str]:
        """Full searchable texts (for embedding and for re-learning an index's vocabulary)."""
        out: dict[EventKey, str] = {}
        for session, seq in dict.fromkeys(keys):
            envelope = self._envelope(session, seq)
            if envelope is not None:
                out[(session, seq)] = extract(envelope).searchable_text
        return out

    def __call__(self, keys: Iterable[EventKey]) -> dict[EventKey, str]:
        return self.texts(keys)
