"""``as_of`` / ``--as-of`` are parsed (ISO-8601 and relative dates) or refused naming the field, on the CLI, over
MCP (a real stdio client), through the LangGraph tools and the Python API (issue 25, item 5). Compared as text,
"banana" sorted after every timestamp and returned everything."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from tests.conftest import run_zaxy_json
from tests.mcp._client import StdioClient, serve_params
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.instants import parse_instant
from zaxy_agents.langgraph import memory_tools
from zaxy_agents.langgraph.cognitive import COGNITIVE_TOOLS

NOW = dt.datetime(2026, 3, 12, 12, 0, tzinfo=dt.UTC)  # a Thursday


@pytest.mark.parametrize(
    ("text", "instant"),
    [
        ("2026-03-12T09:30:00Z", "2026-03-12T09:30:00.000000Z"),
        ("2026-03-12T11:30:00+02:00", "2026-03-12T09:30:00.000000Z"),
        ("2026-03-12 09:30", "2026-03-12T09:30:00.000000Z"),
        ("20260312T093000Z", "2026-03-12T09:30:00.000000Z"),
        ("2026-03-12", "2026-03-12T23:59:59.999999Z"),  # a date means its end: all of that day counts
        ("now", "2026-03-12T12:00:00.000000Z"),
        ("3 days ago", "2026-03-09T12:00:00.000000Z"),
        ("two hours ago", "2026-03-12T10:00:00.000000Z"),
        ("yesterday", "2026-03-11T23:59:59.999999Z"),
        ("the day before yesterday", "2026-03-10T23:59:59.999999Z"),
        ("last week", "2026-03-08T23:59:59.999999Z"),
        ("Last  Tuesday", "2026-03-10T23:59:59.999999Z"),
        ("this month", "2026-03-12T12:00:00.000000Z"),
    ],
)
def test_instants_parse(text: str, instant: str) -> None:
    assert parse_instant(text, now=NOW) == instant


NOT_INSTANTS = ["banana", "", "   ", "2026-13-01", "2026", "yesterday banana", "9999999 years ago", "NaN", "x" * 65]


@pytest.mark.parametrize("text", [*NOT_INSTANTS, "\ud800"])
def test_what_is_not_an_instant_is_refused_naming_the_field(text: str) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        parse_instant(text, field="--as-of", now=NOW)
    assert raised.value.field == "--as-of" and "ISO-8601" in raised.value.remediation


def _seed(root: Path) -> tuple[str, str]:
    with MemoryFabric.from_path(root) as memory:
        old = memory.append("s", "fact.asserted", {"key": "db.host", "fact": "the database host is db-1"})
        new = memory.append("s", "fact.asserted", {"key": "db.host", "fact": "the database host is db-2"})
        return old.timestamp, new.citation


def test_python_api(tmp_path: Path) -> None:
    old_moment, current = _seed(tmp_path / "loom")
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        for call in (
            lambda as_of: memory.checkout("database host", session="s", as_of=as_of),
            lambda as_of: memory.query("database host", sessions=["s"], as_of=as_of),
            lambda as_of: memory.consolidation_status("s", as_of=as_of),
            lambda as_of: memory.causal_successors("s", "db.host", as_of=as_of),
        ):
            with pytest.raises(InvalidRequestError) as raised:
                call("banana")
            assert raised.value.field == "as_of"
        assert memory.checkout("database host", session="s", as_of="1999-12-31").current_facts == []
        assert memory.query("database host", sessions=["s"], as_of="2 days ago").hits == []
        then = memory.checkout("database host", session="s", as_of=old_moment)
        assert [fact.summary for fact in then.current_facts] == ["the database host is db-1"]
        today = memory.checkout("database host", session="s", as_of="now")
        assert [fact.citation for fact in today.current_facts] == [current]


def test_cli(tmp_path: Path) -> None:
    _seed(tmp_path / "loom")
    where = ["--eventloom-path", str(tmp_path / "loom")]
    for command in (
        ["memory", "checkout", "database host", "-s", "s"],
        ["memory", "query", "database host", "-s", "s"],
        ["memory", "causal", "successors", "db.host", "-s", "s"],
        ["memory", "consolidation", "status", "-s", "s"],
    ):
        code, refused = run_zaxy_json(*command, "--as-of", "banana", *where)
        assert code == 2, refused
        assert refused["error"]["code"] == "invalid_request" and refused["error"]["field"] == "--as-of"
    code, empty = run_zaxy_json("memory", "checkout", "database host", "-s", "s", "--as-of", "1999-12-31", *where)
    assert code == 0 and empty["current_facts"] == []
    code, now = run_zaxy_json("memory", "checkout", "database host", "-s", "s", "--as-of", "now", *where)
    assert code == 0 and [fact["summary"] for fact in now["current_facts"]] == ["the database host is db-2"]


def test_mcp_over_stdio(tmp_path: Path) -> None:
    _seed(tmp_path / "loom")
    with StdioClient(serve_params(tmp_path / "loom", "--session-id", "s", "--profile", "full")) as client:
        for tool, arguments in (
            ("memory_checkout", {"query": "database host"}),
            ("memory_query", {"query": "database host"}),
            ("memory_causal_successors", {"entity_name": "db.host"}),
            ("memory_consolidation_status", {}),
            ("memory_consolidation", {"operation": "status"}),
        ):
            result = client.call(tool, {**arguments, "as_of": "banana"})
            assert result.isError, (tool, result.structuredContent)
            error = result.structuredContent["error"]
            assert (error["code"], error["field"]) == ("invalid_request", "as_of"), (tool, error)
        empty = client.ok("memory_checkout", {"query": "database host", "as_of": "1999-12-31"})
        assert empty["current_facts"] == [] and empty["as_of"] == "1999-12-31T23:59:59.999999Z"


def test_langgraph_tools(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as fabric:
        builder = StateGraph(MessagesState)
        builder.add_node("tools", ToolNode(memory_tools(fabric, include=list(COGNITIVE_TOOLS))))
        builder.add_edge(START, "tools")
        graph = builder.compile()
        for name, arguments in (
            ("memory_causal_successors", {"entity_name": "db.host"}),
            ("memory_consolidation_status", {}),
        ):
            request = AIMessage("", tool_calls=[{"name": name, "args": {**arguments, "as_of": "banana"}, "id": "c1"}])
            [_, message] = graph.invoke({"messages": [request]}, {"configurable": {"thread_id": "t"}})["messages"]
            assert message.status == "error"
            error = json.loads(str(message.content))["error"]
            assert (error["code"], error.get("field")) == ("invalid_request", "as_of"), error
