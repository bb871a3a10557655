"""#25.4: real forgetting. After `zaxy memory erase` (by range, by citation, by session; CLI in a subprocess,
the MCP admin tool over a real stdio client, the Python API LangGraph uses) a planted SSN is in no file of the
memory folder and no row of the PostgreSQL schema; the remaining log verifies (with our verifier and the
documented stand-alone one); the erasure is recorded (which events, when, by whom, never the content); checkout
never surfaces it. Logs written with hash spec 1 erase too. A crash between the record and the scrub is finished
by `zaxy repair`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.capture.conftest import Env
from tests.conftest import REPO_ROOT, run_zaxy, run_zaxy_json
from tests.erasure_helpers import files_containing, postgres_tables_containing
from tests.eventloom.test_docs_verifier import _doc_verifier
from tests.eventloom.test_hash_spec_and_batches import _spec1_log
from tests.mcp._client import StdioClient, serve_params
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.storage.conformance.harness import Harness, PostgresHarness
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog

SSN = "078-05-1120"


def _plant(env: dict[str, str], session: str) -> None:
    """The SSN in a fact, a task, a decision and free text, next to events that must survive."""
    for kind, payload in (
        ("note.added", {"text": "kickoff call went well"}),
        ("fact.asserted", {"fact": f"Dana's SSN is {SSN}", "key": "dana-ssn"}),
        ("task.created", {"task_id": "T-7", "title": f"file Dana's taxes with SSN {SSN}"}),
        ("decision.recorded", {"decision": f"store SSN {SSN} only in the HR vault"}),
        ("transcript.turn", {"role": "user", "text": f"my social security number is {SSN}, keep it"}),
        ("fact.asserted", {"fact": "the payroll run is on the 25th", "key": "payroll"}),
    ):
        result = run_zaxy("append", "-s", session, "-t", kind, "-a", "dana", "-p", json.dumps(payload), env=env)
        assert result.returncode == 0, result.stderr


def _use_everything(env: dict[str, str], session: str) -> None:
    """Fill every derived store: projection, indexes, graph, working-set fold cache, embeddings."""
    for query in (f"what is Dana's SSN {SSN}?", "payroll", "taxes"):
        code, packet = run_zaxy_json("memory", "checkout", query, "-s", session, env=env)
        assert code == 0, packet
    assert run_zaxy("memory", "query", SSN, "-s", session, env=env).returncode == 0
    assert run_zaxy("memory", "status", env=env).returncode == 0


def test_erase_by_range_leaves_no_trace_in_the_memory_folder(tmp_path: Path) -> None:
    workspace = Env(tmp_path)
    session = workspace.session("claude-code")
    env = {**workspace.vars(), "ZAXY_EVENTLOOM_PATH": str(workspace.eventloom), "ZAXY_EMBEDDER": "hashing"}
    _plant(env, session)
    _use_everything(env, session)
    packet = json.loads(workspace.hook("claude-code", "SessionStart-compact").stdout)["hookSpecificOutput"]
    assert SSN in packet["additionalContext"]  # the fold cache holds it now
    planted = files_containing(workspace.eventloom, SSN)
    assert any(".zaxy" in str(path) for path in planted), planted  # derived state really held it

    code, report = run_zaxy_json(
        "memory",
        "erase",
        "-s",
        session,
        "--from-seq",
        "2",
        "--to-seq",
        "5",
        "--reason",
        "GDPR request",
        "--actor",
        "privacy-officer",
        env=env,
    )
    assert code == 0 and report["erased"] == 4 and report["ranges"] == [{"from_seq": 2, "to_seq": 5}], report
    assert files_containing(workspace.eventloom, SSN) == []

    with JsonlEventLog(workspace.eventloom) as log:
        assert log.verify(session).ok
        record = log.resolve(report["record"])
        assert record.type == "eventloom.erased" and record.actor == "privacy-officer"
        assert record.payload["reason"] == "GDPR request" and record.payload["event_count"] == 4
        assert SSN not in json.dumps(record.payload)
        assert [e.payload for e in log.replay(session, 2, 5)] == [{}] * 4
        # each event erased in the form its record lists: spec-2 "erased" (hash recomputes) where that form fits the
        # line in place, else a tombstone; either names the record (padding is storage only, never read back)
        forms = {seq: r["form"] for r in record.payload["ranges"] for seq in range(r["from_seq"], r["to_seq"] + 1)}
        assert sorted(forms) == [2, 3, 4, 5]
        expected = {
            seq: {"record_seq": record.seq} if form == "erased" else {"tombstone": "erased", "record_seq": record.seq}
            for seq, form in forms.items()
        }
        assert {e.seq: e.erased for e in log.replay(session, 2, 5)} == expected
        assert log.get(session, 6).payload["fact"] == "the payroll run is on the 25th"
    _doc_verifier()(workspace.eventloom / f"{session}.jsonl", session)

    code, packet = run_zaxy_json("memory", "checkout", "what is Dana's SSN?", "-s", session, env=env)
    assert code == 0 and SSN not in json.dumps(packet)
    assert packet["quality"]["answerability"] != "answer_from_memory"
    code, packet = run_zaxy_json("memory", "checkout", "when is the payroll run?", "-s", session, env=env)
    assert "payroll run is on the 25th" in packet["prompt"]
    text = json.loads(workspace.hook("claude-code", "SessionStart-startup").stdout)["hookSpecificOutput"]
    assert SSN not in text["additionalContext"]
    assert files_containing(workspace.eventloom, SSN) == []  # nothing came back through later reads


def test_erase_by_citation_and_by_session_and_through_mcp(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    env = {"ZAXY_EVENTLOOM_PATH": str(root)}
    _plant(env, "a")
    _plant(env, "b")
    _use_everything(env, "a")
    with JsonlEventLog(root) as log:
        citation = log.get("a", 2).citation
    code, report = run_zaxy_json("memory", "erase", "--citation", citation, env=env)
    assert code == 0 and report["erased"] == 1
    code, report = run_zaxy_json("memory", "erase", "-s", "a", "--all", "--reason", "account closed", env=env)
    assert code == 0 and report["erased"] == 5 and report["already_erased"] == [2] and report["kept"] == [7]

    client = StdioClient(serve_params(root, "--session-id", "b", "--profile", "full"))
    try:
        reply = client.ok("memory_erase", {"from_seq": 2, "to_seq": 5, "reason": "user request"})
        assert reply["erased"] == 4
        refused = client.call("memory_erase", {"from_seq": 2, "all_events": True})
        assert refused.isError and refused.structuredContent["error"]["code"] == "invalid_request"
    finally:
        client.close()
    assert files_containing(root, SSN) == []
    with JsonlEventLog(root) as log:
        assert log.verify("a").ok and log.verify("b").ok
        assert log.append("a", "note.added", {"after": "erase"}).seq == 9  # the chain continues
    code, body = run_zaxy_json("memory", "erase", "-s", "a", "--from-seq", "99", env=env)
    assert code == 2 and body["error"]["field"] == "seqs"


def test_erase_on_postgresql_leaves_no_trace_in_any_table(postgres_backend: PostgresHarness, tmp_path: Path) -> None:
    env = {**postgres_backend.env(), "ZAXY_EVENTLOOM_PATH": str(tmp_path / "loom"), "ZAXY_EMBEDDER": "hashing"}
    _plant(env, "s")
    _use_everything(env, "s")
    assert postgres_tables_containing(postgres_backend.dsn, postgres_backend.schema, SSN)  # planted for real
    code, report = run_zaxy_json("memory", "erase", "-s", "s", "--from-seq", "2", "--to-seq", "5", env=env)
    assert code == 0 and report["erased"] == 4, report
    assert postgres_tables_containing(postgres_backend.dsn, postgres_backend.schema, SSN) == {}
    assert files_containing(tmp_path, SSN) == []
    code, verified = run_zaxy_json("verify", "-s", "s", env=env)
    assert code == 0 and verified["ok"]
    code, packet = run_zaxy_json("memory", "checkout", "what is Dana's SSN?", "-s", "s", env=env)
    assert SSN not in json.dumps(packet)
    out = tmp_path / "export"
    code, _body = run_zaxy_json("eventloom", "export", "--output-dir", str(out), env=env)
    assert code == 0 and files_containing(out, SSN) == []
    _doc_verifier()(out / "s.jsonl", "s")


def test_a_spec_1_log_erases_to_tombstones_that_still_verify(backend: Harness, tmp_path: Path) -> None:
    legacy = _spec1_log(tmp_path / "legacy" / "old.jsonl", "old", 4)
    with backend.open() as log:
        if backend.name == "postgresql":
            from zaxy_agents.storage.transfer import import_file

            import_file(log, tmp_path / "legacy" / "old.jsonl")
        elif backend.name == "memory":  # memory:// has no files: plant the stored lines directly
            backend.rewrite("old", (tmp_path / "legacy" / "old.jsonl").read_bytes().splitlines(keepends=True))
        else:
            (backend.root).mkdir(parents=True, exist_ok=True)
            (backend.root / "old.jsonl").write_bytes((tmp_path / "legacy" / "old.jsonl").read_bytes())
    with MemoryFabric(_settings(backend, tmp_path), log=backend.open(), backend=backend.backend()) as fabric:
        report = fabric.erase_range("old", 2, 3, actor="ops", reason="legacy cleanup")
        assert report["erased"] == 2
        assert fabric.verify("old").ok
        assert [e.erased["tombstone"] for e in fabric.replay("old", 2, 3)] == ["erased", "erased"]
        assert fabric.replay("old", 4, 4).__next__().hash == legacy[3]["hash"]  # later citations unchanged
        assert fabric.append("old", "note.added", {}).seq == 6
    lines = backend.stored_lines("old")
    assert all(b"legacy fact 2" not in line and b'"id"' not in line for line in lines[1:3])
    (tmp_path / "check.jsonl").write_bytes(b"".join(lines))
    _doc_verifier()(tmp_path / "check.jsonl", "old")


def _settings(backend: Harness, tmp_path: Path) -> object:
    from zaxy_agents.config import ZaxySettings

    if backend.name == "postgresql":
        os.environ["ZAXY_POSTGRES_SCHEMA"] = backend.schema  # type: ignore[union-attr]
        return ZaxySettings.resolve(tmp_path / "derived", backend=backend.dsn)  # type: ignore[union-attr]
    return ZaxySettings.resolve(backend.root)  # type: ignore[union-attr]


def test_a_crash_between_the_record_and_the_scrub_is_finished_by_repair(tmp_path: Path) -> None:
    root = tmp_path / "loom"
    env = {"ZAXY_EVENTLOOM_PATH": str(root)}
    _plant(env, "s")
    child = subprocess.run(
        [sys.executable, "-m", "tests.eventloom._killed_eraser", str(root), "s", "2", "5"],
        cwd=REPO_ROOT,
        capture_output=True,
        timeout=120,
    )
    assert child.returncode == -9, child.stderr
    with JsonlEventLog(root) as log:
        assert log.get("s", 7).type == "eventloom.erased"  # recorded, not yet scrubbed
    assert files_containing(root, SSN)
    code, result = run_zaxy_json("repair", env=env)
    assert code == 0 and result["sessions"][0].get("finished_erasure") == 4, result
    assert files_containing(root, SSN) == []
    with JsonlEventLog(root) as log:
        assert log.verify("s").ok


def test_erasure_and_repair_records_cannot_be_forged(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom", use_graph=False) as fabric:
        for kind in ("eventloom.erased", "eventloom.repaired", "eventloom.torn_tail_recovered"):
            with pytest.raises(InvalidRequestError):
                fabric.append("s", kind, {"ranges": []})
            with pytest.raises(InvalidRequestError):
                fabric.append_many("s", [{"type": "note.added"}, {"type": kind}])
        assert fabric.head("s") is None


def test_erase_works_while_another_session_holds_an_edited_event(tmp_path: Path) -> None:
    """The graph is rebuilt from the log after an erase (on its next use); an edited event of *another* session is
    left out of it (read-side check) and so are the edges to it, instead of the rebuild failing."""
    root = tmp_path / "loom"
    with MemoryFabric.from_path(root) as fabric:
        for i in range(4):
            fabric.append("shop", "fact.asserted", {"key": f"k{i}", "fact": f"fact {i} {SSN if i == 1 else ''}"})
        for i in range(3):
            fabric.append("notes", "note.recorded", {"text": f"note number {i}"})
        fabric.traverse("shop", "k0", "fact")  # the graph exists, so the erase rebuilds it
    log = root / "notes.jsonl"
    log.write_bytes(log.read_bytes().replace(b"note number 1", b"note number 9", 1))
    with MemoryFabric.from_path(root) as fabric:
        report = fabric.erase_range("shop", 2, 2, actor="t", reason="r")
        assert report["erased"] == 1 and fabric.verify("shop").ok and not fabric.verify("notes").ok
        assert files_containing(root, SSN) == []
        fabric.traverse("shop", "k0", "fact")  # the graph's next use rebuilds it from the scrubbed log
        assert fabric.memory_status()["graph_materialised"] is True
    assert files_containing(root, SSN) == []
