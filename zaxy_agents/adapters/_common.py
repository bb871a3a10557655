"""What the framework adapters share: opening memory, and conversation ids as Eventloom sessions."""

from __future__ import annotations

import os
from typing import Any

from zaxy_agents.checkpoints import thread_session
from zaxy_agents.fabric import MemoryFabric


class OwnedFabric:
    """A fabric passed in (shared, left open) or opened here from a folder / the environment (closed here)."""

    def __init__(self, memory: MemoryFabric | None, eventloom_path: str | os.PathLike[str] | None) -> None:
        self.owned = memory is None
        self.fabric = memory if memory is not None else MemoryFabric.from_path(eventloom_path)

    def close(self) -> None:
        if self.owned:
            self.fabric.close()


def conversation_session(conversation_id: Any, prefix: str) -> str:
    """``<prefix>.<id>`` (the mapping LangGraph threads use, so any id is a valid, distinct session)."""
    return thread_session(str(conversation_id), prefix)


def text_of(content: Any) -> str:
    """Text of a message content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                text = part.get("text") or part.get("content") or part.get("refusal")
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(parts)
    return "" if content is None else str(content)
