"""HTTP hardening (issue 25, item 8 and the HTTP part of item 9), through a real `zaxy serve --transport http`.

* Failed logins are throttled per (address, token fingerprint): on localhost every client shares one address,
  so a client repeating a wrong token must never lock out the others.
* ``--insecure-local`` works without a session header, so the real MCP Inspector CLI connects over HTTP.
* ``memory_capabilities`` over HTTP reveals no filesystem path (the owner socket lives in the workspace).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.mcp._http_serve import http_serve

TOKEN = "valid-token-0123456789abcdef"
INSPECTOR = os.environ.get("ZAXY_MCP_INSPECTOR") or shutil.which("mcp-inspector")
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
ACCEPT = "application/json, text/event-stream"


def _post(base: str, token: str | None, session: str | None = "alice") -> httpx.Response:
    headers = {"accept": ACCEPT}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    if session is not None:
        headers["x-zaxy-session-id"] = session
    return httpx.post(f"{base}/mcp", json=LIST, headers=headers, timeout=30)


def _until_throttled(base: str, token: str | None, attempts: int = 20) -> list[httpx.Response]:
    """Repeat a failing login until it gets 429. A fresh (address, token) bucket lets 5 through, then one attempt
    refills every 2 s: however slow the machine, a burst reaches 429 (the time it takes never decides the test)."""
    responses = []
    for _ in range(attempts):
        responses.append(_post(base, token))
        if responses[-1].status_code == 429:
            break
    return responses


def test_failed_logins_never_throttle_a_valid_token(tmp_path: Path) -> None:
    with http_serve(tmp_path / "eventloom", env={"ZAXY_AUTH_TOKEN": TOKEN}) as base:
        for token in ("wrong-token-aaaaaaaaaaaaaaaa", None):  # a wrong token, then none: each is cut off
            codes = [response.status_code for response in _until_throttled(base, token)]
            assert codes[:5] == [401] * 5 and codes[-1] == 429 and set(codes[:-1]) == {401}, codes
        assert _post(base, "another-wrong-token-bbbbbbbb").status_code == 401  # a new fingerprint is judged alone
        for _ in range(5):  # same address, valid token: never 429 because of the others' failures
            response = _post(base, TOKEN)
            assert response.status_code == 200, response.text
        throttled = _until_throttled(base, "wrong-token-aaaaaaaaaaaaaaaa")[-1]  # the wrong token is still held back
        assert throttled.status_code == 429, throttled.text
        assert throttled.json()["error"]["code"] == "rate_limited" and int(throttled.headers["retry-after"]) > 0


def test_capabilities_over_http_reveal_no_path(tmp_path: Path) -> None:
    eventloom = tmp_path / "workspace" / ".eventloom"
    eventloom.parent.mkdir()

    async def capabilities(base: str) -> tuple[dict, str]:
        headers = {"Authorization": f"Bearer {TOKEN}", "x-zaxy-session-id": "alice"}
        async with (
            httpx.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(f"{base}/mcp", http_client=http) as (read, write, _),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            result = await client.call_tool("memory_capabilities", {})
            return result.structuredContent, result.content[0].text

    with http_serve(eventloom, env={"ZAXY_AUTH_TOKEN": TOKEN}) as base:
        structured, text = asyncio.run(capabilities(base))
    assert structured["server"]["process"]["role"] == "owner"  # the role that used to carry the socket path
    dumped = json.dumps(structured) + text
    for leak in (str(tmp_path), "owner.sock", str(Path.home()), "/tmp/"):
        assert leak not in dumped, leak
    assert "eventloom_path" not in structured and "socket" not in structured["server"]["process"]


@pytest.mark.skipif(
    INSPECTOR is None,
    reason="MCP Inspector CLI not installed: source /work/coord/env.sh or set "
    "ZAXY_MCP_INSPECTOR (npm install @modelcontextprotocol/inspector)",
)
def test_mcp_inspector_cli_connects_over_http_with_insecure_local(tmp_path: Path) -> None:
    """The Inspector CLI sends no session header (and has no option to): --insecure-local uses the default session."""
    eventloom = tmp_path / "eventloom"
    with http_serve(eventloom, "--insecure-local", "--session-id", "inspected") as base:

        def inspect(*method: str) -> dict:
            command = [INSPECTOR, "--cli", f"{base}/mcp", "--transport", "http", *method]
            result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
            assert result.returncode == 0, result.stdout + result.stderr
            return json.loads(result.stdout)

        listing = inspect("--method", "tools/list")
        assert listing["tools"][0]["name"] == "memory_checkout"
        called = inspect(
            "--method",
            "tools/call",
            "--tool-name",
            "memory_append",
            "--tool-arg",
            "type=fact.asserted",
            'payload={"fact": "inspected over http"}',
        )
        assert called["isError"] is False
        assert called["structuredContent"]["citation"].startswith("eventloom://inspected/events/")
        # a session header, when a client sends one, is still honoured (and validated)
        named = _post(base, None, session="bob")
        assert named.status_code == 200
        assert _post(base, None, session="../etc").status_code == 400
