"""README.md holds exactly two set-up commands, and CI runs the test one verbatim."""

from __future__ import annotations

import re

from tests.conftest import REPO_ROOT


def _bash_blocks() -> list[str]:
    text = (REPO_ROOT / "README.md").read_text()
    section = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.DOTALL)]


def test_readme_has_exactly_two_setup_commands() -> None:
    blocks = _bash_blocks()
    assert len(blocks) == 2
    assert all(block.startswith("python3 -m venv .venv") and "\n" not in block for block in blocks)
    assert "pytest" in blocks[1]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (REPO_ROOT / ".ci" / "run").read_text().splitlines()
    assert _bash_blocks()[1] in ci
