"""The OpenAI Agents SDK (``openai-agents``) with Zaxy: the real Runner, a scripted model, ``ZaxySession`` and
Zaxy's MCP tools through the SDK's own MCP client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

agents = pytest.importorskip("agents", reason="openai-agents is not installed: pip install -e '.[dev]'")
from agents import Agent, Runner, SQLiteSession  # noqa: E402

from zaxy_agents.adapters.openai_agents import ScriptedModel, ZaxySession  # noqa: E402
from zaxy_agents.fabric import MemoryFabric  # noqa: E402

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")


def echo_history(items: list[dict[str, Any]], tools: list[str]) -> str:
    said = [item["content"] for item in items if item.get("role") == "user" and isinstance(item.get("content"), str)]
    return f"heard {len(said)}: " + " | ".join(said)


def test_session_is_a_drop_in_for_sqlite_session(tmp_path: Path) -> None:
    outputs = {}
    for name, session in {
        "sqlite": SQLiteSession("user-42", str(tmp_path / "sessions.db")),
        "zaxy": ZaxySession("user-42", eventloom_path=tmp_path / "eventloom"),
    }.items():
        agent = Agent(name="echo", model=ScriptedModel(echo_history))
        first = Runner.run_sync(agent, "my name is Ana", session=session)
        second = Runner.run_sync(agent, "what is my name?", session=session)
        outputs[name] = (first.final_output, second.final_output, Runner.run_sync(agent, "bye", session=session))
        items = [json.dumps(item, sort_keys=True) for item in _run(session.get_items())]
        outputs[name] += (items,)
        session.close()
    assert (
        outputs["zaxy"][:2]
        == outputs["sqlite"][:2]
        == ("heard 1: my name is Ana", "heard 2: my name is Ana | what is my name?")
    )
    assert outputs["zaxy"][3] == outputs["sqlite"][3]


def test_items_round_trip_exactly_across_processes_and_pop_and_clear(tmp_path: Path) -> None:
    eventloom = tmp_path / "eventloom"
    items = [
        {"role": "user", "content": "Deploys happen on Tuesdays"},
        {"type": "function_call", "name": "lookup", "arguments": '{"q": "deploy"}', "call_id": "c1", "id": "fc1"},
        {"type": "function_call_output", "call_id": "c1", "output": "calendar: Tuesday 10:00"},
        {"type": "message", "role": "assistant", "id": "m1", "status": "completed",
         "content": [{"type": "output_text", "text": "Tuesdays at 10:00.", "annotations": []}]},
    ]  # fmt: skip
    session = ZaxySession("chat 1/ä", eventloom_path=eventloom)
    _run(session.add_items(items))
    assert json.dumps(_run(session.get_items())) == json.dumps(items)
    assert _run(session.get_items(limit=2)) == items[2:]
    code = (
        "import asyncio, json\n"
        "from zaxy_agents.adapters.openai_agents import ZaxySession\n"
        f"s = ZaxySession('chat 1/ä', eventloom_path={str(eventloom)!r})\n"
        "print(json.dumps(asyncio.run(s.get_items())))\n"
    )
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == json.dumps(items)  # same items, same key order
    assert _run(session.pop_item()) == items[-1]
    assert _run(ZaxySession("chat 1/ä", eventloom_path=eventloom).get_items()) == items[:-1]
    _run(session.clear_session())
    assert _run(session.get_items()) == [] and _run(session.pop_item()) is None
    turns = [e for e in session.memory.replay(session.eventloom_session) if e.type == "transcript.turn"]
    assert [t.payload["role"] for t in turns] == ["user", "assistant", "tool", "assistant"]
    assert turns[1].payload["text"] == 'called lookup({"q": "deploy"})'
    session.close()


def test_conversation_is_cited_memory(tmp_path: Path) -> None:
    agent = Agent(name="echo", model=ScriptedModel(echo_history))
    with MemoryFabric.from_path(tmp_path / "eventloom") as memory:
        session = ZaxySession("ana", memory)
        Runner.run_sync(agent, "The staging database is db-staging-2", session=session)
        packet = memory.checkout("which host is the staging database?", scope=["openai-agents.*"])
        assert "db-staging-2" in packet.prompt and "eventloom://openai-agents.ana/events/" in packet.prompt


def _run(awaitable: Any) -> Any:
    import asyncio

    return asyncio.run(awaitable) if asyncio.iscoroutine(awaitable) else awaitable


def test_example_runs_offline_with_zaxy_mcp_tools_through_the_sdk(tmp_path: Path) -> None:
    """The example's agent records a decision through Zaxy's MCP server (the SDK's MCPServerStdio running
    `zaxy serve`) and answers the next question from a cited memory_checkout."""
    from tests.langgraph.test_examples import EXAMPLES, run_agent

    answer, count = run_agent(EXAMPLES / "openai-agents", tmp_path).splitlines()
    assert answer.startswith("- [decision] http retries: retry HTTP calls 3 times with exponential backoff")
    assert "(eventloom://team-decisions/events/1#" in answer and count == "8 items in session openai-agents.ana"
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        assert next(e.type for e in memory.replay("team-decisions")) == "decision.recorded"
