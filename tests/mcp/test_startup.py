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


FOLLOW_PROBE = """
import sys
from zaxy_agents.config import ZaxySettings
from zaxy_agents.mcp.backend import FabricRunner
runner = FabricRunner(ZaxySettings.resolve(sys.argv[1]))
runner.warm()
first = runner.call(lambda fabric: fabric.projector.graph.writer.following)
# the follow was queued behind the first call: the second call runs after it
second = runner.call(lambda fabric: fabric.projector.graph.writer.following)
runner.close()
print(first, second)
"""


def test_the_first_tool_call_does_not_wait_for_the_graph(tmp_path) -> None:
    """A server that owns a memory with a graph follows that graph, but only after its first call (or once idle):
    opening Kuzu is not on the first checkout's path."""
    from zaxy_agents.fabric import MemoryFabric

    loom = tmp_path / "eventloom"
    with MemoryFabric.from_path(loom) as fabric:
        fabric.append("proj", "fact.asserted", {"subject": "api", "predicate": "port", "object": "8080"})
        fabric.project()
        fabric.projector.store  # noqa: B018 - materialises the graph of record
    assert (loom / ".zaxy" / "graph.kuzu").exists()
    result = subprocess.run(
        [sys.executable, "-c", FOLLOW_PROBE, str(loom)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True"]
