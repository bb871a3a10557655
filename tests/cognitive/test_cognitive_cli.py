"""The real `zaxy` CLI in a subprocess: causal reads, consolidation, mining, the internal lanes, errors."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_zaxy, run_zaxy_json
from tests.test_docs_benchmarks import documented_checks, run_counts
from zaxy_agents.fabric import MemoryFabric


def _write(root: str, session: str, events: list[tuple[str, dict]]) -> list[str]:
    """Fixture events written in-process (appends never open the graph, so the CLI can open it next)."""
    with MemoryFabric.from_path(root) as memory:
        written = memory.append_many(session, [{"type": kind, "payload": payload} for kind, payload in events])
        return [event.citation for event in written]


def test_causal_commands(tmp_path: Path) -> None:
    root = str(tmp_path / "loom")
    (failure,) = _write(root, "s", [("command.completed", {"command": "make deploy", "exit_code": 2})])
    code, body = run_zaxy_json(
        "memory",
        "causal",
        "explain",
        "-s",
        "s",
        "--cause",
        "expired token",
        "--cause-type",
        "fact",
        "--effect",
        "make deploy #1",
        "--effect-type",
        "command_run",
        "--relation",
        "caused",
        "--confidence",
        "0.9",
        "--evidence",
        failure,
        "--eventloom-path",
        root,
    )
    assert code == 0 and body["causal_edge"].startswith("eventloom://s/events/3#")
    code, body = run_zaxy_json(
        "memory", "causal", "predecessors", "make deploy #1", "-s", "s", "--eventloom-path", root
    )
    assert code == 0 and body["direction"] == "predecessors"
    assert [(h["source"]["name"], h["relation_type"], h["evidence"]["citation"]) for h in body["results"]] == [
        ("expired token", "caused", failure)
    ]
    code, body = run_zaxy_json(
        "memory",
        "causal",
        "successors",
        "expired token",
        "-s",
        "s",
        "-r",
        "caused",
        "--depth",
        "1",
        "--eventloom-path",
        root,
    )
    assert code == 0 and body["results"][0]["target"]["name"] == "make deploy #1"
    human = run_zaxy("memory", "causal", "successors", "expired token", "-s", "s", "--eventloom-path", root)
    assert human.returncode == 0 and "make deploy #1" in human.stdout and "non-authoritative" in human.stdout
    code, body = run_zaxy_json("memory", "causal", "successors", "nobody", "-s", "s", "--eventloom-path", root)
    assert code == 3 and body["error"]["code"] == "not_found" and body["error"]["field"] == "entity_name"
    bad = run_zaxy(
        "memory", "causal", "successors", "expired token", "-s", "s", "-r", "vibes", "--eventloom-path", root
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "relation_type" in bad.stderr


def test_consolidation_commands_and_mining(tmp_path: Path) -> None:
    root = str(tmp_path / "loom")
    steps = [
        ("tool.call.completed", {"tool": "read_file"}),
        ("file.edit.applied", {"path": "x.py"}),
        ("command.completed", {"command": "pytest -q", "exit_code": 0}),
        ("task.completed", {"task_id": "T"}),
    ]
    citations = _write(root, "a", steps)
    _write(root, "b", steps)
    code, body = run_zaxy_json("memory", "consolidation", "propose-from-log", "-s", "a", "--eventloom-path", root)
    assert code == 0 and [p["candidate_type"] for p in body["proposals"]] == ["episode", "procedure"]
    procedure = body["proposals"][1]["candidate_id"]
    code, body = run_zaxy_json(
        "memory",
        "consolidation",
        "propose",
        "-s",
        "a",
        "--type",
        "claim",
        "--title",
        "pytest passes",
        "--summary",
        "the suite is green",
        "--source",
        citations[2],
        "--eventloom-path",
        root,
    )
    assert code == 0 and body["created"] and body["candidate"]["review_status"] == "pending"
    code, body = run_zaxy_json(
        "memory",
        "consolidation",
        "propose",
        "-s",
        "a",
        "--type",
        "claim",
        "--title",
        "t",
        "--summary",
        "s",
        "--source",
        "eventloom://a/events/1#000000000000",
        "--eventloom-path",
        root,
    )
    assert code == 3 and body["error"]["code"] == "not_found"
    code, body = run_zaxy_json(
        "memory",
        "consolidation",
        "review",
        "-s",
        "a",
        procedure,
        "--decision",
        "accepted",
        "--rationale",
        "our loop",
        "--eventloom-path",
        root,
    )
    assert code == 0 and body["status"] == "accepted" and body["authority_status"] == "non_authoritative"
    code, body = run_zaxy_json(
        "memory",
        "consolidation",
        "review",
        "-s",
        "a",
        procedure,
        "--decision",
        "accepted",
        "--rationale",
        "x",
        "--eventloom-path",
        root,
    )
    assert code == 1 and body["error"]["code"] == "conflict"
    code, body = run_zaxy_json("memory", "consolidation", "status", "-s", "a", "--eventloom-path", root)
    assert code == 0 and (body["total"], body["pending"], body["accepted"]) == (3, 2, 1)
    human = run_zaxy("memory", "consolidation", "status", "--eventloom-path", root)
    assert human.returncode == 0 and "3 candidates" in human.stdout and procedure in human.stdout
    code, body = run_zaxy_json("memory", "mine-procedures", "--min-support", "2", "--eventloom-path", root)
    assert code == 0 and body["created"] == 1 and body["procedures"][0]["support"] == 2
    assert body["procedures"][0]["steps"] == ["read_file", "edit .py", "$ pytest"]
    code, body = run_zaxy_json("memory", "mine-procedures", "--min-support", "1", "--eventloom-path", root)
    assert code == 2 and body["error"]["field"] == "min_support"


def test_internal_lanes_pass(tmp_path: Path) -> None:
    for lane in ("causal", "consolidation"):
        code, body = run_zaxy_json("benchmark", lane)
        assert code == 0, body["failures"]
        assert body["internal"] is True and body["passed"] is True and set(body["metrics"].values()) == {1.0}
        assert sum(run_counts(body).values()) == documented_checks(lane)  # the count docs/benchmarks.md states
