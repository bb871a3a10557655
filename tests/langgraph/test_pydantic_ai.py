"""Pydantic AI with Zaxy: the real Agent with its FunctionModel (offline), ``ZaxyMessageHistory`` and
``memory_instructions``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="pydantic-ai-slim is not installed: pip install -e '.[dev]'")
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from zaxy_agents.adapters.pydantic_ai import ZaxyMessageHistory, memory_instructions
from zaxy_agents.fabric import MemoryFabric


def remembering_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Offline model: calls the weather tool once, then answers with every user prompt it can see."""
    prompts = [p.content for m in messages for p in m.parts if p.part_kind == "user-prompt"]
    if prompts[-1].startswith("weather") and messages[-1].parts[-1].part_kind == "user-prompt":
        return ModelResponse(parts=[ToolCallPart("weather", {"city": "Lisbon"}, tool_call_id="w1")])
    returned = [p.content for m in messages for p in m.parts if p.part_kind == "tool-return"]
    return ModelResponse(parts=[TextPart(" | ".join(map(str, prompts + returned)))])


def make_agent(**kwargs: Any) -> Agent:
    agent = Agent(FunctionModel(remembering_model), **kwargs)

    @agent.tool_plain
    def weather(city: str) -> str:
        return f"sunny in {city}"

    return agent


def test_history_persists_and_round_trips(tmp_path: Path) -> None:
    eventloom = tmp_path / "eventloom"
    agent = make_agent()
    with ZaxyMessageHistory("conv 1", eventloom_path=eventloom) as history:
        first = agent.run_sync("my name is Ana", message_history=history.messages())
        history.extend(first.new_messages())
        second = agent.run_sync("weather please", message_history=history.messages())
        history.extend(second.new_messages())
        assert second.output == "my name is Ana | weather please | sunny in Lisbon"
        expected = ModelMessagesTypeAdapter.dump_json(second.all_messages())
    with ZaxyMessageHistory("conv 1", eventloom_path=eventloom) as history:
        assert ModelMessagesTypeAdapter.dump_json(history.messages()) == expected
        assert agent.run_sync("and again?", message_history=history.messages()).output.startswith("my name is Ana")
    code = (
        "from pydantic_ai.messages import ModelMessagesTypeAdapter\n"
        "from zaxy_agents.adapters.pydantic_ai import ZaxyMessageHistory\n"
        f"h = ZaxyMessageHistory('conv 1', eventloom_path={str(eventloom)!r})\n"
        "print(ModelMessagesTypeAdapter.dump_json(h.messages()).decode())\n"
    )
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip().encode() == expected


def test_limit_pop_clear_and_turns(tmp_path: Path) -> None:
    agent = make_agent()
    with ZaxyMessageHistory("c", eventloom_path=tmp_path / "eventloom") as history:
        for text in ("one", "weather now", "three"):
            history.extend(agent.run_sync(text, message_history=history.messages()).new_messages())
        assert history.messages(limit=3)[0].kind == "request"
        assert len(history.messages()) == 8
        popped = history.pop()
        assert popped is not None and popped.kind == "response" and len(history.messages()) == 7
        turns = [e.payload for e in history.memory.replay(history.session) if e.type == "transcript.turn"]
        assert [t["role"] for t in turns][:4] == ["user", "assistant", "user", "assistant"]
        assert turns[3]["text"] == 'called weather({"city": "Lisbon"})' and turns[4]["role"] == "tool"
        history.clear()
        assert history.messages() == [] and history.pop() is None


def test_memory_instructions_bring_other_conversations_with_citations(tmp_path: Path) -> None:
    seen: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages[-1].instructions or "")
        return ModelResponse(parts=[TextPart("ok")])

    with MemoryFabric.from_path(tmp_path / "eventloom") as memory:
        monday = ZaxyMessageHistory("monday", memory)
        plain = Agent(FunctionModel(model))
        monday.extend(plain.run_sync("Our staging database is db-staging-2").new_messages())
        agent = Agent(FunctionModel(model), instructions=memory_instructions(memory, scope=["pydantic-ai.*"]))
        tuesday = ZaxyMessageHistory("tuesday", memory)
        tuesday.extend(agent.run_sync("Which host is the staging database?").new_messages())
        assert "db-staging-2" in seen[-1] and "eventloom://pydantic-ai.monday/events/" in seen[-1]
        turns = [e.payload["text"] for e in memory.replay(tuesday.session) if e.type == "transcript.turn"]
        assert turns == ["Which host is the staging database?", "ok"]  # memory's packet is never re-cited as said


def test_example_runs_offline(tmp_path: Path) -> None:
    from tests.langgraph.test_examples import EXAMPLES, run_agent

    answer, count = run_agent(EXAMPLES / "pydantic-ai", tmp_path).splitlines()
    assert answer.startswith("- [current, transcript.turn] Our staging database is db-staging-2. (eventloom://")
    assert "pydantic-ai.monday/events/1#" in answer and count == "2 messages in pydantic-ai.tuesday"
