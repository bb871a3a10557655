"""#25.2: no citation ever points at content it does not match.

An event edited behind the log's back (its stored bytes no longer match its hash) is excluded from every read
that cites: checkout (real CLI, both backends), query and verbatim, replay and resolve, the SessionStart packet
of the real hook, LangGraph's checkpointer and store, exports. The packet names it in an ``integrity_error``
warning and cannot answer from memory on it. A rewritten *and re-hashed* event is caught through the next
event's link even after the graph was rebuilt from the rewritten log.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.capture.conftest import Env
from tests.conftest import run_zaxy, run_zaxy_json
from zaxy_agents.errors import IntegrityError
from zaxy_agents.eventloom.canonical import encode_line, event_hash
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.fabric.light import light_append_many
from zaxy_agents.storage.conformance.harness import Harness

SECRET_OF_RECORD = "the deploy key rotates every 30 days"
FORGED = b"the deploy key rotates every 99 days"


def _history(env: dict[str, str]) -> None:
    for payload in (
        {"fact": SECRET_OF_RECORD, "key": "deploy-key-rotation"},
        {"decision": "Deploys go out on Tuesdays", "topic": "deploys"},
        {"fact": "the staging database is Postgres 15", "key": "staging-db"},
    ):
        kind = "fact.asserted" if "fact" in payload else "decision.recorded"
        result = run_zaxy("append", "-s", "s", "-t", kind, "-a", "me", "-p", json.dumps(payload), env=env)
        assert result.returncode == 0, result.stderr


def _checkout(env: dict[str, str], query: str) -> dict:
    code, packet = run_zaxy_json("memory", "checkout", query, "-s", "s", env=env)
    assert code == 0, packet
    return packet


def _edit_line(backend: Harness, seq: int, old: bytes, new: bytes) -> None:
    line = backend.stored_lines("s")[seq - 1]
    assert old in line
    backend.replace_line("s", seq, line[:-1].replace(old, new))


def test_an_edited_event_is_never_served_under_its_citation(backend: Harness) -> None:
    env = backend.env()
    _history(env)
    before = _checkout(env, "how often does the deploy key rotate?")  # projected while the event was intact
    cited = [item["citation"] for item in before["current_facts"] + before["evidence"] if item["session"] == "s"]
    citation = next(c for c in cited if "/events/1#" in c)

    _edit_line(backend, 1, SECRET_OF_RECORD.encode(), FORGED)
    for packet in (_checkout(env, "how often does the deploy key rotate?"), _checkout(env, "deploy key rotation")):
        served = json.dumps({k: packet[k] for k in ("current_facts", "evidence", "working_set", "prompt")})
        assert citation not in served and "99 days" not in served and "30 days" not in served
        assert any(w.startswith("integrity_error: session s event 1") for w in packet["warnings"]), packet["warnings"]
        assert packet["quality"]["answerability"] != "answer_from_memory"
        assert "Deploys go out on Tuesdays" in served  # the intact events are still served

    for command in ("query", "verbatim"):
        code, body = run_zaxy_json("memory", command, "deploy key rotates", "-s", "s", env=env)
        assert code == 0, body
        assert all(hit["seq"] != 1 for hit in body["hits"])
        assert any("integrity_error: session s event 1" in w for w in body["warnings"]), body

    code, body = run_zaxy_json("replay", "-s", "s", env=env)
    assert code == 5 and body["error"]["code"] == "integrity_error" and "event 1" in body["error"]["message"]
    code, body = run_zaxy_json("replay", "-s", "s", "--from-seq", "2", env=env)
    assert code == 0 and [e["seq"] for e in body["events"]] == [2, 3]
    with backend.open() as log, pytest.raises(IntegrityError):
        log.resolve(citation)


def test_a_rewritten_and_rehashed_event_is_caught_after_a_rebuild(backend: Harness) -> None:
    env = backend.env()
    _history(env)
    envelope = json.loads(backend.stored_lines("s")[0])
    envelope["payload"]["fact"] = FORGED.decode()
    envelope["hash"] = event_hash(envelope)  # the event alone verifies again; event 2 still names the old hash
    backend.replace_line("s", 1, encode_line(envelope)[:-1])
    if backend.name == "jsonl":
        assert run_zaxy("reproject", env=env).returncode == 0  # the graph now holds the forged event's hash
    packet = _checkout(env, "how often does the deploy key rotate?")
    served = json.dumps({k: packet[k] for k in ("current_facts", "evidence", "prompt")})
    assert "99 days" not in served
    assert any("event 1" in w and "chain" in w for w in packet["warnings"]), packet["warnings"]
    assert packet["quality"]["answerability"] != "answer_from_memory"


def test_the_session_start_packet_of_the_real_hook_drops_an_edited_decision(tmp_path: Path) -> None:
    env = Env(tmp_path)
    session = env.session("claude-code")
    env.eventloom.mkdir(parents=True)
    light_append_many(
        session,
        [
            {"type": "task.created", "payload": {"task_id": "T-1", "title": "Ship the billing export"}},
            {"type": "decision.recorded", "payload": {"decision": "Invoices are immutable once sent"}},
        ],
        eventloom_path=env.eventloom,
    )
    first = json.loads(env.hook("claude-code", "SessionStart-compact").stdout)["hookSpecificOutput"]
    assert "Invoices are immutable" in first["additionalContext"]  # the fold cache now holds the decision
    path = env.eventloom / f"{session}.jsonl"
    path.write_bytes(path.read_bytes().replace(b"Invoices are immutable", b"Invoices are editable!"))
    for name in ("SessionStart-compact", "SessionStart-startup"):
        result = env.hook("claude-code", name)
        assert result.returncode == 0 and result.stderr == ""
        text = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "Invoices are" not in text and "Ship the billing export" in text
        assert f"integrity_error: session {session} event 2" in text


def test_export_refuses_the_edited_session_and_keeps_the_others(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root, use_graph=False) as fabric:
        fabric.append("s", "fact.asserted", {"fact": SECRET_OF_RECORD})
        fabric.append("other", "fact.asserted", {"fact": "intact"})
    path = root / "s.jsonl"
    path.write_bytes(path.read_bytes().replace(SECRET_OF_RECORD.encode(), FORGED))
    code, body = run_zaxy_json(
        "eventloom", "export", "--output-dir", str(tmp_path / "out"), "--eventloom-path", str(root)
    )
    assert code == 1
    assert [r["session"] for r in body["exported"]] == ["other"]
    assert body["failed"][0]["session"] == "s" and "seq 1" in body["failed"][0]["error"]
    assert not (tmp_path / "out" / "s.jsonl").exists()
