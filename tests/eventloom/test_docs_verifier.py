"""The stand-alone verifier printed in docs/eventloom.md really verifies our logs (and rejects tampering)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog


def _doc_verifier():
    text = (REPO_ROOT / "docs" / "eventloom.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if "def verify(" in b)
    namespace: dict = {}
    exec(block, namespace)
    return namespace["verify"]


def test_documented_verifier_accepts_a_real_log(log_dir: Path) -> None:
    with JsonlEventLog(log_dir) as log:
        log.append("s", "fact.asserted", {"fact": "naïve café", "n": 1.25, "nested": {"b": [1, None]}})
        log.append("s", "note.added", {"password": "x", "text": "token sk-abcdefghijklmnopqrstuvwx"})
    _doc_verifier()(log_dir / "s.jsonl", "s")


def test_documented_verifier_rejects_tampering(log_dir: Path) -> None:
    with JsonlEventLog(log_dir) as log:
        log.append("s", "fact.asserted", {"fact": "a"})
    path = log_dir / "s.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"fact":"a"', b'"fact":"b"'))
    with pytest.raises(AssertionError):
        _doc_verifier()(path, "s")
