"""Keyword search over entities on the embedded graph: the keyword-index filter answers what the full scan did.

``search_before`` (benchmarks/entity_search_bench.py) is the implementation before the filter: every valid
version's text read and matched. On a realistic memory of 2,500 events, every query must get the same answer from
``MemoryFabric.search_entities`` (filter attached): common and rare words, names, ties, stop words and non-ASCII
words (no lookup: the scan), other times (``as_of``), one session, and after events were erased.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from benchmarks.entity_search_bench import search_before
from benchmarks.realistic_stream import RealisticStream
from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval.entity_words import IndexedEntityWords

EVENTS = 2500


def _as_before(fabric: MemoryFabric, text: str, *, session: str | None = None, as_of: str | None = None) -> list:
    store = fabric.projector.store
    found = search_before(store, text, as_of=as_of, limit=10 if session is None else 10_000)
    if session is not None:  # the copy asks every session: keep this one's, in order
        found = [hit for hit in found if hit[0].session == session][:10]
    return found


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> MemoryFabric:
    root = tmp_path_factory.mktemp("entity-search") / "loom"
    fabric = MemoryFabric.from_path(root, durability="batch")
    for session, drafts in RealisticStream(seed=EVENTS).sessions(EVENTS):
        fabric.append_many(session, drafts)
    fabric.project()
    yield fabric
    fabric.close()


def _queries(fabric: MemoryFabric, count: int) -> list[str]:
    store = fabric.projector.store
    rows = store._rows("MATCH (e:Entity) RETURN e.id, e.name ORDER BY e.id")
    picked = random.Random(5).sample(rows, count)
    texts = store._texts_of([row[0] for row in picked])
    asked = []
    for version_id, name in picked:
        words = re.findall(r"\w+", texts[version_id][0]) or name.split()
        asked += [name, " ".join(name.split()[:2]), words[-1], " ".join(words[:3])]
    return [*asked, "T-1", "the", "pytest", "turn", "über café", "it is the", "tests py", "  ...  ", "zzzz nothing"]


def test_the_index_filter_answers_what_the_full_scan_did(memory: MemoryFabric) -> None:
    store = memory.projector.store
    moments = sorted(row[0] for row in store._rows("MATCH (e:Entity) RETURN e.valid_from"))
    sessions = sorted(memory.projector.catalog.sessions)
    looked_up = 0
    for index, text in enumerate(_queries(memory, 12)):
        as_of = moments[len(moments) * (index % 3) // 3] if index % 4 == 0 else None
        session = sessions[index % len(sessions)] if index % 5 == 0 else None
        expected = _as_before(memory, text, session=session, as_of=as_of)
        assert memory.search_entities(text, session=session, as_of=as_of, limit=10) == expected, (text, as_of)
        looked_up += store._entity_words.versions_with(re.findall(r"\w+", text.casefold()), None) is not None
    assert looked_up > 30  # most queries went through the index (the rest: stop words, no ASCII word)
    # ties: many versions score the same, the later source event first, then the smaller id
    tied = memory.search_entities("pytest", limit=50)
    assert len({score for _, score in tied}) == 1 and tied == search_before(store, "pytest", limit=50)


def test_erased_entities_are_not_found_either_way(memory: MemoryFabric) -> None:
    session = sorted(memory.projector.catalog.sessions)[0]
    top, _ = memory.search_entities("pytest tests", session=session)[0]
    memory.erase_events(session, [top.source_event_seq], reason="test")
    memory.project()
    after = memory.search_entities(top.name, session=session, limit=10)
    assert top.id not in {version.id for version, _ in after}
    assert after == _as_before(memory, top.name, session=session)
    assert memory.search_entities("pytest tests", limit=10) == search_before(
        memory.projector.store, "pytest tests", limit=10
    )


def test_what_the_index_cannot_tell(tmp_path: Path) -> None:
    """Stop words and non-ASCII words have no lookup (``None``: the store scans). The blind spot the module
    documents: a word glued to another by an apostrophe is indexed as one word, so the index does not name it."""
    with MemoryFabric.from_path(tmp_path / "loom") as fabric:
        fabric.append("s", "fact.asserted", {"subject": "owner", "predicate": "is", "object": "Pat O'Neil"})
        fabric.append("s", "fact.asserted", {"subject": "café", "predicate": "open", "object": "über early"})
        assert "café open über early" in [v.summary for v, _ in fabric.search_entities("café")]
        words = fabric.projector.store._entity_words
        assert isinstance(words, IndexedEntityWords)
        assert words.versions_with(["the"], None) is None and words.versions_with(["日本"], None) is None
        assert words.versions_with(["oneil"], None)  # how the analyser reads O'Neil
        assert words.versions_with(["neil"], None) == set()  # so "neil" alone is not named (the scan found it)
        assert "owner is Pat O'Neil" in [v.summary for v, _ in search_before(fabric.projector.store, "neil")]
        assert fabric.search_entities("owner", limit=0) == []
        with pytest.raises(InvalidRequestError) as info:
            fabric.search_entities("owner", limit=-1)
        assert info.value.field == "limit"
