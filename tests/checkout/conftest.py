from __future__ import annotations

from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.storage.conformance.harness import postgres_schema


@pytest.fixture(params=["jsonl", "postgresql"])
def memory(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A fabric on each backend: embedded, and PostgreSQL (log, shared graph and vectors on the server)."""
    if request.param == "jsonl":
        with MemoryFabric.from_path(tmp_path / "loom") as fabric:
            yield fabric
        return
    with postgres_schema(monkeypatch) as dsn, MemoryFabric.from_path(tmp_path / "loom", backend=dsn) as fabric:
        yield fabric


@pytest.fixture
def project(memory: MemoryFabric) -> MemoryFabric:
    """A small but realistic coding session."""
    memory.append("proj", "session.started", {"goal": "move billing to Postgres"})
    memory.append("proj", "task.created", {"task_id": "T-7", "title": "Migrate billing to Postgres"})
    memory.append("proj", "task.created", {"task_id": "T-8", "title": "Write rollback runbook"})
    memory.append(
        "proj",
        "decision.recorded",
        {"decision": "Use pgbouncer for connection pooling", "topic": "pooling", "task_id": "T-7"},
    )
    memory.append("proj", "fact.asserted", {"subject": "billing db", "predicate": "host", "object": "db-old.internal"})
    memory.append(
        "proj",
        "command.completed",
        {"command": "alembic upgrade head", "exit_code": 1, "task_id": "T-7", "output": "connection refused"},
    )
    memory.append("proj", "fact.asserted", {"subject": "billing db", "predicate": "host", "object": "db-new.internal"})
    memory.append("proj", "file.edit.applied", {"path": "billing/db.py", "operation": "edit", "task_id": "T-7"})
    memory.append("proj", "task.completed", {"task_id": "T-8"})
    memory.append("proj", "transcript.turn", {"role": "user", "text": "billing runs nightly at 2am"})
    return memory
