"""What one session already holds of an agent conversation, kept current incrementally.

Capture, compaction and feedback must be idempotent: a graph step that runs again (a retry, a resumed
thread, a node placed twice) must not record the same message, tool call, compaction or feedback twice. The
ledger answers "already recorded?" from the log itself — ids are read from the session's events, so the
answer survives restarts and covers events other writers appended (ZaxyCheckpointer's ``transcript.turn``
events count, since they carry the same ``message_id``).
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.eventloom.follower import SessionFollower
from zaxy_agents.eventloom.protocol import EventLog

from .events import COMPACTED, FEEDBACK_TYPES, TOOL_CALL_COMPLETED, TRANSCRIPT_TURN


class ConversationLedger:
    """Ids recorded in one session: message ids of turns, tool call ids, compaction ids, feedback pairs.

    Not thread-safe; the fabric serialises access per session. Replays the session once, then only new
    events (a one-``stat`` change token decides whether anything is new).
    """

    def __init__(self, log: EventLog, session: str) -> None:
        self.log = log
        self.session = session
        self.message_ids: set[str] = set()
        self.tool_call_ids: set[str] = set()
        self.compaction_ids: set[str] = set()
        self.feedback: set[tuple[str, str]] = set()  # (message id, citation)
        self._follower = SessionFollower(log, session, self._apply)

    def catch_up(self) -> ConversationLedger:
        if self.log.has_session(self.session):
            self._follower.catch_up()
        return self

    def absorb(self, events: list[Any]) -> None:
        """Apply events this process just appended (replaying any gap before them)."""
        self._follower.absorb(events)

    def _apply(self, _seq: int, event_type: str, _timestamp: str, payload: dict[str, Any]) -> None:
        if event_type == TRANSCRIPT_TURN:
            if payload.get("message_id"):
                self.message_ids.add(str(payload["message_id"]))
        elif event_type == TOOL_CALL_COMPLETED:
            if payload.get("tool_use_id"):
                self.tool_call_ids.add(str(payload["tool_use_id"]))
        elif event_type == COMPACTED:
            if payload.get("compaction_id"):
                self.compaction_ids.add(str(payload["compaction_id"]))
        elif event_type in FEEDBACK_TYPES and payload.get("message_id") and payload.get("citation"):
            self.feedback.add((str(payload["message_id"]), str(payload["citation"])))
