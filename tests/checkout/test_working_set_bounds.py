"""docs/checkout.md: the packet's `working_set` is "bounded (5 per kind) goals, recent decisions, open tasks
(completed ones never appear), recent files, blockers (blocked tasks, failed commands not fixed by a later
successful rerun)" — checked on a real checkout."""

from __future__ import annotations

from pathlib import Path

from zaxy_agents.fabric import MemoryFabric


def test_working_set_is_five_per_kind_newest_first_without_closed_or_fixed_items(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        for n in range(8):
            memory.append("s", "task.created", {"task_id": f"T-{n}", "title": f"task {n}"})
            memory.append("s", "decision.recorded", {"decision": f"decide {n}", "topic": f"topic {n}"})
            memory.append("s", "file.edit.applied", {"path": f"src/f{n}.py", "operation": "edit"})
        memory.append("s", "task.completed", {"task_id": "T-7"})
        memory.append("s", "command.completed", {"command": "pytest -q", "exit_code": 1})
        memory.append("s", "command.completed", {"command": "make lint", "exit_code": 2})
        memory.append("s", "command.completed", {"command": "pytest -q", "exit_code": 0})  # fixed by a rerun
        working = memory.checkout("task decide", session="s", max_tokens=8000).working_set

        assert [t.text for t in working.tasks] == [f"task {n} [open]" for n in (6, 5, 4, 3, 2)]  # T-7 completed
        assert len(working.decisions) == 5 and len(working.artifacts) == 5
        blockers = " ".join(b.text for b in working.blockers)
        assert "make lint" in blockers and "pytest" not in blockers
