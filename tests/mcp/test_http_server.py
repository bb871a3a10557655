"""`zaxy serve --transport http`: the streamable HTTP client, bearer tokens, session isolation, refusals."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import run_zaxy
from tests.mcp._http_serve import http_serve
from zaxy_agents.mcp.http import RateLimiter

USER_TOKEN = "user-token-0123456789abcdef"
ADMIN_TOKEN = "admin-token-0123456789abcdef"
CAROL_TOKEN = "carol-only-token-0123456789"


@pytest.fixture
def http_server(tmp_path: Path):
    tokens = tmp_path / "session-tokens"
    tokens.write_text(f"# session  token\ncarol {CAROL_TOKEN}\n")
    env = {"ZAXY_AUTH_TOKEN": USER_TOKEN, "ZAXY_ADMIN_TOKEN": ADMIN_TOKEN, "ZAXY_SESSION_TOKENS_FILE": str(tokens)}
    with http_serve(tmp_path / "eventloom", env=env) as base:
        yield base


async def _session_calls(base: str, session: str, token: str, calls: list[tuple[str, dict]]) -> list:
    headers = {"Authorization": f"Bearer {token}", "x-zaxy-session-id": session}
    async with (
        httpx.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(f"{base}/mcp", http_client=http) as (read, write, _),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        results = [await client.list_tools()]
        for name, arguments in calls:
            results.append(await client.call_tool(name, arguments))
        return results


def test_http_client_appends_checks_out_and_is_scoped_to_its_session(http_server: str) -> None:
    fact = {"type": "fact.asserted", "payload": {"key": "launch", "fact": "launch window is Tuesday"}}
    listing, appended, packet = asyncio.run(
        _session_calls(
            http_server, "alice", USER_TOKEN, [("memory_append", fact), ("memory_checkout", {"query": "launch"})]
        )
    )
    assert listing.tools[0].name == "memory_checkout"
    citation = appended.structuredContent["citation"]
    assert citation.startswith("eventloom://alice/events/")
    assert citation in [f["citation"] for f in packet.structuredContent["current_facts"]]

    _, peek, scoped, write, replay, own = asyncio.run(
        _session_calls(
            http_server,
            "bob",
            USER_TOKEN,
            [
                ("memory_checkout", {"query": "launch", "session_id": "alice"}),
                ("memory_query", {"query": "launch", "scope": ["alice"]}),
                ("memory_append", {**fact, "session_id": "alice"}),
                ("memory_replay", {}),
                ("memory_checkout", {"query": "launch window"}),
            ],
        )
    )
    for denied in (peek, scoped, write, replay):
        assert denied.isError and denied.structuredContent["error"]["code"] == "unauthorized"
    assert not own.isError and "Tuesday" not in own.content[0].text

    _, admin_replay = asyncio.run(_session_calls(http_server, "alice", ADMIN_TOKEN, [("memory_replay", {})]))
    assert admin_replay.structuredContent["events"][0]["citation"] == citation


def test_http_refuses_bad_tokens_and_missing_sessions(http_server: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream", "x-zaxy-session-id": "alice"}
    missing = httpx.post(f"{http_server}/mcp", json=body, headers=headers)
    wrong = httpx.post(f"{http_server}/mcp", json=body, headers={**headers, "authorization": "Bearer nope"})
    assert missing.status_code == wrong.status_code == 401
    assert wrong.json()["error"]["code"] == "unauthorized" and "remediation" in wrong.json()["error"]
    no_session = httpx.post(
        f"{http_server}/mcp", json=body, headers={"authorization": f"Bearer {USER_TOKEN}", "accept": headers["accept"]}
    )
    assert no_session.status_code == 400 and no_session.json()["error"]["code"] == "invalid_request"
    carol = {**headers, "authorization": f"Bearer {CAROL_TOKEN}"}
    assert httpx.post(f"{http_server}/mcp", json=body, headers={**carol, "x-zaxy-session-id": "carol"}).is_success
    other = httpx.post(f"{http_server}/mcp", json=body, headers=carol)  # a session-bound token naming alice
    assert other.status_code == 401 and "bound" in other.json()["error"]["message"]
    assert httpx.get(f"{http_server}/healthz").json() == {"ok": True, "server": "zaxy"}


def test_http_start_up_refusals(tmp_path: Path) -> None:
    env = {"ZAXY_AUTH_TOKEN": "", "ZAXY_AUTH_TOKEN_FILE": "", "ZAXY_ADMIN_TOKEN": "", "ZAXY_ADMIN_TOKEN_FILE": ""}
    root = str(tmp_path / "eventloom")
    no_token = run_zaxy("serve", "--transport", "http", "--eventloom-path", root, env=env)
    assert no_token.returncode == 2 and "bearer token" in no_token.stderr
    exposed = run_zaxy(
        "serve", "--transport", "http", "--host", "0.0.0.0", "--insecure-local", "--eventloom-path", root
    )
    assert exposed.returncode == 2 and "loopback" in exposed.stderr
    short = run_zaxy("serve", "--transport", "http", "--eventloom-path", root, env={**env, "ZAXY_AUTH_TOKEN": "abc"})
    assert short.returncode == 2 and "shorter" in short.stderr


def test_rate_limiter_refills_over_time() -> None:
    now = [0.0]
    limiter = RateLimiter(60, clock=lambda: now[0])  # 1 per second, bursts of 10
    assert all(limiter.allow("k")[0] for _ in range(10))
    allowed, wait = limiter.allow("k")
    assert not allowed and 0 < wait <= 1.0
    assert limiter.allow("other")[0]
    now[0] += 1.0
    assert limiter.allow("k")[0] and not limiter.allow("k")[0]
