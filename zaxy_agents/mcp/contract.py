"""The MCP tool contract: names, profiles, descriptions and input schemas, as clients see them.

``docs/examples/mcp-tool-contract.json`` is this module's output, and a test compares it with the live registry,
so a change to any tool's name, description or schema is a deliberate, reviewed change. Regenerate with::

    python -m zaxy_agents.mcp.contract --write
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from . import registry

CONTRACT_PATH = Path("docs/examples/mcp-tool-contract.json")
REGENERATE = "python -m zaxy_agents.mcp.contract --write"


def build_contract() -> dict[str, Any]:
    tools = registry.all_tools()
    return {
        "server": "zaxy",
        "regenerate": REGENERATE,
        "profiles": {profile: [spec.name for spec in registry.listed(profile)] for profile in registry.PROFILES},
        "tools": [spec.contract() for spec in tools],
    }


def render(contract: dict[str, Any]) -> str:
    return json.dumps(contract, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print or write the MCP tool contract snapshot.")
    parser.add_argument("--write", action="store_true", help=f"write {CONTRACT_PATH} (run from the repository root)")
    args = parser.parse_args(argv)
    text = render(build_contract())
    if args.write:
        CONTRACT_PATH.parent.mkdir(parents=True, exist_ok=True)
        CONTRACT_PATH.write_text(text)
        sys.stderr.write(f"wrote {CONTRACT_PATH}\n")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
