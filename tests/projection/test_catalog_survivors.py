"""The catalog's caches leave no tracked object for an answer that is empty or a list of strings.

Why: at 1M events a whole-memory checkout reads the edges of ~50 identities and the names of ~100 word n-grams it
has not met before, most of them empty; each cached empty list or frozenset was one more object that survived the
question, and the objects surviving each question are what bring a full garbage collection (~50 ms there,
docs/benchmarks.md, "Whole-memory checkouts after an append: the garbage collector's share"). An empty answer is
cached as the shared ``()`` and a list of identity keys as a tuple of strings (the collector stops tracking it once it
survives a collection). Readers still get lists and sets of their own, equal to what they got before."""

from __future__ import annotations

import gc
from pathlib import Path

from zaxy_agents.fabric import MemoryFabric


def test_empty_and_string_answers_are_cached_untracked(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        for session in ("s1", "s2"):
            memory.append(session, "decision.recorded", {"decision": f"use wal in {session}", "topic": "storage"})
            memory.append(session, "task.created", {"task_id": f"T-{session}", "title": "migrate the index"})
        memory.project()
        catalog = memory.projector.catalog

        keys = catalog.recent_keys("s1", "decision")
        assert keys and catalog.recent_keys("s1", "decision") == keys
        bare = [key for key in keys if not catalog.out_edges(key)]
        assert bare, "a decision with no out-edge"
        for key in bare:
            assert catalog._edges[(key, "out")] == ()  # cached as the shared empty tuple
            first = catalog.out_edges(key)
            assert first == [] and isinstance(first, list)
            first.append("not in the catalog")  # a caller's list is its own
            assert catalog.out_edges(key) == []
            assert catalog.degree(key) == len(catalog.in_edges(key))

        assert catalog.keys_named("no such name anywhere") == set()
        found = catalog.keys_named_many(["nothing named so", "neither this"])
        assert found == {"nothing named so": set(), "neither this": set()}
        assert catalog.recent_versions("s2", "goal", 500, None) == []

        gc.collect()  # a tuple of strings is untracked once it survives a collection
        for value in (
            catalog._edges[(bare[0], "out")],
            catalog._named["no such name anywhere"],
            catalog._named["nothing named so"],
            catalog._recent_keys[("s1", "decision", 500)],
            catalog._recent[("s2", "goal", 500)],
        ):
            assert not gc.is_tracked(value), value


def test_a_name_found_is_still_every_identity_of_it(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        memory.append("s1", "task.created", {"task_id": "T-1", "title": "migrate the index"})
        memory.project()
        catalog = memory.projector.catalog
        key = catalog.recent_keys("s1", "task")[0]
        name = catalog.current(key).name
        assert key in catalog.keys_named(name)
        assert catalog.keys_named_many([name]) == {name: catalog.keys_named(name)}
