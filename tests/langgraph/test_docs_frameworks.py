"""The two runnable blocks of docs/frameworks.md run as printed and print what their comments say."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (REPO_ROOT / "docs" / "frameworks.md").read_text(), re.DOTALL)


@pytest.mark.parametrize("index", [0, 1])
def test_frameworks_page_examples_run(index: int) -> None:
    env = {**os.environ, "OPENAI_AGENTS_DISABLE_TRACING": "1"}
    env.pop("ZAXY_BACKEND", None)
    result = subprocess.run(
        [sys.executable, "-c", _blocks()[index]], capture_output=True, text=True, timeout=300, env=env
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    if index == 0:
        assert lines == [
            "I have heard 2 messages",
            "{'content': 'Our staging database is db-staging-2.', 'role': 'user'}",
            "True True",
        ]
    else:
        assert lines[0].startswith("- [current, transcript.turn] Our staging database is db-staging-2. (eventloom://")
        assert "pydantic-ai.monday/" in lines[0] and lines[1] == "2"
