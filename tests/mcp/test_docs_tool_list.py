"""docs/mcp.md's tool tables name every registered tool (the Coordinate row as `_suffix` names), and every tool
that needs the admin token over HTTP says so in its row."""

from __future__ import annotations

import re

from tests.conftest import REPO_ROOT
from zaxy_agents.mcp import registry

TEXT = (REPO_ROOT / "docs" / "mcp.md").read_text()
ROWS = [line for line in TEXT.split("## Tools", 1)[1].split("\n## ", 1)[0].splitlines() if line.startswith("| `")]


def _names(row: str) -> set[str]:
    cell = row.split(" | ", 1)[0]
    names = set(re.findall(r"`(\w+)", cell))
    return names | {"coordination" + name for name in names if name.startswith("_")}


def test_every_tool_has_a_row_and_admin_tools_say_so() -> None:
    tools = registry.all_tools()
    documented = {name: row for row in ROWS for name in _names(row)}
    missing = sorted(spec.name for spec in tools if spec.name not in documented)
    assert not missing, f"docs/mcp.md does not list: {missing}"
    unmarked = sorted(spec.name for spec in tools if spec.admin and "admin" not in documented[spec.name])
    assert not unmarked, f"docs/mcp.md does not say these need the admin token over HTTP: {unmarked}"
