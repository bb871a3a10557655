"""docs/add-a-backend.md: its example (a third-party backend registered at run time, proven with the conformance
kit, then used by MemoryFabric) runs, and the file list it gives is the in-memory backend's."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

PAGE = (REPO_ROOT / "docs" / "add-a-backend.md").read_text()


def test_the_example_proves_and_uses_a_backend(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(re.findall(r"```python\n(.*?)```", PAGE, re.DOTALL)[0])
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "scratch: 16 passed, 0 failed, 6 skipped" in result.stdout
    assert "sky is blue" in result.stdout and "eventloom://demo/events/1#" in result.stdout


def test_the_in_memory_backend_is_the_files_the_guide_lists() -> None:
    package = REPO_ROOT / "zaxy_agents" / "storage" / "memory"
    listed = set(re.findall(r"`storage/<name>/(\w+\.py)`", PAGE))
    assert listed == {path.name for path in package.glob("*.py")} == {"__init__.py", "log.py", "graph.py", "backend.py"}
    registry = (REPO_ROOT / "zaxy_agents" / "storage" / "registry.py").read_text()
    assert '"zaxy_agents.storage.memory.backend:MemoryBackend"' in registry
    from zaxy_agents.storage.conformance.pytest_plugin import BUILTIN

    assert "memory" in BUILTIN
