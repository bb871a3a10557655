"""The working-set digest and its packets: semantics, citations that resolve, and the character bound."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.capture.conftest import Env
from zaxy_agents.errors import NotFoundError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.workingset import WorkingItem, WorkingSet, build_working_set, render_packet
from zaxy_agents.workingset.packet import HARD_MAX_CHARS

HISTORY = [
    ("task.created", {"task_id": "T-1", "title": "Add jittered retries to the payment client"}),
    ("task.created", {"task_id": "T-2", "title": "Write the refund webhook"}),
    ("task.updated", {"task_id": "T-1", "status": "in_progress"}),
    ("task.created", {"task_id": "T-3", "title": "Delete the legacy cron"}),
    ("task.completed", {"task_id": "T-3"}),
    ("task.updated", {"task_id": "T-2", "status": "done"}),
    ("decision.recorded", {"decision_id": "D-1", "decision": "Cap retries at 5", "rationale": "provider rate limit"}),
    ("decision.recorded", {"decision_id": "D-2", "decision": "Use Redis for the dedupe window"}),
    ("decision.superseded", {"decision_id": "D-2"}),
    ("fact.asserted", {"subject": "payments-api", "fact": "returns 429 above 20 rps"}),
    ("fact.asserted", {"fact_id": "F-2", "fact": "staging uses the sandbox key"}),
    ("fact.retracted", {"fact_id": "F-2"}),
    ("question.raised", {"question_id": "Q-1", "question": "Does the provider dedupe by idempotency key?"}),
    ("blocker.raised", {"blocker_id": "B-1", "blocker": "No staging credentials"}),
    ("blocker.resolved", {"blocker_id": "B-1"}),
    ("file.edit.applied", {"path": "src/pay/client.py", "operation": "edit", "lines_added": 10, "lines_removed": 2}),
    ("file.edit.applied", {"path": "tests/test_client.py", "operation": "create", "lines_added": 40}),
    ("file.edit.applied", {"path": "src/pay/client.py", "operation": "edit", "lines_added": 3, "lines_removed": 1}),
    ("command.completed", {"command": "pytest tests/test_client.py -q", "exit_code": 1}),
    ("command.completed", {"command": "ruff check .", "exit_code": 0}),
    ("command.completed", {"command": "pytest tests/test_client.py -q", "exit_code": 0}),
    ("hook.user_prompt_submitted", {"prompt": "make the retry test pass"}),
    ("hook.postcompact", {"compact_summary": "We were fixing retries.", "trigger": "auto"}),
]


def _fabric_with_history(path: Path, session: str = "proj") -> MemoryFabric:
    fabric = MemoryFabric.from_path(path)
    fabric.append_many(session, [{"type": kind, "payload": payload} for kind, payload in HISTORY])
    return fabric


def test_digest_folds_the_log_into_current_state(tmp_path: Path) -> None:
    with _fabric_with_history(tmp_path) as fabric:
        working = fabric.working_set("proj")
        assert isinstance(working, WorkingSet) and working.complete and working.head_seq == len(HISTORY)
        assert [item.detail["task_id"] for item in working.open_tasks] == ["T-1"]
        assert working.open_tasks[0].text == "[in_progress] Add jittered retries to the payment client (T-1)"
        assert [item.detail["decision_id"] for item in working.decisions] == ["D-1"]
        assert "because provider rate limit" in working.decisions[0].text
        assert [item.text for item in working.facts] == ["payments-api: returns 429 above 20 rps"]
        assert [item.text for item in working.unknowns] == ["Does the provider dedupe by idempotency key?"]
        assert [item.detail["path"] for item in working.files] == ["src/pay/client.py", "tests/test_client.py"]
        assert working.files[0].detail == {
            "path": "src/pay/client.py",
            "operation": "edit",
            "edits": 2,
            "lines_added": 13,
            "lines_removed": 3,
        }
        assert [item.detail["exit_code"] for item in working.commands] == [0, 0]  # latest run per command
        assert [item.text for item in working.prompts] == ["make the retry test pass"]
        assert working.compactions[0].detail == {"trigger": "auto", "summary": "We were fixing retries."}
        for item in working.items():
            event = fabric.resolve(item.citation)
            assert event.seq == item.seq and event.timestamp == item.timestamp
        assert json.loads(json.dumps(working.to_dict()))["open_tasks"][0]["kind"] == "task"


def test_supersedes_drops_the_cited_item(tmp_path: Path) -> None:
    with _fabric_with_history(tmp_path) as fabric:
        target = fabric.working_set("proj").decisions[0].citation
        fabric.append("proj", "note.added", {"text": "D-1 was wrong", "supersedes": target})
        assert fabric.working_set("proj").decisions == ()


def test_window_bounds_recent_sections_but_never_standing_state(tmp_path: Path) -> None:
    with _fabric_with_history(tmp_path) as fabric:
        fabric.append_many("proj", [{"type": "note.added", "payload": {"i": i}} for i in range(50)])
        working = fabric.working_set("proj", window=60)
        assert not working.complete and working.window_from_seq == working.head_seq - 59
        assert working.open_tasks[0].detail["task_id"] == "T-1"  # opened before the window: still open
        assert [item.detail["decision_id"] for item in working.decisions] == ["D-1"]
        assert working.files and working.commands  # inside the window of 60
        assert fabric.working_set("proj", window=10).files == ()  # recent sections follow the window


def test_unknown_session_is_a_structured_error(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path) as fabric:
        try:
            fabric.working_set("nope")
        except NotFoundError as exc:
            assert exc.field == "session"
        else:  # pragma: no cover
            raise AssertionError("expected NotFoundError")


def test_packets_cite_every_line_and_prioritise_tasks(tmp_path: Path) -> None:
    with _fabric_with_history(tmp_path) as fabric:
        recovery = fabric.recovery_packet("proj")
        bootstrap = fabric.bootstrap_packet("proj")
        for packet in (recovery, bootstrap):
            lines = [line for line in packet.text.splitlines() if line.startswith("- ")]
            assert len(lines) == len(packet.citations) and all("[eventloom://proj/events/" in line for line in lines)
            assert packet.text.index("## Open tasks") < packet.text.index("## Standing decisions")
            for citation in packet.citations:
                fabric.resolve(citation)
        assert "## Last user prompts" in recovery.text and "## Last user prompts" in bootstrap.text
        tiny = fabric.recovery_packet("proj", max_chars=700)
        assert tiny.chars <= 700 and "Add jittered retries" in tiny.text and tiny.omitted > 0


def test_compact_session_start_packet_through_the_real_hook(env: Env) -> None:
    """A long, busy log: the recovery packet stays < 8,000 chars and keeps open tasks and decisions, cited."""
    session = env.session("claude-code")
    env.eventloom.mkdir(parents=True)
    with MemoryFabric.from_path(env.eventloom) as fabric:
        drafts = []
        for i in range(1500):
            drafts.append({"type": "command.completed", "payload": {"command": f"pytest -k case_{i} " + "x" * 300}})
            drafts.append({"type": "file.edit.applied", "payload": {"path": f"src/module_{i}.py", "lines_added": 1}})
        for i in range(40):
            drafts.append({"type": "task.created", "payload": {"task_id": f"T-{i}", "title": f"Task {i} " + "y" * 250}})
            drafts.append({"type": "decision.recorded", "payload": {"decision": f"Decision {i} " + "z" * 250}})
        drafts.append({"type": "task.completed", "payload": {"task_id": "T-0"}})
        fabric.append_many(session, drafts)
    result = env.hook("claude-code", "SessionStart-compact")
    assert result.returncode == 0 and len(result.stdout) < 8_000
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "## Open tasks" in context and "## Standing decisions" in context and "more items not shown" in context
    assert "Task 39 " in context and "(T-0)" not in context  # newest tasks first; closed tasks are gone
    citations = [line.rsplit("[", 1)[1].rstrip("]") for line in context.splitlines() if line.startswith("- ")]
    with MemoryFabric.from_path(env.eventloom) as fabric:
        for citation in citations:
            event = fabric.resolve(citation)
            assert event.type in ("task.created", "decision.recorded", "command.completed", "file.edit.applied")
    recorded, reminder = env.events(session)[-2:]
    assert recorded["type"] == "hook.compact_session_started"
    assert reminder["type"] == "memory.reminder.suggested" and reminder["payload"]["reason"] == "compaction"
    assert recorded["payload"]["injected"]["chars"] == len(context)


items = st.builds(
    lambda kind, text, seq: WorkingItem(kind, text, f"eventloom://s/events/{seq}#{'a' * 12}", seq, "t"),
    st.sampled_from(["task", "decision", "fact", "unknown", "file", "command", "prompt"]),
    st.text(min_size=1, max_size=400),
    st.integers(min_value=1, max_value=10**9),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(items, max_size=80),
    st.integers(min_value=0, max_value=20_000),
    st.sampled_from(["recovery", "bootstrap"]),
)
def test_packet_never_exceeds_its_budget(items_: list[WorkingItem], budget: int, kind: str) -> None:
    sections: dict[str, list[WorkingItem]] = {}
    names = {"task": "open_tasks", "decision": "decisions", "fact": "facts", "unknown": "unknowns"}
    names |= {"file": "files", "command": "commands", "prompt": "prompts"}
    for item in items_:
        sections.setdefault(names[item.kind], []).append(item)
    working = WorkingSet("s", window_from_seq=1, window_to_seq=10, **{k: tuple(v) for k, v in sections.items()})
    packet = render_packet(working, kind, budget)
    assert packet.chars <= min(max(budget, 400), HARD_MAX_CHARS)
    for citation in packet.citations:
        assert citation in packet.text


def test_pure_digest_ignores_unknown_types() -> None:
    envelope = {"seq": 1, "hash": "b" * 64, "timestamp": "t", "type": "weird.thing", "payload": {"x": 1}}
    assert build_working_set("s", [envelope]).is_empty
