"""An agent that explains a failure causally and proposes a procedure for review — offline, scripted model.

A real LangGraph agent (``langchain.agents.create_agent``) whose tools are Zaxy's MCP tools (full profile), loaded
through ``langchain-mcp-adapters`` from one ``zaxy serve`` process over stdio. The chat model is *scripted*: a
deterministic policy that reads the tool results so far and picks the next call, so the example needs no network
and no API key. Swap in any tool-calling chat model to run it for real.

What the agent does, on a memory where a deploy failed and was later fixed:

1. ``memory_checkout("why did make deploy fail?")`` — cited facts and evidence;
2. ``memory_append(outcome.explained)`` — "the expired CI token *caused* the failed deploy", citing the failure;
   Zaxy's producer turns it into a proposed, non-authoritative causal edge;
3. ``memory_causal_predecessors`` — checks the explanation is now in causal memory, with its evidence;
4. ``memory_consolidation_candidate`` — proposes the fix as a *procedure* citing the failure and the fix, pending
   review; it is not memory until a human reviews it (``zaxy memory consolidation review ...``).

Usage: python examples/causal_review_agent.py [--eventloom-path DIR]   (prints a JSON summary)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools

from zaxy_agents.fabric import MemoryFabric

SESSION = "ops"
QUESTION = "The deploy failed. Why, and how do we avoid it next time?"


def seed(eventloom: Path) -> None:
    """Earlier work in this session: a token expired, a deploy failed, the token was rotated, the deploy worked."""
    with MemoryFabric.from_path(eventloom) as memory:
        memory.append(SESSION, "fact.asserted", {"key": "ci token expired", "fact": "the CI deploy token expired"})
        memory.append(
            SESSION, "command.completed", {"command": "make deploy", "exit_code": 1, "output": "401 from the registry"}
        )
        memory.append(SESSION, "command.completed", {"command": "vault rotate ci-token", "exit_code": 0})
        memory.append(SESSION, "command.completed", {"command": "make deploy", "exit_code": 0, "output": "deployed"})


class ScriptedIncidentModel(BaseChatModel):
    """A deterministic stand-in for an LLM: each turn it looks at the tool results so far and decides the next step."""

    @property
    def _llm_type(self) -> str:
        return "scripted-incident-reviewer"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedIncidentModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        results = [_structured(m) for m in messages if isinstance(m, ToolMessage)]
        return ChatResult(generations=[ChatGeneration(message=self._next(results))])

    def _next(self, results: list[dict[str, Any]]) -> AIMessage:
        if not results:
            return _call("memory_checkout", {"query": "why did make deploy fail?"})
        packet = results[0]
        commands = sorted(
            (e for e in packet["evidence"] if e["event_type"] == "command.completed"), key=lambda e: e["seq"]
        )
        failure = next(e for e in commands if " exit " in f" {e['text']} ")
        fixes = [e for e in commands if e["seq"] > failure["seq"] and " ok" in e["text"]]
        cause = packet["current_facts"][0]
        effect = f"make deploy #{failure['seq']}"
        if len(results) == 1:
            explanation = {
                "cause": {"name": cause["name"], "entity_type": cause["entity_type"]},
                "effect": {"name": effect, "entity_type": "command_run"},
                "relation": "caused",
                "confidence": 0.85,
                "evidence": failure["citation"],
                "explanation": "the registry answered 401 while the CI token was expired",
            }
            return _call("memory_append", {"type": "outcome.explained", "payload": explanation})
        if len(results) == 2:
            return _call("memory_causal_predecessors", {"entity": effect, "entity_type": "command_run", "depth": 1})
        if len(results) == 3:
            steps = " then ".join(fix["text"].split(" ok")[0] for fix in fixes)
            return _call(
                "memory_consolidation_candidate",
                {
                    "candidate_type": "procedure",
                    "title": "Recover a deploy rejected with 401",
                    "summary": f"When make deploy gets a 401 from the registry, the CI token has expired: {steps}.",
                    "source_events": [failure["citation"], *(fix["citation"] for fix in fixes)],
                    "confidence": 0.7,
                    "method": "agent_incident_review",
                },
            )
        why, candidate = results[2], results[3]
        edge = why["hits"][0]
        return AIMessage(
            content=(
                f"The deploy failed because {edge['source']['name']} ({edge['relation_type']}, confidence "
                f"{edge['confidence']}, evidence {edge['evidence']}); this is a proposed, non-authoritative "
                f"explanation. I proposed procedure {candidate['candidate_id']} for review: it is not memory until "
                "someone accepts it."
            )
        )


def _call(name: str, arguments: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": arguments, "id": f"call-{name}"}])


def _structured(message: ToolMessage) -> dict[str, Any]:
    artifact = message.artifact if isinstance(message.artifact, dict) else {}
    return artifact.get("structured_content") or {}


async def run(eventloom: Path) -> dict[str, Any]:
    seed(eventloom)
    client = MultiServerMCPClient(
        {
            "zaxy": {
                "transport": "stdio",
                "command": sys.executable,
                "args": [
                    "-m",
                    "zaxy_agents.cli.entry",
                    "serve",
                    "--eventloom-path",
                    str(eventloom),
                    "--session-id",
                    SESSION,
                    "--profile",
                    "full",
                ],
            }
        }
    )
    async with client.session("zaxy") as session:
        tools = await load_mcp_tools(session)
        agent = create_agent(ScriptedIncidentModel(), tools)
        state = await agent.ainvoke({"messages": [HumanMessage(QUESTION)]})
    messages = state["messages"]
    results = {m.name: _structured(m) for m in messages if isinstance(m, ToolMessage)}
    return {
        "tools_called": [m.name for m in messages if isinstance(m, ToolMessage)],
        "answer": messages[-1].content,
        "causal_edge": results["memory_causal_predecessors"]["hits"][0],
        "candidate": results["memory_consolidation_candidate"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eventloom-path", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="zaxy-causal-agent-") as scratch:
        summary = asyncio.run(run(args.eventloom_path or Path(scratch) / "eventloom"))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
