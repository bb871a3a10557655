"""How a server process reaches memory when another process owns the graph: proxy, take-over, fallback."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tests.mcp._client import StdioClient, serve_params
from zaxy_agents.config import ZaxySettings
from zaxy_agents.mcp import backend as backend_module
from zaxy_agents.mcp.backend import Backend
from zaxy_agents.mcp.caller import Caller
from zaxy_agents.sharing.election import try_claim

CALLER = Caller(session="proj")


def test_proxy_takes_over_when_the_owner_is_killed(tmp_path: Path) -> None:
    root = tmp_path / "eventloom"
    owner = StdioClient(serve_params(root, "--session-id", "proj"))
    backend = Backend(ZaxySettings.resolve(root))
    try:
        owner.ok("memory_append", {"type": "fact.asserted", "payload": {"key": "os", "fact": "we ship on Debian"}})
        owner_pid = owner.ok("memory_capabilities")["server"]["process"]["pid"]
        backend.start()
        assert backend.role == "proxy" and backend.describe()["owner_pid"] == owner_pid
        os.kill(owner_pid, signal.SIGKILL)  # a crash: no hand-over, stale socket and owner.json left behind
        packet = backend.execute("memory_checkout", {"query": "which os?"}, CALLER, read_only=True)
        assert [fact["summary"] for fact in packet["current_facts"]] == ["we ship on Debian"]
        assert backend.role == "owner" and backend.describe()["pid"] == os.getpid()
    finally:
        backend.close()
        owner.close()


def test_unreachable_owner_falls_back_to_a_reported_standalone_mode_then_recovers(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "eventloom"
    settings = ZaxySettings.resolve(root)
    squatter = try_claim(settings.derived_path)  # holds ownership but never serves
    assert squatter is not None
    monkeypatch.setattr(backend_module, "REELECT_INTERVAL_SECONDS", 0.0)
    backend = Backend(settings, grace=0.3)
    try:
        backend.start()
        assert backend.role == "standalone"
        assert "standalone" in backend.describe()["degraded"]
        appended = backend.execute(
            "memory_append", {"type": "note.recorded", "payload": {"text": "hello"}}, CALLER, read_only=False
        )
        assert appended["seq"] == 1
        squatter.release()
        backend.execute("memory_capabilities", {}, CALLER, read_only=True)  # the next call re-elects
        assert backend.role == "owner" and "degraded" not in backend.describe()
    finally:
        backend.close()
