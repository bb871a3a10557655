"""The stdlib-only append path writes the same chain as the full log and imports no pydantic."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from zaxy_agents.fabric.light import light_append, light_tail, light_working_set
from zaxy_agents.storage.conformance.harness import PostgresHarness
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog


def test_light_append_chains_with_the_full_log(tmp_path: Path) -> None:
    with JsonlEventLog(tmp_path) as log:
        first = log.append("s", "note.added", {"n": 1})
    stored = light_append(
        "s", "hook.user_prompt_submitted", {"prompt": "hi", "token": "abc123def"}, eventloom_path=tmp_path
    )
    assert stored["seq"] == 2 and stored["prev_hash"] == first.hash
    assert stored["payload"]["token"] == "[REDACTED]"
    assert stored["citation"] == f"eventloom://s/events/2#{stored['hash'][:12]}"
    with JsonlEventLog(tmp_path) as log:
        assert log.verify("s").ok


def test_light_path_does_not_import_heavy_modules() -> None:
    code = (
        "import sys; from zaxy_agents.fabric.light import light_append; "
        "heavy = [m for m in ('pydantic', 'numpy', 'kuzu', 'typer', 'rich') if m in sys.modules]; print(heavy)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_light_append_honours_the_postgres_backend(
    postgres_backend: PostgresHarness, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name, value in postgres_backend.env().items():
        monkeypatch.setenv(name, value)
    with postgres_backend.open() as log:
        first = log.append("s", "note.added", {"n": 1})
    stored = light_append(
        "s", "hook.user_prompt_submitted", {"prompt": "hi", "token": "abc123def"}, eventloom_path=tmp_path
    )
    assert stored["seq"] == 2 and stored["prev_hash"] == first.hash and stored["payload"]["token"] == "[REDACTED]"
    assert not list(tmp_path.iterdir())  # nothing went to the embedded folder
    with postgres_backend.open() as log:
        assert log.verify("s").ok and log.get("s", 2).citation == stored["citation"]
    assert [e["seq"] for e in light_tail("s", 5)] == [1, 2] and light_tail("missing", 5) == []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with postgres_backend.open() as log:
        log.append("s", "task.created", {"task_id": "T-1", "title": "served from the server"})
    working = light_working_set("s")
    assert working.head_seq == 3 and working.open_tasks[0].text == "[open] served from the server (T-1)"
    assert not (tmp_path / ".eventloom").exists()  # the standing-state cache never lands in the working folder
    assert list((tmp_path / "cache" / "zaxy").glob("postgres-*/.zaxy/workingset/s.json"))
