"""LangGraph's Agent Server with Zaxy's checkpointer and store: the real ``langgraph dev`` (langgraph-cli[inmem]) on
127.0.0.1, driven by the real ``langgraph-sdk`` client, restarted, and read back through Memory Checkout.

The project is the ``langgraph-server`` template as ``zaxy init`` writes it, so the template, its langgraph.json
and the factories in ``zaxy_agents.langgraph.server`` are what runs.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from zaxy_agents.fabric import MemoryFabric

LANGGRAPH = Path(sys.executable).parent / "langgraph"
pytestmark = pytest.mark.skipif(
    not LANGGRAPH.exists(), reason="langgraph-cli[inmem] is not installed: pip install -e '.[dev]'"
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving(project: Path, log: Path) -> Iterator[str]:
    """``langgraph dev`` in ``project`` until the block ends (then SIGTERM, as Ctrl-C would stop it)."""
    port = _free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ZAXY_BACKEND", "ZAXY_POSTGRES"))}
    env.update(
        ZAXY_EVENTLOOM_PATH=str(project / ".eventloom"),
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGSMITH_TRACING="false",
        PYTHONUNBUFFERED="1",
    )
    command = [str(LANGGRAPH), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port)]
    with open(log, "ab") as output:
        process = subprocess.Popen(
            command, cwd=project, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, process, log)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    import httpx

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"langgraph dev exited ({process.returncode}):\n{log.read_text()[-4000:]}")
        try:
            if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"langgraph dev did not become ready:\n{log.read_text()[-4000:]}")


def _snapshot(client: Any, threads: list[str]) -> dict[str, Any]:
    """Everything the server holds for these threads and the store, in a comparable form."""
    found: dict[str, Any] = {}
    for thread_id in threads:
        state = client.threads.get_state(thread_id)
        history = client.threads.get_history(thread_id, limit=100)
        found[thread_id] = {
            "values": state["values"],
            "checkpoint": state["checkpoint"]["checkpoint_id"],
            "next": state["next"],
            "interrupts": [i["value"] for task in state["tasks"] for i in task.get("interrupts", [])],
            "history": [entry["checkpoint"]["checkpoint_id"] for entry in history],
        }
    memories = client.store.search_items(["memories", "ana"], limit=50)["items"]
    found["store"] = {
        "memories": sorted(item["value"]["content"] for item in memories),
        "oncall": client.store.get_item(["notes", "team"], "oncall")["value"],
    }
    return found


def test_agent_server_keeps_threads_checkpoints_and_store_across_a_restart(tmp_path: Path) -> None:
    from langgraph_sdk import get_sync_client

    project = tmp_path / "assistant"
    init = subprocess.run(
        [
            sys.executable,
            "-m",
            "zaxy_agents.cli.entry",
            "init",
            "--template",
            "langgraph-server",
            str(project),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert init.returncode == 0, init.stderr
    assert {"langgraph.json", "agent.py", "client.py", ".env"} <= set(json.loads(init.stdout)["files"])
    log = tmp_path / "server.log"
    config = {"configurable": {"user_id": "ana"}}
    oncall = {"who": "ana", "zone": "eu", "backup": "bo"}  # key order is part of the value

    with serving(project, log) as url:
        client = get_sync_client(url=url)
        first = client.threads.create(metadata={"user": "ana"})["thread_id"]
        second = client.threads.create(metadata={"user": "ana"})["thread_id"]

        def say(thread: str, text: str) -> dict[str, Any]:
            return client.runs.wait(thread, "assistant", input={"messages": [("user", text)]}, config=config)

        say(first, "Remember the billing service deploys on Tuesdays after the 10:00 standup")
        assert say(second, "When does billing deploy?")["messages"][-1]["content"] == (
            "From memory: the billing service deploys on Tuesdays after the 10:00 standup"
        )
        say(first, "Deploy the billing service")  # pauses at the interrupt
        client.store.put_item(["notes", "team"], "oncall", oncall)
        before = _snapshot(client, [first, second])
        assert before[first]["interrupts"] == [
            {"action": "Deploy the billing service", "question": "Approve this deploy? (yes/no)"}
        ]
        assert before[first]["next"] == ["assistant"] and len(before[first]["history"]) == 5

    with serving(project, log) as url:  # a new server process on the same Eventloom
        client = get_sync_client(url=url)
        listed = {thread["thread_id"] for thread in client.threads.search(limit=100)}
        assert {first, second} <= listed
        after = _snapshot(client, [first, second])
        assert after == before
        assert list(after["store"]["oncall"]) == list(oncall)
        resumed = client.runs.wait(first, "assistant", command={"resume": "yes"}, config=config)
        assert resumed["messages"][-1]["content"] == "Deployed the billing service."

    with MemoryFabric.from_path(project / ".eventloom") as memory:
        packet = memory.checkout("When does the billing service deploy?", scope=["langgraph.*", "langgraph-store"])
        cited = "\n".join(line for line in packet.prompt.splitlines() if "Tuesdays" in line)
        assert f"eventloom://langgraph.{first}/events/" in cited or "eventloom://langgraph-store/events/" in cited
        assert f"eventloom://langgraph.{first}/events/" in packet.prompt
        assert packet.quality.answerability != "ask_user"


def test_the_template_runs_offline_without_the_server(tmp_path: Path) -> None:
    from tests.conftest import REPO_ROOT

    env = {**os.environ, "ZAXY_EVENTLOOM_PATH": str(tmp_path / ".eventloom")}
    env.pop("ZAXY_BACKEND", None)
    result = subprocess.run(
        [sys.executable, "agent.py"],
        cwd=REPO_ROOT / "examples" / "langgraph-server",
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "From memory: I deploy on Tuesdays\n"
