"""The before/after migration blocks in docs/langgraph.md run as printed, and both halves hold the same state."""

from __future__ import annotations

import asyncio
import re
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
from langgraph.graph import END, START, MessagesState, StateGraph

from tests.conftest import REPO_ROOT
from zaxy_agents.storage.conformance.harness import postgres_schema

RUN = "result = graph.invoke({'messages': [('user', 'hi')]}, {'configurable': {'thread_id': 't'}})"
ARUN = "result = await graph.ainvoke({'messages': [('user', 'hi')]}, {'configurable': {'thread_id': 't'}})"


def _halves(marker: str) -> tuple[str, str]:
    text = (REPO_ROOT / "docs" / "langgraph.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if f"# before: {marker}" in b)
    before, after = block.split(f"# after: {marker}\n")
    return before, after


def _builder() -> StateGraph:
    builder = StateGraph(MessagesState)
    builder.add_node("reply", lambda state: {"messages": [("ai", "hello")]})
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder


def _run(code: str, namespace: dict[str, Any]) -> list[str]:
    exec(code, namespace)
    return [m.content for m in namespace["result"]["messages"]]


def test_sqlite_migration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    before, after = _halves("SQLite")
    assert _run(f"{before}    {RUN}\n", {"builder": _builder()}) == ["hi", "hello"]
    assert _run(f"{after}    {RUN}\n", {"builder": _builder()}) == ["hi", "hello"]
    assert (tmp_path / "checkpoints.db").exists() and (tmp_path / ".eventloom" / "langgraph.t.jsonl").exists()


def test_postgres_migration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with postgres_schema(monkeypatch) as dsn:
        before, after = _halves("PostgreSQL")
        theirs = f"zaxy_test_lg_{uuid.uuid4().hex[:10]}"  # LangGraph's tables go to a schema of their own
        import psycopg

        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{theirs}"')
        try:
            separator = "&" if "?" in dsn else "?"
            their_uri = f"{dsn}{separator}options=-csearch_path%3D{theirs}"

            def run(code: str, uri: str) -> list[str]:
                program = "async def main():\n" + textwrap.indent(f"{code}    {ARUN}\n    return result\n", "    ")
                namespace: dict[str, Any] = {"builder": _builder(), "DB_URI": uri}
                exec(program, namespace)
                return [m.content for m in asyncio.run(namespace["main"]())["messages"]]

            assert run(before, their_uri) == ["hi", "hello"]
            assert run(after, dsn) == ["hi", "hello"]
            assert run(after, dsn) == ["hi", "hello", "hi", "hello"]  # the thread lives on the server
        finally:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA "{theirs}" CASCADE')
