"""docs/architecture.md: the registry imports a backend's module only when a location names it — "the files
default never loads psycopg". Checked in a fresh interpreter that appends, checks out and runs the CLI path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
from zaxy_agents.fabric import MemoryFabric
with MemoryFabric.from_path(sys.argv[1]) as memory:
    memory.append("s", "fact.asserted", {"subject": "billing db", "predicate": "host", "object": "db-new"})
    assert memory.checkout("billing db host", session="s").current_facts
from zaxy_agents.cli.app import app  # the CLI's command table too
print(sorted(name for name in sys.modules if name.split(".")[0] in {"psycopg", "psycopg_pool"}
             or name.startswith("zaxy_agents.storage.postgres")))
"""


def test_the_files_backend_never_imports_psycopg(tmp_path: Path) -> None:
    env = {name: value for name, value in os.environ.items() if name != "ZAXY_BACKEND"}  # the default: files
    command = [sys.executable, "-c", SCRIPT, str(tmp_path / "loom")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
