"""docs/mcp.md, through a real `zaxy serve --transport http`: on a loopback address DNS-rebinding protection
accepts only the Host headers 127.0.0.1, localhost and [::1] (with the server's port), and the owner's unix
socket is mode 0600."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.mcp._http_serve import http_serve

TOKEN = "valid-token-0123456789abcdef"
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def _status(base: str, host: str) -> int:
    headers = {
        "host": host,
        "authorization": f"Bearer {TOKEN}",
        "x-zaxy-session-id": "alice",
        "accept": "application/json, text/event-stream",
    }
    return httpx.post(f"{base}/mcp", json=LIST, headers=headers, timeout=30).status_code


def test_loopback_server_accepts_only_loopback_host_headers_and_keeps_its_socket_private(tmp_path: Path) -> None:
    eventloom = tmp_path / "eventloom"
    with http_serve(eventloom, env={"ZAXY_AUTH_TOKEN": TOKEN}) as base:
        port = base.rsplit(":", 1)[1]
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
            assert _status(base, host) == 200, host
        for host in ("evil.example", f"evil.example:{port}", f"attacker.localhost.example:{port}", "localhost"):
            assert _status(base, host) == 421, host  # "Invalid Host header", before authentication or tools
        owner = json.loads((eventloom / ".zaxy" / "owner.json").read_text())
        assert Path(owner["socket"]).stat().st_mode & 0o777 == 0o600
