"""A conversation kept as exact framework items (OpenAI Agents SDK input items, Pydantic AI messages).

Other frameworks' memory interfaces store a conversation as a list they read back verbatim. Each item is one
``transcript.turn`` event: the usual ``role``, ``text`` and ``message_id`` (so the conversation is cited,
retrievable memory like a LangGraph thread's), plus ``item`` (the exact JSON the framework gave) and
``framework`` (and ``key_order`` when the item's keys are not sorted, so it comes back in its own order).
Removing the newest item appends ``transcript.item_removed`` (``message_id``); clearing appends
``transcript.cleared``. The log keeps both (deleting is an event); the projection marks a removed or cleared
turn as no longer current, so Memory Checkout stops presenting it as what was said.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from zaxy_agents.eventloom.follower import SessionFollower
from zaxy_agents.eventloom.key_order import key_order, restore_key_order
from zaxy_agents.eventloom.protocol import EventLog

from .events import TRANSCRIPT_TURN

ITEM_REMOVED = "transcript.item_removed"
CLEARED = "transcript.cleared"
MAX_TEXT_CHARS = 200_000

# (item) -> (role, text): how a framework's item reads as a transcript turn.
Describe = Callable[[dict[str, Any]], tuple[str, str]]


class ItemHistory:
    """The live items of one session, in order, kept current with the log (other processes included)."""

    def __init__(self, log: EventLog, session: str, framework: str, describe: Describe, actor: str) -> None:
        self.log = log
        self.session = session
        self.framework = framework
        self.describe = describe
        self.actor = actor
        self._items: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.RLock()
        self._follower = SessionFollower(log, session, self._apply)

    def items(self, limit: int | None = None) -> list[dict[str, Any]]:
        with self._lock:
            self._follower.catch_up()
            chosen = self._items if limit is None else self._items[-limit:] if limit > 0 else []
            return [item for _id, item in chosen]

    def add(self, items: Sequence[dict[str, Any]]) -> None:
        drafts = [self._turn(item) for item in items]
        if not drafts:
            return
        with self._lock:
            self._follower.catch_up()
            self._follower.absorb(self.log.append_many(self.session, drafts))

    def pop(self) -> dict[str, Any] | None:
        with self._lock:
            self._follower.catch_up()
            if not self._items:
                return None
            message_id, item = self._items[-1]
            payload = {"message_id": message_id, "framework": self.framework}
            self._follower.absorb([self.log.append(self.session, ITEM_REMOVED, payload, actor=self.actor)])
            return item

    def clear(self) -> None:
        with self._lock:
            self._follower.catch_up()
            if self._items:
                event = self.log.append(self.session, CLEARED, {"framework": self.framework}, actor=self.actor)
                self._follower.absorb([event])

    def _turn(self, item: dict[str, Any]) -> dict[str, Any]:
        role, text = self.describe(item)
        payload: dict[str, Any] = {
            "role": role,
            "text": text[:MAX_TEXT_CHARS] or f"[{item.get('type') or item.get('kind') or 'item'}]",
            "message_id": f"{self.framework}-{uuid.uuid4().hex}",
            "framework": self.framework,
            "item": item,
        }
        if order := key_order(item):
            payload["key_order"] = order  # the log sorts keys; the item comes back in the framework's order
        if len(text) > MAX_TEXT_CHARS:
            payload["truncated"] = True
        return {"type": TRANSCRIPT_TURN, "payload": payload, "actor": self.actor}

    def _apply(self, seq: int, event_type: str, _timestamp: str, payload: dict[str, Any]) -> None:
        if event_type == TRANSCRIPT_TURN and isinstance(payload.get("item"), dict):
            item = restore_key_order(payload["item"], payload.get("key_order"))
            self._items.append((str(payload.get("message_id")), item))
        elif event_type == ITEM_REMOVED:
            target = payload.get("message_id")
            for index in range(len(self._items) - 1, -1, -1):
                if self._items[index][0] == target:
                    del self._items[index]
                    break
        elif event_type == CLEARED:
            self._items.clear()
