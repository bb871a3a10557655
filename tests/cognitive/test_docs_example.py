"""The runnable examples of docs/cognitive.md run as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT


def test_cognitive_doc_example_runs(tmp_path: Path) -> None:
    text = (REPO_ROOT / "docs" / "cognitive.md").read_text()
    example = re.findall(r"```python\n(.*?)```", text, re.DOTALL)[0]
    result = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "[procedure, accepted, non-authoritative] Rotate the CI token, then redeploy" in result.stdout


def test_metacognition_doc_example_runs(tmp_path: Path) -> None:
    text = (REPO_ROOT / "docs" / "cognitive.md").read_text()
    section = text.split("## Metacognition", 1)[1]
    example = re.findall(r"```python\n(.*?)```", section, re.DOTALL)[0]
    result = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0.3"


def test_belief_update_doc_example_runs(tmp_path: Path) -> None:
    text = (REPO_ROOT / "docs" / "cognitive.md").read_text()
    section = text.split("## Belief-update proposals", 1)[1]
    example = re.findall(r"```python\n(.*?)```", section, re.DOTALL)[0]
    result = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"


def test_synthesis_doc_example_runs(tmp_path: Path) -> None:
    text = (REPO_ROOT / "docs" / "cognitive.md").read_text()
    section = text.split("## Synthesis artifacts", 1)[1]
    example = re.findall(r"```python\n(.*?)```", section, re.DOTALL)[0]
    result = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "sum $750" and lines[1].startswith("eventloom://trip/events/4#")
    assert lines[1].endswith("memory.synthesis.used")
