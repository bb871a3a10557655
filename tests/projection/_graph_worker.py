"""Child process for the shared-graph tests: a worker on the backend named by ZAXY_BACKEND.

``write <session> <rounds>``: append to its own session and to the shared ``team`` session, catching the
projection up after every append (so workers race to write the same batches). ``read``: answer ``current
<session> <name>`` and ``neighbours <session> <name>`` lines from stdin until it closes, without reopening.
"""

from __future__ import annotations

import sys

from zaxy_agents.fabric import MemoryFabric


def write(session: str, rounds: int) -> None:
    with MemoryFabric.from_path() as fabric:
        for i in range(rounds):
            fabric.append_many(
                session,
                [
                    {"type": "task.created", "payload": {"task_id": f"T-{i % 4}", "title": f"{session} item {i}"}},
                    {"type": "fact.asserted", "payload": {"subject": session, "predicate": "step", "object": str(i)}},
                    {
                        "type": "command.completed",
                        "payload": {"command": f"make {i}", "exit_code": 0, "task_id": "T-1"},
                    },
                ],
            )
            fabric.append("team", "decision.recorded", {"decision": f"{session} says {i}", "topic": f"t{i % 3}"})
            fabric.project()
        assert fabric.projector.flush() and fabric.projector.writer_error() is None
    print("done", flush=True)


def read() -> None:
    with MemoryFabric.from_path() as fabric:
        fabric.project()
        print("ready", flush=True)
        for line in sys.stdin:
            command, session, name = line.split(maxsplit=2)
            name = name.strip()
            if command == "current":
                packet = fabric.checkout(f"what is the {name}?", session=session, max_tokens=400)
                history = fabric.entity_history(session, name, "fact")
                print(f"{history[-1].summary if history else '-'}|{packet.prompt.count(name)}", flush=True)
            else:
                hits = fabric.traverse(session, name, "task", depth=1)
                print(",".join(sorted(hit.entity.name.split(" #")[0] for hit in hits)) or "-", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], int(sys.argv[3]))
    else:
        read()
