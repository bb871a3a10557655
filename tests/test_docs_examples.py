"""The runnable Python examples on the core docs pages really run (in a scratch working directory)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

PAGES = [
    "eventloom.md",
    "graph-schema.md",
    "retrieval.md",
    "checkout.md",
    "derived-state.md",
    "coordinate.md",
    "cognitive.md",
    "../README.md",
]


def _first_example(page: str) -> str:
    text = (REPO_ROOT / "docs" / page).read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if "MemoryFabric" in b]
    assert blocks, f"{page} has no runnable MemoryFabric example"
    return blocks[0]


@pytest.mark.parametrize("page", PAGES)
def test_page_example_runs(page: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(_first_example(page))
    env = {**os.environ, "ZAXY_EVENTLOOM_PATH": str(tmp_path / ".eventloom")}
    result = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "eventloom://" in result.stdout or page == "graph-schema.md"


def test_readme_example_prints_what_its_comments_say(tmp_path: Path) -> None:
    """README.md's comments promise: the prompt cites event 2 (db-new), never the superseded db-old, and the
    verdict is answer_from_memory."""
    script = tmp_path / "example.py"
    script.write_text(_first_example("../README.md"))
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "eventloom://proj/events/2#" in result.stdout and "db-new" in result.stdout
    assert "db-old" not in result.stdout and "eventloom://proj/events/1#" not in result.stdout
    assert result.stdout.splitlines()[-1] == "answer_from_memory"


def _run_block(page: str, marker: str, tmp_path: Path) -> list[str]:
    """Run the one ``python`` block of ``page`` that contains ``marker``; its stdout lines."""
    tmp_path.mkdir()
    text = (REPO_ROOT / "docs" / page).read_text()
    [block] = [b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if marker in b]
    env = {**os.environ, "ZAXY_EVENTLOOM_PATH": str(tmp_path / ".eventloom")}
    result = subprocess.run(
        [sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_retrieval_examples_print_what_their_comments_say(tmp_path: Path) -> None:
    """docs/retrieval.md: the first example's three comments, the relative-date example (found by the verbatim
    lane's date_match component alone: no word is shared) and the WordLlama re-rank example (each hit carries its
    cosine rank as ``vector``); the other examples of the page are run by tests/retrieval."""
    first = _run_block("retrieval.md", '"billing db host"', tmp_path / "first")
    assert "db-new current eventloom://proj/events/2#" in first[0] and "db-old" not in first[0]
    assert "'verbatim'" in first[1] and first[2] == "1"
    dated = _run_block("retrieval.md", "What did we decide yesterday?", tmp_path / "dated")
    assert dated[0].startswith("Billing moves to Postgres 16. ")
    assert "'lane_scores': {'verbatim'" in dated[0] and "'verbatim_components': {'date_match'" in dated[0]
    reranked = _run_block("retrieval.md", 'embedder="wordllama"', tmp_path / "reranked")
    assert len(reranked) == 2 and all("'vector': " in line for line in reranked)


def test_coordinate_example_prints_what_its_comments_say(tmp_path: Path) -> None:
    """docs/coordinate.md: a worker's finding is 'pending non_authoritative'; the next shift's checkout shows
    'promoted state and the handoff only' (not the rejected claim); the handoff's trace verifies, step by step."""
    lines = _run_block("coordinate.md", 'c.start("Checkout 500s"', tmp_path / "mission")
    assert lines[0] == "pending non_authoritative"
    prompt = "\n".join(lines[1:-1])
    assert "DB pool exhausted" in prompt and "Raise the pool to 50" in prompt and "DNS flaps" not in prompt
    assert lines[-1] == "True ['reported', 'evidence', 'reviewed', 'promoted', 'handed_off']"
