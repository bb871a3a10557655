"""JSONL-only behaviour: the file bytes themselves and group commit (the contract suite covers the rest)."""

from __future__ import annotations

import json
from pathlib import Path

from zaxy_agents.storage.files.jsonl_log import JsonlEventLog


def test_file_is_canonical_jsonl(log: JsonlEventLog, log_dir: Path) -> None:
    log.append("s", "note.added", {"b": 1, "a": "é"})
    line = (log_dir / "s.jsonl").read_bytes()
    assert line.endswith(b"\n")
    assert line.startswith(b'{"actor":"agent","hash":"')
    assert "é".encode() in line
    assert json.loads(line)["payload"] == {"a": "é", "b": 1}


def test_group_commit_writes_immediately_and_syncs(log_dir: Path) -> None:
    with JsonlEventLog(log_dir, durability="batch", group_commit_seconds=0.01) as batch_log:
        batch_log.append("s", "note.added", {"n": 1})
        assert (log_dir / "s.jsonl").read_bytes().count(b"\n") == 1
        batch_log.sync()
