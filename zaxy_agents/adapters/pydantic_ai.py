"""Pydantic AI with Zaxy memory: message history that persists, and a cited Memory Checkout per run.

Pydantic AI leaves persistence to you (``message_history=`` in, ``result.new_messages()`` out; its issue
"Ability to Persist Messages in External Stores" is among its most asked-for). ``ZaxyMessageHistory`` is that
store, and ``memory_instructions`` gives the agent what it remembers across conversations::

    from pydantic_ai import Agent
    from zaxy_agents.adapters.pydantic_ai import ZaxyMessageHistory, memory_instructions

    history = ZaxyMessageHistory("conversation-7", eventloom_path=".eventloom")
    agent = Agent("openai:gpt-4o", instructions=memory_instructions(history.memory, scope=["pydantic-ai.*"]))
    result = agent.run_sync("Where do we deploy?", message_history=history.messages())
    history.extend(result.new_messages())

Each message is one ``transcript.turn`` in session ``pydantic-ai.<conversation_id>`` carrying the message as
``ModelMessagesTypeAdapter`` dumps it, so ``messages()`` returns equal objects after a restart or in another
process, and the conversation is cited memory for Memory Checkout, the MCP tools and LangGraph.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from zaxy_agents.fabric import MemoryFabric

from ._common import OwnedFabric, conversation_session, text_of

FRAMEWORK = "pydantic-ai"
DEFAULT_PREFIX = "pydantic-ai"
_ROLE_OF_PART = {"user-prompt": "user", "system-prompt": "system", "tool-return": "tool", "retry-prompt": "user"}


def describe_message(message: dict[str, Any]) -> tuple[str, str]:
    """How a dumped ``ModelRequest`` / ``ModelResponse`` reads as a transcript turn: ``(role, text)``."""
    parts = [part for part in message.get("parts", []) if isinstance(part, dict)]
    texts = []
    for part in parts:
        kind = part.get("part_kind")
        if kind == "tool-call":
            texts.append(f"called {part.get('tool_name')}({_args_text(part.get('args'))})")
        elif kind != "thinking":
            texts.append(text_of(part.get("content")))
    if message.get("kind") == "response":
        return "assistant", "\n".join(t for t in texts if t)
    roles = [_ROLE_OF_PART.get(str(part.get("part_kind")), "user") for part in parts]
    role = "user" if "user" in roles else roles[-1] if roles else "user"
    return role, "\n".join(t for t in texts if t)


def _args_text(args: Any) -> str:
    import json

    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


class ZaxyMessageHistory:
    """A Pydantic AI conversation kept in the Eventloom.

    Args:
        conversation_id: any string naming the conversation.
        memory: a shared :class:`MemoryFabric`; ``None`` opens one at ``eventloom_path`` (or
            ``ZAXY_EVENTLOOM_PATH`` / ``./.eventloom``) and :meth:`close` closes it.
        session_prefix: Eventloom sessions are ``<prefix>.<conversation_id>``.
    """

    def __init__(
        self,
        conversation_id: str,
        memory: MemoryFabric | None = None,
        *,
        eventloom_path: str | os.PathLike[str] | None = None,
        session_prefix: str = DEFAULT_PREFIX,
    ) -> None:
        self.conversation_id = conversation_id
        self._memory = OwnedFabric(memory, eventloom_path)
        self.session = conversation_session(conversation_id, session_prefix)
        self._history = self._memory.fabric.item_history(self.session, framework=FRAMEWORK, describe=describe_message)

    @property
    def memory(self) -> MemoryFabric:
        return self._memory.fabric

    def messages(self, limit: int | None = None) -> list[Any]:
        """The conversation as ``ModelMessage`` objects, for ``agent.run(..., message_history=...)``.

        ``limit`` keeps the newest messages (a Pydantic AI history should start with a request: the cut moves
        forward to the first ``ModelRequest``)."""
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        items = self._history.items(limit)
        if limit is not None:
            while items and items[0].get("kind") != "request":
                items = items[1:]
        return list(ModelMessagesTypeAdapter.validate_python(items))

    def extend(self, messages: Sequence[Any]) -> None:
        """Append messages (``result.new_messages()``), one atomic append."""
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        self._history.add(ModelMessagesTypeAdapter.dump_python(list(messages), mode="json"))

    def pop(self) -> Any | None:
        """Remove and return the newest message (the turn stops being current memory)."""
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        item = self._history.pop()
        return None if item is None else ModelMessagesTypeAdapter.validate_python([item])[0]

    def clear(self) -> None:
        self._history.clear()

    def close(self) -> None:
        self._memory.close()

    def __enter__(self) -> ZaxyMessageHistory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def memory_instructions(
    memory: MemoryFabric,
    *,
    scope: Sequence[str] = (),
    session: str | None = None,
    max_tokens: int = 1200,
    purpose: str | None = None,
) -> Callable[[Any], str]:
    """Dynamic ``instructions`` for ``Agent(instructions=...)``: a Memory Checkout for the run's prompt.

    Instructions are sent with each model request and never stored in the message history, so the packet is
    fresh every run and the history stays the conversation. The text is the packet's prompt (stable tier
    first, every item cited) closed by one line that follows its answerability verdict.
    """
    sessions = list(scope)

    def instructions(ctx: Any) -> str:
        prompt = ctx.prompt if isinstance(getattr(ctx, "prompt", None), str) else ""
        packet = memory.checkout(
            prompt[:4000], session=session, scope=sessions or None, max_tokens=max_tokens, purpose=purpose
        )
        guidance = {
            "answer_from_memory": "Rely on this memory and cite the eventloom:// citations you use.",
            "refresh_recommended": "This memory may be incomplete: verify before relying on it.",
        }.get(packet.quality.answerability, "Memory does not answer this: do not invent remembered facts; ask.")
        return f"{packet.prompt}\n\n{guidance}" if packet.prompt.strip() else guidance

    return instructions
