"""Fixtures for MCP tests: an in-process server driven by the real MCP client over memory streams."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from zaxy_agents.mcp.config import ServerConfig
from zaxy_agents.mcp.server import ZaxyMcpServer


def make_app(eventloom: Path, **overrides: Any) -> ZaxyMcpServer:
    config = ServerConfig.resolve(eventloom, session_id=overrides.pop("session_id", "s1"), **overrides)
    app = ZaxyMcpServer(config)
    app.start()
    return app


@asynccontextmanager
async def connected(app: ZaxyMcpServer) -> AsyncIterator[Any]:
    async with create_connected_server_and_client_session(app.server) as client:
        yield client


@pytest.fixture
def app(tmp_path: Path):
    server = make_app(tmp_path / "eventloom", profile="core")
    yield server
    server.close()


async def ok(client: Any, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    result = await client.call_tool(name, arguments or {})
    assert not result.isError, result.structuredContent
    return result.structuredContent


async def error(client: Any, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    result = await client.call_tool(name, arguments or {})
    assert result.isError, result.structuredContent
    body = result.structuredContent["error"]
    assert set(body) >= {"code", "message", "remediation"}
    assert "Traceback" not in result.content[0].text
    return body
