"""The Python example of docs/deployment.md runs as written against a real PostgreSQL server."""

from __future__ import annotations

import re

from tests.conftest import REPO_ROOT
from zaxy_agents.storage.conformance.harness import PostgresHarness

DOC_DSN = "postgresql://zaxy:secret@db.internal:5432/zaxy"


def test_deployment_examples_run_on_postgres(postgres_backend: PostgresHarness, monkeypatch, tmp_path) -> None:
    text = (REPO_ROOT / "docs" / "deployment.md").read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if DOC_DSN in b]
    assert len(blocks) == 3  # the fabric, the shared graph's keyword search, LangGraph
    monkeypatch.setenv("ZAXY_POSTGRES_SCHEMA", postgres_backend.schema)
    monkeypatch.chdir(tmp_path)  # per-host state (.eventloom/.zaxy) lands here, not in the checkout
    for block in blocks:
        exec(block.replace(DOC_DSN, postgres_backend.dsn), {})
    with postgres_backend.open() as log:
        assert [e.type for e in log.replay("team-42")] == ["task.created", "fact.asserted"]
        assert [e.type for e in log.replay("langgraph-store")] == ["store.item.put"]
