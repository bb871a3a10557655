"""A LangGraph agent loads our tools through langchain-mcp-adapters (stdio) and runs memory_checkout."""

from __future__ import annotations

import sys
from pathlib import Path

from langchain_core.messages import AIMessage, ToolMessage
from langchain_mcp_adapters.client import MultiServerMCPClient
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from zaxy_agents.fabric import MemoryFabric


async def test_langgraph_tool_node_runs_memory_checkout_over_stdio(tmp_path: Path) -> None:
    root = tmp_path / "eventloom"
    with MemoryFabric.from_path(root) as fabric:
        event = fabric.append("lg", "decision.recorded", {"decision": "release trains leave every Thursday"})
    client = MultiServerMCPClient(
        {
            "zaxy": {
                "transport": "stdio",
                "command": sys.executable,
                "args": ["-m", "zaxy_agents.cli.entry", "serve", "--eventloom-path", str(root), "--session-id", "lg"],
            }
        }
    )
    tools = await client.get_tools()
    assert tools[0].name == "memory_checkout" and len(tools) == 8

    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    agent = graph.compile()
    calls = [
        {"name": "memory_checkout", "args": {"query": "when do release trains leave?"}, "id": "call-1"},
        {"name": "memory_checkout", "args": {"query": "x", "unexpected": True}, "id": "call-2"},
    ]
    state = await agent.ainvoke({"messages": [AIMessage(content="", tool_calls=calls)]})
    results = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    answer = results["call-1"]
    text = answer.content if isinstance(answer.content, str) else " ".join(part["text"] for part in answer.content)
    assert "Thursday" in text and event.citation in text
    assert answer.artifact["structured_content"]["current_facts"][0]["citation"] == event.citation
    assert results["call-2"].status == "error" and "invalid_request" in str(results["call-2"].content)
