"""The catalog's reads of many sessions at once (what fills a whole-memory memo in one query per type) return
exactly what the per-session reads return, session by session: identities with many versions (pushed out of a
short scan), closed identities (left out), sessions without the type, unknown sessions, scans shorter and longer
than a session's history."""

from __future__ import annotations

from pathlib import Path

from zaxy_agents.fabric import MemoryFabric


def _seed(memory: MemoryFabric) -> None:
    for number in range(5):
        session = f"s{number}"
        for i in range(12 + 3 * number):
            memory.append(session, "fact.asserted", {"key": f"k{i % (3 + number)}", "fact": f"value {i} of {number}"})
            if i % 4 == 0:
                memory.append(session, "decision.recorded", {"decision": f"choice {i}", "topic": f"topic {i % 3}"})
            if i % 5 == 0:
                memory.append(session, "task.created", {"task_id": f"T-{i % 2}", "title": f"task {i}"})
        memory.append(session, "memory.invalidated", {"entity": "k1", "entity_type": "fact", "reason": "dropped"})
        if number % 2:
            memory.append(session, "fact.asserted", {"subject": "team", "predicate": "goal", "object": "ship v2"})
            memory.append(session, "fact.asserted", {"key": "quoted", "fact": 'the word "objective" ' + "x" * 200})
    memory.append("s4", "decision.recorded", {"decision": "only here", "topic": "solo"})


def test_reads_of_many_sessions_equal_the_per_session_reads(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        _seed(memory)
        memory.project()
        catalog = memory.projector.catalog
        sessions = [*catalog.sessions, "no such session"]
        checked = goals = 0
        for entity_type in ("fact", "decision", "task", "no_such_type"):
            for scan in (1, 3, 7, 60):
                versions = catalog.recent_versions_many(sessions, entity_type, scan)
                heads = catalog.recent_heads_many(sessions, entity_type, scan)
                assert list(versions) == list(heads) == sessions
                for session in sessions:
                    expected = catalog.recent_versions(session, entity_type, scan, None)
                    assert versions[session] == expected
                    assert heads[session] == catalog.recent_heads(session, entity_type, scan)
                    checked += len(expected)
                needles = ('"goal"', '"objective"')
                chosen = catalog.recent_versions_many(sessions, entity_type, scan, needles)
                for session in sessions:
                    expected = [
                        v for v in versions[session] if any(n in v.summary or n in v.properties_json for n in needles)
                    ]
                    assert chosen[session] == expected
                    goals += len(expected)
                for first in (0, 1, 2, 12):
                    keys = catalog.first_recent_keys_many(sessions, entity_type, first, scan)
                    for session in sessions:
                        assert keys[session] == catalog.recent_keys(session, entity_type, scan)[:first]
        assert checked > 100 and goals > 4  # goals in properties and in a (compressed) summary
        every = [key for session in sessions for key in catalog.recent_keys(session, "fact", 500)] + ["fact:none"]
        closed = [key for key in every if catalog.key_state(key) is not None and catalog.key_state(key).closed]
        assert closed  # the invalidated identities are in the comparison
        assert catalog.currents(every) == {key: catalog.current(key) for key in every}
        currents = {key: catalog.current(key) for key in every}
        assert catalog.current_ranks(every) == {
            key: (-v.importance, v.entity_type, v.name, v.id) for key, v in currents.items() if v is not None
        }
        ids = [v.id for session in sessions for v in catalog.recent_versions(session, "fact", 500, None)] + ["none"]
        expected = {version_id: catalog.version(version_id) for version_id in ids}
        assert catalog.read_versions(ids) == {k: v for k, v in expected.items() if v is not None}
