"""`zaxy serve` as a real subprocess driven by `mcp.client.stdio`: listing, calls, errors, several processes."""

from __future__ import annotations

import time
from pathlib import Path

from tests.mcp._client import StdioClient, serve_params
from zaxy_agents.sharing.election import pid_alive, read_owner


def test_stdio_server_lists_core_tools_appends_checks_out_and_errors(tmp_path: Path) -> None:
    root = tmp_path / "eventloom"
    with StdioClient(serve_params(root, "--session-id", "proj"), errlog=tmp_path / "serve.log") as client:
        names = [tool.name for tool in client.list_tools()]
        assert names[0] == "memory_checkout" and len(names) == 8
        appended = client.ok(
            "memory_append",
            {"type": "decision.recorded", "payload": {"decision": "deploy with blue-green", "topic": "deploys"}},
        )
        packet = client.ok("memory_checkout", {"query": "how do we deploy?"})
        assert appended["citation"] in [fact["citation"] for fact in packet["current_facts"]]
        assert appended["citation"].startswith("eventloom://proj/events/")
        bad = client.call("memory_checkout", {"query": 42})
        assert bad.isError and bad.structuredContent["error"]["code"] == "invalid_request"
        assert bad.structuredContent["error"]["field"] == "query"
        assert "Traceback" not in client.stderr()


def test_full_profile_over_stdio(tmp_path: Path) -> None:
    params = serve_params(tmp_path / "eventloom", "--profile", "full", "--session-id", "proj")
    with StdioClient(params) as client:
        names = [tool.name for tool in client.list_tools()]
        assert {"memory_bootstrap", "context_after_turn", "subagent_cleanup", "memory_skill"} <= set(names)
        assert client.ok("memory_capabilities")["server"]["profile"] == "full"


def test_two_servers_on_one_workspace_share_the_graph_owner_and_hand_over(tmp_path: Path) -> None:
    root = tmp_path / "eventloom"
    first = StdioClient(serve_params(root, "--session-id", "proj"), errlog=tmp_path / "first.log")
    second = None
    try:
        owner = first.ok("memory_capabilities")["server"]["process"]
        assert owner["role"] == "owner"
        first.ok("memory_append", {"type": "fact.asserted", "payload": {"key": "db", "fact": "the db is Postgres 16"}})

        second = StdioClient(serve_params(root, "--session-id", "proj"), errlog=tmp_path / "second.log")
        process = second.ok("memory_capabilities")["server"]["process"]
        assert process["role"] == "proxy" and process["owner_pid"] == owner["pid"]
        assert "proxy" in process["graph_access"]
        facts = second.ok("memory_checkout", {"query": "which db?"})["current_facts"]
        assert [fact["summary"] for fact in facts] == ["the db is Postgres 16"]
        cached = second.ok("memory_append", {"type": "fact.asserted", "payload": {"key": "cache", "fact": "Redis 7"}})
        if Path("/proc/self/maps").exists():  # Linux: checkouts never load the graph library (proxy or owner)
            assert not _loaded(process["pid"], "kuzu") and not _loaded(owner["pid"], "kuzu")
        summaries = [fact["summary"] for fact in first.ok("memory_checkout", {"query": "cache"})["current_facts"]]
        assert "Redis 7" in summaries

        first.close()  # the owner leaves: the next call from the proxy takes the graph over
        assert _gone(owner["pid"])
        packet = second.ok("memory_checkout", {"query": "cache"})
        assert cached["citation"] in [fact["citation"] for fact in packet["current_facts"]]
        took_over = second.ok("memory_capabilities")
        assert took_over["server"]["process"]["role"] == "owner" and took_over["degraded"] is None
        assert read_owner(root / ".zaxy")["pid"] == took_over["server"]["process"]["pid"]
        survivor = took_over["server"]["process"]["pid"]
    finally:
        first.close()
        if second is not None:
            second.close()
    assert _gone(survivor)
    assert read_owner(root / ".zaxy") is None and not (root / ".zaxy" / "owner.sock").exists()


def _loaded(pid: int, library: str) -> bool:
    """Whether a shared library is mapped into a process (Linux ``/proc/<pid>/maps``)."""
    return library in Path(f"/proc/{pid}/maps").read_text()


def _gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
