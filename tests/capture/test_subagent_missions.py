"""Subagents as Coordinate workers: the real `zaxy hook-event` fed with payloads recorded from Claude Code and
Codex, in a workspace that named a mission (ZAXY_MISSION). A subagent's start makes it a worker with an
assignment (written as the mission's dispatcher `<client>-hooks`, a role that may do nothing else); its stop
reports its last reply as that worker's pending finding, citing the captured event. The hook never reviews or
promotes, and no identity it writes as could; the mission's reviewers do, through the mission tools."""

from __future__ import annotations

import pytest

from tests.capture.conftest import Env
from zaxy_agents.errors import UnauthorizedError
from zaxy_agents.fabric import MemoryFabric

MISSION = "refactor-billing"


def _brief(env: Env) -> dict:
    with MemoryFabric.from_path(env.eventloom) as memory:
        return memory.coordination.merge_brief(MISSION)


def test_claude_code_subagents_become_workers_and_their_replies_pending_findings(env: Env) -> None:
    agent = {"agent_id": "ace15ed90b8bfcb76"}
    named = {"ZAXY_MISSION": MISSION, "ZAXY_MISSION_REVIEWERS": "alice"}
    started = env.hook("claude-code", "SubagentStart", fields={**agent, "agent_type": "Explore"}, **named)
    stopped = env.hook(
        "claude-code",
        "SubagentStop",
        fields={**agent, "agent_type": "", "last_assistant_message": "Only billing.py retries the charge."},
        **named,
    )
    assert (started.returncode, started.stderr, stopped.returncode, stopped.stderr) == (0, "", 0, "")
    _, status = env.zaxy_json("hooks", "status")
    assert status["errors"]["count"] == 0, status["errors"]

    brief = _brief(env)
    assert brief["coordinator"] == "user" and brief["reviewers"] == ["alice"]  # started by the first subagent...
    assert brief["dispatchers"] == ["claude-code-hooks", "codex-hooks"]  # ...granting the hooks only "assign"
    (worker,) = brief["workers"]
    assert worker["worker_id"] == "cc-ace15ed90b8b" and worker["purpose"] == "claude-code Explore subagent"
    assert [a["task"] for a in worker["assignments"]] == ["Explore subagent of claude-code session d1d64961"]
    (finding,) = brief["findings"]["pending"]
    assert finding["claim"] == "Only billing.py retries the charge." and finding["worker_id"] == worker["worker_id"]
    assert finding["authority_status"] == "non_authoritative" and finding["reviews"] == []
    assert finding["assignment_id"] == worker["assignments"][0]["assignment_id"]
    stopped_event = [e for e in env.events(env.session("claude-code")) if e["type"] == "hook.subagent_stopped"][-1]
    assert [ref["seq"] for ref in finding["evidence"]] == [stopped_event["seq"]]  # cites what the hook captured

    parent = env.events(f"coordinate.{MISSION}")
    assert [(e["type"], e["actor"]) for e in parent] == [
        ("coordination.mission.started", "user"),
        ("coordination.worker.created", "claude-code-hooks"),
        ("coordination.assignment.created", "claude-code-hooks"),
    ]
    assert {e["actor"] for e in env.events(f"coordinate.{MISSION}.{worker['worker_id']}")} == {worker["worker_id"]}

    with MemoryFabric.from_path(env.eventloom) as memory:  # a reviewer decides, never the hook
        coordination = memory.coordination
        assert coordination.checkout(MISSION)["accepted_state"] == []
        for identity in ("claude-code-hooks", worker["worker_id"], "claude-code"):  # what the hook writes as, and
            with pytest.raises(UnauthorizedError):  # the client's own name: none of them may review
                coordination.review_finding(MISSION, finding["finding_id"], "accepted", "mine", reviewer=identity)
        coordination.review_finding(MISSION, finding["finding_id"], "accepted", "checked", reviewer="alice")
        coordination.promote(MISSION, finding["finding_id"], promoted_by="alice")
        accepted = coordination.checkout(MISSION)["accepted_state"]
    assert [row["claim"] for row in accepted] == ["Only billing.py retries the charge."]


def test_codex_subagents_join_an_existing_mission_and_nothing_happens_without_one(env: Env) -> None:
    with MemoryFabric.from_path(env.eventloom) as memory:
        memory.coordination.start(
            "Billing", "Find the retries", mission_id=MISSION, coordinator="lead", dispatchers=["codex-hooks"]
        )
    assert env.hook("codex", "SubagentStop", ZAXY_MISSION=MISSION).returncode == 0  # no start seen: joins at stop
    assert env.hook("codex", "SubagentStop", fields={"agent_id": "other-agent"}).returncode == 0  # no mission named

    brief = _brief(env)
    assert brief["coordinator"] == "lead"
    assert [w["worker_id"] for w in brief["workers"]] == ["codex-019a2b3c4d5e"]
    (finding,) = brief["findings"]["pending"]
    assert finding["claim"] == "Checked the three call sites; only billing.py retries."
    assert len(env.events(env.session("codex"))) == 2  # both stops were captured as usual


def test_a_refused_mapping_is_reported_and_the_hook_still_exits_0(env: Env) -> None:
    result = env.hook("claude-code", "SubagentStart", ZAXY_MISSION="Not A Valid Id!")
    assert result.returncode == 0 and result.stderr == ""
    assert env.events(env.session("claude-code"))[-1]["type"] == "hook.subagent_started"  # capture unaffected
    _, status = env.zaxy_json("hooks", "status")
    (error,) = status["errors"]["recent"]
    assert error["stage"] == "coordinate" and "mission_id" in error["error"], error


def test_a_mission_that_does_not_grant_the_hooks_is_refused_not_joined(env: Env) -> None:
    """A mission started by hand without the hook dispatcher: the hook captures the subagent as usual, writes
    nothing into the mission, and says why in `zaxy hooks status` (it never borrows the coordinator's rights)."""
    with MemoryFabric.from_path(env.eventloom) as memory:
        memory.coordination.start("Billing", "Find the retries", mission_id=MISSION, coordinator="lead")
    result = env.hook("claude-code", "SubagentStart", ZAXY_MISSION=MISSION)
    assert result.returncode == 0 and result.stderr == ""
    assert env.events(env.session("claude-code"))[-1]["type"] == "hook.subagent_started"
    assert [e["type"] for e in env.events(f"coordinate.{MISSION}")] == ["coordination.mission.started"]
    _, status = env.zaxy_json("hooks", "status")
    (error,) = status["errors"]["recent"]
    assert error["stage"] == "coordinate" and "does not let 'claude-code-hooks' create workers" in error["error"]
