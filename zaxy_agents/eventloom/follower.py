"""Keep a materialised view of one session in step with its log, including other processes' appends.

A view (the LangGraph store's items, a thread's checkpoints) is built by replaying its session and then kept
current incrementally: before each read it asks the log for a cheap change token (``stat`` of the JSONL file;
the head seq/hash for backends without one) and replays only the events after the last one it applied. Its
own appends are applied straight from the returned events when nothing else was appended in between. Erased
events (their content is gone, see :mod:`.erasure`) are never passed on; the ``eventloom.erased`` record is, so a
view holding their content in memory rebuilds itself from the scrubbed log.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .erasure import is_erased
from .protocol import EventLog, LogCapability

Apply = Callable[[int, str, str, dict[str, Any]], None]  # (seq, type, timestamp, payload)


class SessionFollower:
    """Tracks ``applied_seq`` of one session and feeds unseen events to ``apply``. Not thread-safe: the owner
    serialises calls (the store and checkpointer hold their own lock)."""

    def __init__(self, log: EventLog, session: str, apply: Apply) -> None:
        self.log = log
        self.session = session
        self.apply = apply
        self.applied_seq = 0
        self._token: object = _UNSEEN
        self._token_is_head = LogCapability.CHANGE_TOKEN not in log.capabilities

    def token(self) -> object:
        return self.log.change_token(self.session)

    def catch_up(self) -> bool:
        """Apply events appended since the last call; True when anything was read."""
        token = self.token()
        if token == self._token:
            return False
        if token is not None:
            self._replay_from(self.applied_seq + 1, None)
        self._token = token
        return True

    def load(self, envelopes: Sequence[dict[str, Any]], token: object) -> None:
        """Apply a whole session read elsewhere (``EventLog.replay_sessions``) as the first catch-up. ``token`` is
        the session's change token taken *before* that read: the read may hold more than it names, never less,
        so the next :meth:`catch_up` at worst re-reads a tail it already has (from ``applied_seq`` on)."""
        for envelope in envelopes:
            if envelope["seq"] <= self.applied_seq:
                continue
            if envelope["seq"] != self.applied_seq + 1:  # a gap (an unreadable event): leave it to catch_up
                break
            if not is_erased(envelope):
                self.apply(envelope["seq"], envelope["type"], envelope["timestamp"], envelope["payload"])
            self.applied_seq = envelope["seq"]
        else:
            self._token = token
            return
        self._replay_from(self.applied_seq + 1, None)
        self._token = token

    def absorb(self, events: Sequence[Any], apply_own: Callable[[Any], None] | None = None) -> None:
        """Apply the caller's just-appended ``events`` (pydantic Events), replaying any gap before them.

        ``apply_own(event)`` applies one of our events with extra in-memory context (e.g. vectors already
        computed); without it events go through ``apply``.
        """
        if not events:
            return
        own = {event.seq: event for event in events}
        if events[0].seq == self.applied_seq + 1:
            for event in events:
                self._apply_event(event, apply_own)
            self.applied_seq = events[-1].seq
            self._confirm_current(events[-1])
            return
        for envelope in self.log.replay_envelopes(self.session, self.applied_seq + 1, events[-1].seq):
            seq = envelope["seq"]
            if seq in own:
                self._apply_event(own[seq], apply_own)
            elif not is_erased(envelope):
                self.apply(seq, envelope["type"], envelope["timestamp"], envelope["payload"])
            self.applied_seq = seq

    def _confirm_current(self, last: Any) -> None:
        """After our own append, remember the log's token if nobody else has appended since (cheap)."""
        if self._token_is_head:
            # The token is the head itself: (seq, hash) of our last event names exactly what we have applied, so
            # no query is needed; if someone appended after us, the next token differs and we replay.
            self._token = (last.seq, last.hash)
            return
        written = self.log.last_written(self.session)
        if written is not None:
            if written[1] == self.applied_seq and self.token() == written[0]:
                self._token = written[0]
            return
        token = self.token()  # token first, then head: if the head is still ours, the token holds only ours
        head = self.log.head(self.session)
        if head is not None and head.seq == self.applied_seq:
            self._token = token

    def _apply_event(self, event: Any, apply_own: Callable[[Any], None] | None) -> None:
        if apply_own is not None:
            apply_own(event)
        else:
            self.apply(event.seq, event.type, event.timestamp, event.payload)

    def _replay_from(self, from_seq: int, to_seq: int | None) -> None:
        for envelope in self.log.replay_envelopes(self.session, from_seq, to_seq):
            if not is_erased(envelope):
                self.apply(envelope["seq"], envelope["type"], envelope["timestamp"], envelope["payload"])
            self.applied_seq = envelope["seq"]


_UNSEEN = object()
