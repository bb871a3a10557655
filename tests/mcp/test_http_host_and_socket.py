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
ACCEPT = "application/json, text/event-stream"


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


def _post(base: str, session: str) -> httpx.Response:
    headers = {"authorization": f"Bearer {TOKEN}", "x-zaxy-session-id": session, "accept": ACCEPT}
    return httpx.post(f"{base}/mcp", json=LIST, headers=headers, timeout=30)


def _post_with(base: str, token: str) -> httpx.Response:
    headers = {"authorization": f"Bearer {token}", "x-zaxy-session-id": "carol", "accept": ACCEPT}
    return httpx.post(f"{base}/mcp", json=LIST, headers=headers, timeout=30)


def test_rate_limit_is_per_client_and_session_and_answers_429_with_retry_after(tmp_path: Path) -> None:
    """docs/mcp.md "Rate limits": `--rate-limit` requests per minute per (client address, session), bursts of a
    sixth, then `429` with `Retry-After`; "Security": tokens are never logged. At 12 a minute a burst is 2 and a
    token comes back every 5 s: a third call in a row is refused unless the machine took 5 s over two calls, so the
    test repeats until it is."""
    with http_serve(tmp_path / "eventloom", "--rate-limit", "12", env={"ZAXY_AUTH_TOKEN": TOKEN}) as base:
        codes = [_post(base, "alice").status_code for _ in range(2)]
        assert codes == [200, 200]  # the burst
        for _ in range(10):
            refused = _post(base, "alice")
            if refused.status_code == 429:
                break
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"]["code"] == "rate_limited" and 0 < int(refused.headers["retry-after"]) <= 5
        assert _post(base, "bob").status_code == 200  # another session from the same address has its own budget
        assert _post_with(base, "wrong-token-0123456789abcdef").status_code == 401
    (log,) = tmp_path.glob("http-*.log")  # the server's stdout and stderr
    assert TOKEN not in log.read_text() and "wrong-token-0123456789abcdef" not in log.read_text()  # never logged
