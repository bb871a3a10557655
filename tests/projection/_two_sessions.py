"""The small memory the graph writer's tests rebuild, span and cancel: two sessions, 96 events in all.

Shared so the tests of the writer's span (test_graph_spanning_writes) and of a writer abandoned after a cancel
(test_graph_writer_abandoned) build the very same log: a task and an edit per round, 24 rounds per session,
projected and with the graph's writer flushed.
"""

from __future__ import annotations

from pathlib import Path

from zaxy_agents.fabric import MemoryFabric

SESSIONS = ("alpha", "beta")


def write_two_sessions(root: Path) -> None:
    with MemoryFabric.from_path(root) as memory:
        for index in range(24):
            for session in SESSIONS:
                memory.append(session, "task.created", {"task_id": f"t-{index % 7}", "title": f"work item {index}"})
                memory.append(session, "file.edited", {"path": f"src/m{index % 5}.py", "task_id": f"t-{index % 7}"})
        memory.project(list(SESSIONS))
        memory.projector.flush()
