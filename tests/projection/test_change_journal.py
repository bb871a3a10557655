"""The catalog's change journal (``journal_mark`` / ``changed_since``): the sessions whose epochs may have moved since
a mark, so a whole-memory block's view re-reads only those. Checked on a real catalog: every session whose epoch
moved is reported (with and without a type filter), a type a commit did not touch is not, and a mark the journal no
longer reaches (every cache dropped, or more commits than it keeps) answers ``None`` (compare every session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection import catalog_cache


def _epochs(catalog, sessions: list[str], types: tuple[str, ...] | None) -> dict[str, tuple[int, int]]:  # type: ignore[no-untyped-def]
    return {s: catalog.session_epoch(s) if types is None else catalog.session_epoch(s, types) for s in sessions}


def test_changed_since_covers_every_moved_epoch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sessions = [f"s{n}" for n in range(6)]
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        for session in sessions:
            memory.append(session, "decision.recorded", {"decision": f"use {session}", "topic": "storage"})
        memory.project()
        catalog = memory.projector.catalog
        for types in (None, ("decision",), ("task",), ("decision", "fact")):
            mark = catalog.journal_mark()
            before = _epochs(catalog, sessions, types)
            memory.append("s2", "decision.recorded", {"decision": "use wal", "topic": "storage"})
            memory.append("s4", "task.created", {"task_id": "T-1", "title": "migrate"})
            memory.project()
            moved = {s for s, epoch in _epochs(catalog, sessions, types).items() if epoch != before[s]}
            changed = catalog.changed_since(mark, types)
            assert changed is not None and moved <= changed
            assert catalog.changed_since(catalog.journal_mark(), types) == set()
        assert catalog.changed_since(mark, ("task",)) == {"s4"}  # the decision of s2 is not a task
        assert catalog.changed_since(mark, ("decision",)) == {"s2"}

        catalog._clear()  # every cache dropped (an erasure, another process's commit): a mark before it is too old
        assert catalog.changed_since(mark) is None

        monkeypatch.setattr(catalog_cache, "JOURNAL_LIMIT", 2)
        mark = catalog.journal_mark()
        for number in range(3):
            memory.append("s1", "decision.recorded", {"decision": f"use {number}", "topic": "storage"})
            memory.project()
        assert catalog.changed_since(mark) is None  # more commits than the journal keeps
        assert catalog.changed_since(catalog.journal_mark()) == set()
