"""The Python example of docs/deployment.md runs as written against a real PostgreSQL server."""

from __future__ import annotations

import re

from tests.backends import PostgresHarness
from tests.conftest import REPO_ROOT

DOC_DSN = "postgresql://zaxy:secret@db.internal:5432/zaxy"


def test_deployment_example_runs_on_postgres(postgres_backend: PostgresHarness, monkeypatch) -> None:
    text = (REPO_ROOT / "docs" / "deployment.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if "MemoryFabric" in b)
    assert DOC_DSN in block
    monkeypatch.setenv("ZAXY_POSTGRES_SCHEMA", postgres_backend.schema)
    exec(block.replace(DOC_DSN, postgres_backend.dsn), {})
    with postgres_backend.open() as log:
        assert [e.type for e in log.replay("team-42")] == ["task.created"]
