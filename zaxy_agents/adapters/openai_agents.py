"""The OpenAI Agents SDK with Zaxy memory: a ``Session`` backed by the Eventloom, and Zaxy's MCP tools.

```python
from agents import Agent, Runner
from zaxy_agents.adapters.openai_agents import ZaxySession, zaxy_mcp_server

session = ZaxySession("user-42", eventloom_path=".eventloom")   # instead of SQLiteSession("user-42", "x.db")
async with zaxy_mcp_server(eventloom_path=".eventloom") as memory_tools:
    agent = Agent(name="Assistant", mcp_servers=[memory_tools])
    result = await Runner.run(agent, "What did we decide about retries?", session=session)
```

Every item the SDK adds is one ``transcript.turn`` in session ``openai-agents.<session_id>`` carrying the exact
item, so ``get_items`` returns what was added, byte for byte, in another process or after a restart, and the
conversation is cited memory for Memory Checkout (``scope=["openai-agents.*"]``), the MCP tools and LangGraph.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from zaxy_agents.fabric import MemoryFabric

from ._common import OwnedFabric, conversation_session, text_of

FRAMEWORK = "openai-agents"
DEFAULT_PREFIX = "openai-agents"


def describe_item(item: dict[str, Any]) -> tuple[str, str]:
    """How a Responses API input item reads as a transcript turn: ``(role, text)``."""
    kind = item.get("type")
    if kind == "function_call":
        return "assistant", f"called {item.get('name')}({item.get('arguments', '')})"
    if kind in ("function_call_output", "custom_tool_call_output", "computer_call_output"):
        output = item.get("output")
        return "tool", output if isinstance(output, str) else text_of(output) or json.dumps(output)
    if kind == "reasoning":
        return "assistant", text_of(item.get("summary"))
    role = item.get("role")
    if isinstance(role, str):
        return ("system" if role == "developer" else role), text_of(item.get("content"))
    return "assistant", text_of(item.get("content"))


class ZaxySession:
    """The SDK's ``Session`` protocol on the Eventloom (a drop-in for ``SQLiteSession``).

    Args:
        session_id: the SDK's conversation id (any string).
        memory: a shared :class:`MemoryFabric`; ``None`` opens one at ``eventloom_path`` (or
            ``ZAXY_EVENTLOOM_PATH`` / ``./.eventloom``) and :meth:`close` closes it.
        session_settings: the SDK's ``SessionSettings`` (its ``limit`` applies when ``get_items`` gets none).
        session_prefix: Eventloom sessions are ``<prefix>.<session_id>``.
    """

    def __init__(
        self,
        session_id: str,
        memory: MemoryFabric | None = None,
        *,
        eventloom_path: str | os.PathLike[str] | None = None,
        session_settings: Any = None,
        session_prefix: str = DEFAULT_PREFIX,
    ) -> None:
        from agents.memory.session_settings import SessionSettings, coerce_session_settings

        self.session_id = session_id
        self.session_settings = (
            coerce_session_settings(session_settings) if session_settings is not None else SessionSettings()
        )
        self._memory = OwnedFabric(memory, eventloom_path)
        self.eventloom_session = conversation_session(session_id, session_prefix)
        self._history = self._memory.fabric.item_history(
            self.eventloom_session, framework=FRAMEWORK, describe=describe_item
        )

    @property
    def memory(self) -> MemoryFabric:
        return self._memory.fabric

    async def get_items(self, limit: int | None = None) -> list[Any]:
        from agents.memory.session_settings import resolve_session_limit

        chosen = resolve_session_limit(limit, self.session_settings)
        return await asyncio.to_thread(self._history.items, chosen)

    async def add_items(self, items: list[Any]) -> None:
        await asyncio.to_thread(self._history.add, [_plain(item) for item in items])

    async def pop_item(self) -> Any:
        return await asyncio.to_thread(self._history.pop)

    async def clear_session(self) -> None:
        await asyncio.to_thread(self._history.clear)

    def close(self) -> None:
        self._memory.close()


def _plain(item: Any) -> dict[str, Any]:
    """Items are TypedDicts (plain dicts); a pydantic model from the SDK's output is dumped the way it sends it."""
    if isinstance(item, dict):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_unset=True)
    raise TypeError(f"session items must be dicts, got {type(item).__name__}")


def zaxy_mcp_server(
    *,
    eventloom_path: str | os.PathLike[str] | None = None,
    session_id: str | None = None,
    profile: str = "core",
    cache_tools_list: bool = True,
    name: str = "zaxy-memory",
    client_session_timeout_seconds: float = 30,
) -> Any:
    """``MCPServerStdio`` running ``zaxy serve`` (this interpreter), for ``Agent(mcp_servers=[...])``.

    ``session_id`` is the session the tools write to when a call names none; ``profile`` ``core`` (8 tools) or
    ``full``. Use it as the SDK's other MCP servers: ``async with zaxy_mcp_server(...) as server``.
    """
    from agents.mcp import MCPServerStdio

    args = ["-m", "zaxy_agents.cli.entry", "serve", "--profile", profile]
    if eventloom_path is not None:
        args += ["--eventloom-path", os.fspath(eventloom_path)]
    if session_id is not None:
        args += ["--session-id", session_id]
    return MCPServerStdio(
        params={"command": sys.executable, "args": args, "env": dict(os.environ)},
        cache_tools_list=cache_tools_list,
        name=name,
        client_session_timeout_seconds=client_session_timeout_seconds,
    )


class ScriptedModel:
    """An offline stand-in for a model (examples, tests): ``policy(input_items, tool_names)`` returns the reply,
    either a string (the assistant's answer) or ``("tool name", {arguments})`` (a function call).

    Built on the SDK's ``Model`` interface, so ``Agent(model=ScriptedModel(policy))`` runs the real agent loop
    (tools, MCP servers, sessions) without a network.
    """

    def __new__(cls, policy: Any) -> Any:
        return _scripted_model_class()(policy)


def _scripted_model_class() -> type:
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    class _Scripted(Model):
        def __init__(self, policy: Any) -> None:
            self.policy = policy
            self.calls = 0

        async def get_response(self, system_instructions: Any, input: Any, model_settings: Any, tools: Any,
                               output_schema: Any, handoffs: Any, tracing: Any, **kwargs: Any) -> Any:  # fmt: skip
            items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
            reply = self.policy(items, [getattr(tool, "name", "") for tool in tools])
            self.calls += 1
            if isinstance(reply, tuple):
                name, arguments = reply
                output: Any = ResponseFunctionToolCall(
                    type="function_call",
                    name=name,
                    arguments=json.dumps(arguments),
                    call_id=f"call_{self.calls}",
                    id=f"fc_{self.calls}",
                    status="completed",
                )
            else:
                text = ResponseOutputText(type="output_text", text=str(reply), annotations=[])
                output = ResponseOutputMessage(
                    type="message", id=f"msg_{self.calls}", role="assistant", status="completed", content=[text]
                )
            return ModelResponse(output=[output], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("ScriptedModel answers Runner.run / run_sync, not streamed runs")

    return _Scripted
