"""Optional: the MCP Inspector CLI lists and calls our tools (skips when the inspector is not installed).

Install it outside the repository, e.g. ``npm install --prefix /tmp/inspector @modelcontextprotocol/inspector``,
then put ``/tmp/inspector/node_modules/.bin`` on PATH or set ``ZAXY_MCP_INSPECTOR`` to the ``mcp-inspector`` path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

INSPECTOR = os.environ.get("ZAXY_MCP_INSPECTOR") or shutil.which("mcp-inspector")
pytestmark = pytest.mark.skipif(INSPECTOR is None, reason="MCP Inspector CLI not installed")


def _inspect(root: Path, *method: str) -> dict:
    command = [
        INSPECTOR,
        "--cli",
        sys.executable,
        "-m",
        "zaxy_agents.cli.entry",
        "serve",
        "--eventloom-path",
        str(root),
    ]
    result = subprocess.run([*command, *method], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_inspector_lists_and_calls_tools(tmp_path: Path) -> None:
    root = tmp_path / "eventloom"
    listing = _inspect(root, "--method", "tools/list")
    assert listing["tools"][0]["name"] == "memory_checkout"
    assert all(tool["inputSchema"]["additionalProperties"] is False for tool in listing["tools"])
    called = _inspect(
        root,
        "--method",
        "tools/call",
        "--tool-name",
        "memory_append",
        "--tool-arg",
        "type=fact.asserted",
        'payload={"fact": "inspected"}',
    )
    assert called["isError"] is False and called["structuredContent"]["citation"].startswith("eventloom://default/")
