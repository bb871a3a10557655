"""The runnable examples of docs/cognitive.md run as written (the first Python block of each section)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT


def run_example(section: str | None, tmp_path: Path) -> str:
    """Run the first ``python`` block after the heading ``section`` (``None``: of the page); return its stdout."""
    text = (REPO_ROOT / "docs" / "cognitive.md").read_text()
    if section is not None:
        text = text.split(section, 1)[1]
    example = re.findall(r"```python\n(.*?)```", text, re.DOTALL)[0]
    result = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_cognitive_doc_example_runs(tmp_path: Path) -> None:
    out = run_example(None, tmp_path)
    assert "[procedure, accepted, non-authoritative] Rotate the CI token, then redeploy" in out


def test_metacognition_doc_example_runs(tmp_path: Path) -> None:
    assert run_example("## Metacognition", tmp_path) == "0.3"


def test_belief_update_doc_example_runs(tmp_path: Path) -> None:
    assert run_example("## Belief-update proposals", tmp_path) == "1"


def test_synthesis_doc_example_runs(tmp_path: Path) -> None:
    lines = run_example("## Synthesis artifacts", tmp_path).splitlines()
    assert lines[0] == "sum $750" and lines[1].startswith("eventloom://trip/events/4#")
    assert lines[1].endswith("memory.synthesis.used")


def test_skills_doc_example_runs(tmp_path: Path) -> None:
    assert run_example("## Skills in checkout", tmp_path).splitlines() == [
        "Cut a release: tag, build, publish",
        "release",
    ]
