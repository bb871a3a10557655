"""The runnable example in docs/langgraph.md runs as printed and does what it says."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import REPO_ROOT


def test_documented_agent_example_runs() -> None:
    text = (REPO_ROOT / "docs" / "langgraph.md").read_text()
    example = next(b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if "create_agent(" in b)
    result = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "my favourite colour is teal"
    assert re.fullmatch(r"eventloom://langgraph-store/events/1#[0-9a-f]{12}", lines[1])
    assert lines[2:] == [
        "user favourite colour?",
        "assistant ",
        "tool " + lines[4].removeprefix("tool "),
        "assistant my favourite colour is teal",
    ]
    assert "my favourite colour is teal" in lines[4]


def test_drop_in_snippet_compiles_a_graph(tmp_path) -> None:
    text = (REPO_ROOT / "docs" / "langgraph.md").read_text()
    after = text.split("# after\n", 1)[1].split("```", 1)[0]
    from langgraph.graph import END, START, MessagesState, StateGraph

    builder = StateGraph(MessagesState)
    builder.add_node("noop", lambda state: {})
    builder.add_edge(START, "noop")
    builder.add_edge("noop", END)
    namespace = {"builder": builder}
    exec(after.replace('".eventloom"', repr(str(tmp_path))), namespace)
    graph = namespace["graph"]
    assert (
        graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "t"}})["messages"][0].content
        == "hi"
    )
    graph.checkpointer.close()
    graph.store.close()


def _block(marker: str) -> str:
    text = (REPO_ROOT / "docs" / "langgraph.md").read_text()
    return next(b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if marker in b)


def test_documented_middleware_example_runs() -> None:
    example = _block("ZaxyMemoryMiddleware(memory")
    result = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    answer, types = result.stdout.splitlines()
    assert re.fullmatch(
        r"- \[decision\] orders database: use Postgres 16 for the orders service "
        r"\(eventloom://langgraph\.monday/events/\d+#[0-9a-f]{12}\)",
        answer,
    )
    assert types == str(["decision.recorded", "memory.reinforced", "metacognition.checkout", "transcript.turn"])


def test_documented_nodes_example_compacts_and_keeps_the_open_task() -> None:
    example = _block("compaction_node(memory")
    result = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    title, task, status = result.stdout.splitlines()
    assert title == "# Zaxy memory: working state recovered after context compaction"
    assert re.fullmatch(
        r"- \[open\] Add retries to the HTTP client \(T-1\) \[eventloom://langgraph\.t1/events/1#[0-9a-f]{12}\]", task
    )
    answerability, count = status.split()
    assert answerability in ("answer_from_memory", "refresh_recommended") and int(count) < 12
