"""The catalog's cross-session stream is exactly the per-session ``recent_versions`` lists, merged.

Checked on a real derived.sqlite against the per-session reads concatenated by session (sorted), then type, and
stable-sorted newest first: small scans so the per-session cut binds (identities asserted many times push others
out), event times that tie across sessions and run against the append order, closed identities, a scope with an
unknown session, and a caller that stops early. The stable-fact read (most important current versions of each
session's first recent identities) likewise against its per-identity loop."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection.catalog import CrossSessionRecency


def _merged(catalog, types, scan, sessions):  # type: ignore[no-untyped-def]
    found = []
    for session in sorted(sessions if sessions is not None else catalog.sessions):
        for entity_type in types:
            found += catalog.recent_versions(session, entity_type, scan, None)
    return sorted(found, key=lambda v: (v.valid_from, v.source_event_seq), reverse=True)


def _important(catalog, types, scan, listed, limit, sessions):  # type: ignore[no-untyped-def]
    found = []
    for session in sorted(sessions if sessions is not None else catalog.sessions):
        for entity_type in types:
            found += [catalog.current(key) for key in catalog.recent_keys(session, entity_type, scan)[:listed]]
    ranked = sorted((v for v in found if v is not None), key=lambda v: (-v.importance, v.entity_type, v.name, v.id))
    return ranked[:limit]


def test_the_stream_is_the_per_session_reads_merged(tmp_path: Path) -> None:
    rng = random.Random(5)
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        for number in range(7):
            session = f"s{number}"
            for i in range(30):
                at = {"occurred_at": f"2026-01-01T00:0{rng.randrange(4)}:00+00:00"} if rng.random() < 0.8 else {}
                roll = rng.random()
                if roll < 0.45:
                    payload = {"task_id": f"T-{rng.randrange(6)}", "title": f"task {i}", "status": "open", **at}
                    memory.append(session, "task.created", payload)
                elif roll < 0.55:
                    memory.append(
                        session, "memory.invalidated", {"entity_name": f"T-{rng.randrange(6)}", "entity_type": "task"}
                    )
                else:
                    memory.append(session, "decision.recorded", {"decision": f"d {rng.randrange(8)}", **at})
        memory.project()
        catalog = memory.projector.catalog
        assert isinstance(catalog, CrossSessionRecency)
        closed = 0
        for scan in (1, 2, 3, 5, 60):
            for types in (("task",), ("decision",), ("task", "decision"), ("decision", "task")):
                for scope in (None, ["s3"], ["s1", "s5", "s6", "nowhere"]):
                    expected = _merged(catalog, types, scan, scope)
                    assert list(catalog.recent_versions_across(types, scan, scope)) == expected, (scan, types, scope)
            closed += sum(
                1
                for session in catalog.sessions
                for key in catalog.recent_keys(session, "task", scan)
                if catalog.current(key) is None
            )
        assert closed  # the seeded memory closes some recent identities (they are left out of both)
        stream = catalog.recent_versions_across(("task", "decision"), 60)
        assert list(itertools.islice(stream, 3)) == _merged(catalog, ("task", "decision"), 60, None)[:3]
        stream.close()  # an abandoned stream releases its statement; the catalog still answers
        assert [v.id for v in catalog.recent_versions_across(("decision",), 2, ["s0"])] == [
            v.id for v in _merged(catalog, ("decision",), 2, ["s0"])
        ]
        for scan, listed, limit in ((200, 12, 12), (5, 2, 4), (3, 1, 50), (1, 12, 12)):
            for scope in (None, ["s2", "s6", "nowhere"]):
                expected = _important(catalog, ("decision", "task"), scan, listed, limit, scope)
                found = catalog.important_current_across(("decision", "task"), scan, listed, limit, scope)
                assert found == expected, (scan, listed, limit, scope)
        with pytest.raises(ValueError, match="scan must be at least 1"):
            catalog.recent_versions_across(("task",), 0)
