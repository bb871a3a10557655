"""Server start-up stays light: building the MCP server and its tool list loads no graph, numpy or tokenizer."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from zaxy_agents.mcp import registry
from zaxy_agents.mcp.config import ServerConfig
from zaxy_agents.mcp.server import ZaxyMcpServer
registry.all_tools()
ZaxyMcpServer(ServerConfig.resolve(sys.argv[1]))
heavy = ["kuzu", "numpy", "pyarrow", "tiktoken", "zaxy_agents.fabric.core", "zaxy_agents.projection.projector"]
print(",".join(name for name in heavy if name in sys.modules))
"""


def test_building_the_server_imports_nothing_heavy(tmp_path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "eventloom")], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
