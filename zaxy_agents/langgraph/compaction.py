"""Compaction planning: count a conversation's tokens with tiktoken and choose which messages to keep.

The plan keeps, within ``keep_tokens``:

* leading system messages (the developer's instructions; never removed),
* the newest whole *units* — a human message, a plain assistant message, or an assistant message with tool
  calls together with its tool results (a tool result is never separated from its call, as providers require),
* always the latest user request (the current task) even when the turn's tool exchanges do not all fit: then
  the request plus the newest units after it that fit are kept and the middle of the turn is removed,
* always the newest unit, even alone above the budget (a message is never cut).

Earlier recovery packets are dropped (the new packet replaces them). Everything else is removed; the removed
messages are already in the Eventloom, and the recovery packet cites what mattered in them.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from zaxy_agents.checkout.tokens import DEFAULT_ENCODING, get_encoding
from zaxy_agents.checkpoints.transcript import is_memory_derived, message_id

PER_MESSAGE_OVERHEAD = 4  # role and separators, as OpenAI's chat format counts them
_CACHE_SIZE = 4096


class MessageTokenCounter:
    """Tokens of LangChain messages with the real tokenizer (offline tiktoken): text, name and tool calls.

    Counts are cached per message (id, type and text hash), so counting a long history before every model
    call only tokenises the new messages.
    """

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        self.encoding = encoding
        self._encoder = get_encoding(encoding)
        self._cache: OrderedDict[tuple[Any, ...], int] = OrderedDict()
        self._lock = threading.Lock()  # one counter serves every thread of an agent

    def message(self, message: BaseMessage) -> int:
        text = str(message.text)
        calls = getattr(message, "tool_calls", None) or []
        key = (message.id, message.type, hash(text), len(calls))
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        count = PER_MESSAGE_OVERHEAD + len(self._encoder.encode(text, disallowed_special=()))
        if message.name:
            count += len(self._encoder.encode(message.name, disallowed_special=()))
        if calls:
            rendered = json.dumps([{"name": c.get("name"), "args": c.get("args")} for c in calls], default=str)
            count += len(self._encoder.encode(rendered, disallowed_special=()))
        with self._lock:
            self._cache[key] = count
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return count

    def __call__(self, messages: Sequence[BaseMessage]) -> int:
        return sum(self.message(m) for m in messages if isinstance(m, BaseMessage))


@dataclass(frozen=True)
class CompactionPlan:
    pinned: list[BaseMessage]  # leading system messages, kept first
    kept: list[BaseMessage]
    removed: list[BaseMessage]  # conversation messages removed (earlier recovery packets are not counted here)
    removed_tokens: int

    @property
    def compaction_id(self) -> str:
        """Stable for the same removal, so a re-run step records one compaction."""
        ids = "\n".join(message_id(m, i) for i, m in enumerate(self.removed))
        return hashlib.sha256(ids.encode()).hexdigest()[:24]


def plan_compaction(messages: Sequence[BaseMessage], keep_tokens: int, count: MessageTokenCounter) -> CompactionPlan:
    """Which messages to keep within ``keep_tokens`` (see the module docstring)."""
    position = 0
    pinned: list[BaseMessage] = []
    while position < len(messages) and isinstance(messages[position], SystemMessage):
        if not is_memory_derived(messages[position]):
            pinned.append(messages[position])
        position += 1
    body = [m for m in messages[position:] if isinstance(m, BaseMessage) and not is_memory_derived(m)]
    units = _units(body)
    sizes = [count(unit) for unit in units]
    first_kept = _suffix_start(sizes, len(units), keep_tokens)
    anchor = next((i for i in range(len(units) - 1, -1, -1) if isinstance(units[i][0], HumanMessage)), None)
    if anchor is not None and anchor < first_kept:
        tail_start = _suffix_start(sizes, len(units), keep_tokens - sizes[anchor], lower=anchor + 1)
        kept_units = [units[anchor], *units[tail_start:]]
    else:
        kept_units = units[first_kept:]
    if units and (not kept_units or kept_units[-1] is not units[-1]):
        kept_units.append(units[-1])
    kept = [m for unit in kept_units for m in unit]
    kept_ids = {id(m) for m in kept}
    removed = [m for m in body if id(m) not in kept_ids]
    return CompactionPlan(pinned, kept, removed, count(removed))


def _units(body: list[BaseMessage]) -> list[list[BaseMessage]]:
    """Group an assistant message with tool calls and the tool results that answer it."""
    units: list[list[BaseMessage]] = []
    for message in body:
        if isinstance(message, ToolMessage) and units and _answers(units[-1], message):
            units[-1].append(message)
        else:
            units.append([message])
    return units


def _answers(unit: list[BaseMessage], result: ToolMessage) -> bool:
    head = unit[0]
    return isinstance(head, AIMessage) and any(call.get("id") == result.tool_call_id for call in head.tool_calls)


def _suffix_start(sizes: list[int], end: int, budget: int, lower: int = 0) -> int:
    """The smallest index ``i >= lower`` such that units ``i..end`` fit in ``budget`` (``end`` when none fits)."""
    start, used = end, 0
    while start > lower and used + sizes[start - 1] <= budget:
        start -= 1
        used += sizes[start]
    return start
