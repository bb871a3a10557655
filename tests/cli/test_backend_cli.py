"""The real `zaxy` CLI on every backend: the log commands, `backend status|migrate`, `eventloom export|import`,
and clear errors (exit 4, no traceback, no password) when the server cannot be reached."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_zaxy, run_zaxy_json
from zaxy_agents.storage.conformance.harness import Harness, PostgresHarness


def test_log_commands_work_on_every_backend(backend: Harness) -> None:
    env = backend.env()
    with backend.open() as log:
        log.append("proj", "task.created", {"i": 0})
    for i in (1, 2):
        code, body = run_zaxy_json(
            "append", "-s", "proj", "-t", "task.created", "-a", "me", "-p", json.dumps({"i": i}), env=env
        )
        assert code == 0 and body["citation"].startswith(f"eventloom://proj/events/{i + 1}#")
    code, body = run_zaxy_json("replay", "-s", "proj", "--from-seq", "2", env=env)
    assert code == 0 and [e["seq"] for e in body["events"]] == [2, 3]
    code, body = run_zaxy_json("verify", "-s", "proj", env=env)
    assert code == 0 and body["ok"] and body["event_count"] == 3
    code, body = run_zaxy_json("sessions", env=env)
    assert code == 0 and [(s["session"], s["event_count"]) for s in body["sessions"]] == [("proj", 3)]
    code, body = run_zaxy_json("backend", "status", env=env)
    assert code == 0 and body["backend"] == backend.name and body["event_count"] == 3 and body["schema_ok"]


def test_backend_option_selects_postgres_and_migrate_is_idempotent(postgres_backend: PostgresHarness) -> None:
    schema_only = {"ZAXY_POSTGRES_SCHEMA": postgres_backend.schema}
    code, body = run_zaxy_json("backend", "status", "--backend", postgres_backend.dsn, env=schema_only)
    assert code == 0 and body["migrations"][0]["state"] == "pending" and "first use" in body["note"]
    assert {record["component"] for record in body["migrations"]} == {"eventloom", "projection"}
    assert set(body["features"]) == {"pg_trgm", "pgvector"}
    code, body = run_zaxy_json("backend", "migrate", "--backend", postgres_backend.dsn, env=schema_only)
    assert code == 0 and body["applied"] == [
        "0001_events_and_session_heads",
        "0001_graph_tables",
        "0002_seed_provenance_backbone",
    ]
    assert body["status"]["schema_ok"]
    code, body = run_zaxy_json("backend", "migrate", "--backend", postgres_backend.dsn, env=schema_only)
    assert code == 0 and body["applied"] == []
    human = run_zaxy("backend", "status", "--backend", postgres_backend.dsn, env=schema_only)
    assert human.returncode == 0 and "PostgreSQL" in human.stdout and "applied" in human.stdout
    assert postgres_backend.dsn not in human.stdout  # the password never shows


def test_unreachable_server_exits_4_without_traceback_or_password(tmp_path: Path) -> None:
    dsn = "postgresql://zaxy:s3cret-pw@127.0.0.1:1/zaxy"
    code, body = run_zaxy_json("sessions", "--backend", dsn)
    assert code == 4 and body["error"]["code"] == "unavailable" and body["error"]["field"] == "backend"
    human = run_zaxy("append", "-s", "p", "-t", "note.added", "-a", "me", env={"ZAXY_BACKEND": dsn})
    assert human.returncode == 4 and "Traceback" not in human.stderr and "s3cret-pw" not in human.stderr
    assert "fix:" in human.stderr
    code, body = run_zaxy_json("sessions", "--backend", "mysql://x")
    assert code == 2 and body["error"]["field"] == "backend"


def test_export_then_import_through_the_cli(backend: Harness, tmp_path: Path) -> None:
    env = backend.env()
    with backend.open() as log:
        for session in ("a", "b"):
            log.append(session, "fact.asserted", {"fact": "café"}, actor="me")
    out = tmp_path / "exported"
    code, body = run_zaxy_json("eventloom", "export", "--output-dir", str(out), env=env)
    assert code == 0 and sorted(r["session"] for r in body["exported"]) == ["a", "b"]
    assert b"".join(backend.stored_lines("a")) == (out / "a.jsonl").read_bytes()
    code, body = run_zaxy_json("verify", "-s", "a", "--backend", "jsonl", "--eventloom-path", str(out))
    assert code == 0 and body["ok"]
    code, body = run_zaxy_json("eventloom", "export", "-s", "a", "--output", str(out / "a.jsonl"), env=env)
    assert code == 1 and body["error"]["code"] == "conflict"

    target = tmp_path / "target"
    code, body = run_zaxy_json("eventloom", "import", str(out), "--backend", "jsonl", "--eventloom-path", str(target))
    assert code == 0 and [(r["session"], r["imported"]) for r in body["imported"]] == [("a", 1), ("b", 1)]
    assert (target / "b.jsonl").read_bytes() == (out / "b.jsonl").read_bytes()
    code, body = run_zaxy_json("eventloom", "import", str(out / "a.jsonl"), env=env)  # already there
    assert code == 0 and body["imported"][0]["skipped"] == 1
    human = run_zaxy("eventloom", "import", str(tmp_path / "nope.jsonl"), env=env)
    assert human.returncode == 3 and "Traceback" not in human.stderr
