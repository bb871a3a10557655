"""Procedure mining: step labels, traces, closed recurring patterns, and review-pending candidates."""

from __future__ import annotations

from zaxy_agents.eventloom.models import Event
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.procedures.mining import mine, traces
from zaxy_agents.procedures.steps import command_label

SESSIONS = {
    "a": [
        ("tool.call.completed", {"tool": "read_file"}),
        ("file.edit.applied", {"path": "a.py"}),
        ("command.completed", {"command": "pytest -q", "exit_code": 0}),
        ("command.completed", {"command": "git commit -m x", "exit_code": 0}),
    ],
    "b": [
        ("tool.call.completed", {"tool": "read_file"}),
        ("file.edit.applied", {"path": "b.py"}),
        ("command.completed", {"command": "pytest tests/", "exit_code": 0}),
        ("command.completed", {"command": "git push", "exit_code": 0}),
    ],
    "c": [
        ("tool.call.completed", {"tool": "grep"}),
        ("tool.call.completed", {"tool": "read_file"}),
        ("file.edit.applied", {"path": "c.py"}),
        ("command.completed", {"command": "pytest", "exit_code": 1}),
        ("file.edit.applied", {"path": "c.py"}),
        ("file.edit.applied", {"path": "d.py"}),
        ("command.completed", {"command": "pytest", "exit_code": 0}),
        ("task.completed", {"task_id": "T"}),
        ("tool.call.completed", {"tool": "read_file", "status": "error"}),
    ],
}


def _write(memory: MemoryFabric) -> dict[str, list[Event]]:
    return {
        session: memory.append_many(session, [{"type": t, "payload": p} for t, p in events])
        for session, events in SESSIONS.items()
    }


def test_command_labels_abstract_arguments() -> None:
    assert command_label("pytest -q tests/unit") == "pytest"
    assert command_label("FOO=1 git commit -m 'x y'") == "git commit"
    assert command_label("/usr/bin/alembic upgrade head") == "alembic upgrade"
    assert command_label("npm run build") == "npm run"
    assert command_label("ls ./src") == "ls"


def test_traces_and_closed_patterns(memory: MemoryFabric) -> None:
    written = _write(memory)
    runs = traces(written["c"])
    assert [[s.label for s in run] for run in runs] == [["grep", "read_file", "edit .py"], ["edit .py", "$ pytest"]]
    mined = {m.steps: m.support for m in mine(written, min_support=2)}
    assert mined == {
        ("read_file", "edit .py", "$ pytest"): 2,
        ("read_file", "edit .py"): 3,
        ("edit .py", "$ pytest"): 3,
    }
    assert {m.steps for m in mine(written, min_support=3)} == {("read_file", "edit .py"), ("edit .py", "$ pytest")}
    assert mine(written, min_support=4) == []


def test_mine_procedures_proposes_review_pending_candidates_citing_traces(memory: MemoryFabric) -> None:
    _write(memory)
    dry = memory.mine_procedures(min_support=2, dry_run=True)
    assert dry["created"] == 0 and memory.head("procedures") is None
    result = memory.mine_procedures(min_support=2)
    assert result["created"] == 3 and result["into"] == "procedures" and result["sessions_scanned"] == 3
    status = memory.consolidation_status("procedures")
    assert status["pending"] == 3 and status["by_type"]["procedure"] == 3
    longest = next(c for c in status["candidates"] if c["title"] == "Procedure: read_file → edit .py → $ pytest")
    cited = [memory.resolve(citation) for citation in longest["source_events"]]
    assert sorted({e.session for e in cited}) == ["a", "b"] and len(cited) == 6
    assert longest["method"] == "procedure_mining_v1" and longest["authority_status"] == "non_authoritative"
    assert "Succeeded in 2 sessions (a, b)" in longest["summary"]
    assert memory.mine_procedures(min_support=2)["created"] == 0  # idempotent
    bootstrap = memory.checkout("", session="procedures", scope=["procedures"])
    assert not [f for f in bootstrap.current_facts if f.entity_type == "procedure"]  # pending: not memory yet
    memory.consolidation_review("procedures", longest["candidate_id"], decision="accepted", rationale="our workflow")
    packet = memory.checkout("", session="procedures")
    assert not [f for f in packet.current_facts if f.entity_type == "procedure"]  # a disposition, no promotion
    reviewed = [f for f in packet.reviewed_memory if f.entity_type == "procedure"]
    assert [(f.name, f.authority_status) for f in reviewed] == [(longest["title"], "non_authoritative")]
