"""Turns, subagent clean-up and skills as fabric operations (the MCP tools are thin wrappers over these)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zaxy_agents.errors import InvalidRequestError, NotFoundError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection.model import entity_key


@pytest.fixture
def fabric(tmp_path: Path):
    with MemoryFabric.from_path(tmp_path / "loom", use_graph=False) as memory:
        yield memory


def test_after_turn_records_the_turn_and_reports_changes_since_a_checkout(fabric) -> None:
    fabric.append("s", "task.created", {"task_id": "T1", "title": "write the migration"})
    packet = fabric.checkout("migration", session="s")
    fabric.mark_checkout("s", packet.retention.projected_through["s"])
    fabric.append("s", "task.completed", {"task_id": "T1"})
    result = fabric.after_turn("s", user_text="done?", assistant_text="Yes, migrated.", turn_id="turn-7")
    assert result["since"] == {"seq": 1, "basis": "last_checkout"}
    assert result["event_types"] == {"task.completed": 1, "transcript.turn": 2}
    assert [item["summary"] for item in result["new_or_updated"]] == ["T1 [done]"]
    assert result["superseded"][0]["summary"] == "write the migration [open]"
    turn = fabric.resolve(result["recorded"][0])
    assert turn.payload == {"role": "user", "speaker": "user", "text": "done?", "segment": "turn-7"}

    only_this_turn = fabric.after_turn("fresh", tools_used=[{"name": "Bash", "status": "error", "summary": "exit 1"}])
    assert only_this_turn["since"] == {"seq": 0, "basis": "this_turn"} and only_this_turn["events"] == 1
    with pytest.raises(InvalidRequestError):
        fabric.after_turn("s")
    with pytest.raises(InvalidRequestError):
        fabric.after_turn("s", user_text="x", since_seq=999)
    with pytest.raises(InvalidRequestError):
        fabric.after_turn("s", tools_used=[{"name": "Bash", "status": "exploded"}])


def test_subagent_cleanup_closes_or_hands_over_open_tasks(fabric) -> None:
    fabric.append("sub", "task.created", {"task_id": "A", "title": "survey"})
    fabric.append("sub", "task.created", {"task_id": "B", "title": "already done", "status": "done"})
    closed = fabric.subagent_cleanup(
        "main",
        subagent_id="scout",
        status="failed",
        summary="ran out of time",
        subagent_session="sub",
        open_items="close",
    )
    assert closed["closed"] == ["A"] and closed["handed_over"] == []
    fabric.project(["sub"])
    assert fabric.projector.catalog.current(entity_key("sub", "task", "A")).properties["status"] == "closed"
    completion = fabric.resolve(closed["event"])
    assert completion.type == "subagent.completed" and completion.payload["summary"] == "ran out of time"

    fabric.append("main", "task.created", {"task_id": "C", "title": "shared-session task"})
    shared = fabric.subagent_cleanup("main", subagent_id="helper", status="completed", summary="ok", task_ids=["C"])
    assert shared["handed_over"] == ["C"] and shared["task_events"] == []
    with pytest.raises(NotFoundError):
        fabric.subagent_cleanup("main", subagent_id="h", status="completed", summary="ok", task_ids=["missing"])
    with pytest.raises(InvalidRequestError):
        fabric.subagent_cleanup("main", subagent_id="h", status="exploded", summary="ok")


def test_skill_lifecycle_follows_the_seed(fabric) -> None:
    run = fabric.append("s", "command.completed", {"command": "make release", "exit_code": 0})
    key = entity_key("s", "skill", "release")
    fabric.record_skill(
        "s",
        "proposed",
        "release",
        summary="Cut a release",
        procedure=["tag", "build", "publish"],
        applicability="tagged commits on main",
        citations=[run.citation],
        failure_modes=["registry down"],
        rollback="yank the release",
    )
    fabric.record_skill("s", "validated", "release")
    fabric.record_skill("s", "revised", "release", version="2", procedure=["tag", "build", "sign", "publish"])
    fabric.record_skill("s", "applied", "release", task="release 1.4")
    fabric.record_skill("s", "outcome_recorded", "release", success_score=0.9, feedback="shipped")
    fabric.record_skill("s", "outcome_recorded", "release", success_score=0.2, feedback="registry down")
    fabric.project(["s"])
    catalog = fabric.projector.catalog
    current = catalog.current(key).properties
    assert (current["status"], current["version"], current["supersedes_version"]) == ("revised", "2", "1")
    assert current["procedure"] == ["tag", "build", "sign", "publish"]  # carried: applicability, citations, ...
    assert (current["applicability"], current["citations"], current["rollback"]) == (
        "tagged commits on main",
        [run.citation],
        "yank the release",
    )
    assert [v.properties["status"] for v in catalog.history(key)] == [
        "proposed",
        "validated",
        "revised",
    ]
    assert (catalog.feedback(key).positive, catalog.feedback(key).negative) == (1, 1)
    fabric.record_skill("s", "contradicted", "release", contradiction_reason="signing broke the mirror")
    fabric.record_skill("s", "deprecated", "release", reason="replaced by CI")
    fabric.project(["s"])
    assert catalog.current(key).properties["status"] == "deprecated"
    assert catalog.history(key)[-2].properties["contradiction_reason"] == "signing broke the mirror"
    for action, fields, field in (
        ("validated", {}, "skill_id"),  # unknown skill
        ("registered", {"summary": "x"}, "action"),  # the earlier action names are not written any more
        ("revised", {"version": "2"}, "version"),  # not a new version
        ("contradicted", {}, "contradiction_reason"),
        ("outcome_recorded", {}, "success_score"),
        ("proposed", {"summary": "x", "citations": ["eventloom://s/events/99#000000000000"]}, "citations[0]"),
    ):
        with pytest.raises((InvalidRequestError, NotFoundError)) as info:
            fabric.record_skill("s", action, "nope" if field == "skill_id" else "release", **fields)
        assert info.value.field == field, action


def test_earlier_skill_logs_replay_as_before(fabric) -> None:
    """skill.registered / invoked / updated / retired (written before the seed's lifecycle) still project."""
    log = fabric.log
    log.append("s", "skill.registered", {"skill": "release", "description": "tag, build, publish", "version": "1"})
    log.append("s", "skill.updated", {"skill": "release", "description": "tag, build, sign, publish", "version": "2"})
    log.append("s", "skill.invoked", {"skill": "release", "outcome": "success"})
    log.append("s", "skill.invoked", {"skill": "release", "outcome": "failure", "note": "registry down"})
    fabric.project(["s"])
    catalog = fabric.projector.catalog
    key = entity_key("s", "skill", "release")
    assert catalog.current(key).properties["version"] == "2" and len(catalog.history(key)) == 2
    assert (catalog.feedback(key).positive, catalog.feedback(key).negative) == (1, 1)
    log.append("s", "skill.retired", {"skill": "release", "note": "replaced by CI"})
    fabric.project(["s"])
    assert catalog.current(key) is None
