"""Fused retrieval through the fabric on a real log: citations, supersession, as-of, lanes, failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric


@pytest.fixture
def memory(tmp_path: Path):
    with MemoryFabric.from_path(tmp_path / "loom", embedder="hashing:128") as fabric:
        fabric.append("proj", "task.created", {"task_id": "T-7", "title": "Migrate billing to Postgres"})
        fabric.append(
            "proj",
            "decision.recorded",
            {"decision": "Use pgbouncer for connection pooling", "topic": "pooling", "task_id": "T-7"},
        )
        fabric.append(
            "proj", "fact.asserted", {"subject": "billing db", "predicate": "host", "object": "db-old.internal"}
        )
        fabric.append(
            "proj", "command.completed", {"command": "alembic upgrade head", "exit_code": 0, "task_id": "T-7"}
        )
        fabric.append(
            "proj", "fact.asserted", {"subject": "billing db", "predicate": "host", "object": "db-new.internal"}
        )
        fabric.append("proj", "transcript.turn", {"role": "user", "text": "remember that billing runs nightly"})
        yield fabric


def test_every_hit_is_cited_and_explained(memory: MemoryFabric) -> None:
    response = memory.query("billing database host")
    assert response.hits
    for hit in response.hits:
        assert memory.resolve(hit.citation).seq == hit.seq
        assert hit.score_explanation["fusion"].startswith("weighted reciprocal rank")
        assert set(hit.score_explanation["lane_scores"]) <= {"exact", "keyword", "vector", "graph", "ppr", "verbatim"}


def test_superseded_facts_are_excluded_and_counted(memory: MemoryFabric) -> None:
    response = memory.query("billing db host")
    texts = [hit.text for hit in response.hits]
    assert any("db-new.internal" in text for text in texts)
    assert not any("db-old.internal" in text for text in texts)
    assert response.superseded_excluded >= 1
    with_history = memory.query("billing db host", include_superseded=True)
    old = [hit for hit in with_history.hits if "db-old" in hit.text]
    assert old and old[0].status == "superseded"


def test_excluded_hits_can_be_counted_without_reading_their_text(memory: MemoryFabric) -> None:
    """Checkout only counts superseded hits: it asks for them unread, and gets the same hits and counts."""
    memory.project()
    read = memory.retriever.search("billing db host", sessions=["proj"], k=8)
    unread = memory.retriever.search("billing db host", sessions=["proj"], k=8, read_excluded=False)
    assert [(h.seq, h.status, h.text, h.hash) for h in unread.hits] == [
        (h.seq, h.status, h.text, h.hash) for h in read.hits
    ]
    assert read.excluded and [(h.seq, h.status) for h in unread.excluded] == [(h.seq, h.status) for h in read.excluded]
    assert any("db-old.internal" in h.text for h in read.excluded)
    packet = memory.checkout("billing db host", session="proj")
    assert packet.diagnostics.superseded_contexts_excluded == len(read.excluded)
    assert "db-old.internal" not in packet.prompt


def test_as_of_returns_what_was_true_then(memory: MemoryFabric) -> None:
    first_fact = memory.log.get("proj", 3)
    response = memory.query("billing db host", as_of=first_fact.timestamp)
    texts = " ".join(hit.text for hit in response.hits)
    assert "db-old.internal" in texts and "db-new.internal" not in texts


def test_graph_lanes_reach_related_entities(memory: MemoryFabric) -> None:
    response = memory.query("T-7", k=10, profile="recall")
    lanes = {lane for hit in response.hits for lane in hit.score_explanation["lane_scores"]}
    assert "exact" in lanes and "graph" in lanes
    related = {hit.event_type for hit in response.hits if "graph" in hit.score_explanation["lane_scores"]}
    assert {"decision.recorded", "command.completed"} & related


def test_vector_lane_uses_the_configured_embedder(memory: MemoryFabric) -> None:
    memory.embed_pending()
    response = memory.query("nightly billing runs")
    assert response.embedding_lag == 0
    assert any("vector" in hit.score_explanation["lane_scores"] for hit in response.hits)
    result = memory.re_embed()
    assert result["model"] == "zaxy-hashing-128@1" and result["embedded"] >= 5 and result["lag"] == 0


def test_a_failing_lane_degrades_to_a_warning(memory: MemoryFabric, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args, **kwargs):
        raise RuntimeError("index corrupted")

    monkeypatch.setattr(memory.retriever.keyword, "search", broken)
    response = memory.query("pgbouncer pooling")
    assert any("keyword lane failed" in warning for warning in response.warnings)
    assert response.hits  # the other lanes still answer


def test_unknown_profile_is_a_structured_error(memory: MemoryFabric) -> None:
    with pytest.raises(InvalidRequestError) as info:
        memory.query("x", profile="fastest")
    assert info.value.field == "profile"


def test_profiles_all_work(memory: MemoryFabric) -> None:
    for profile in ("balanced", "precision", "recall", "temporal", "cognitive"):
        assert memory.query("pooling decision", profile=profile).hits


def test_verbatim_works_without_a_graph(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom", use_graph=False) as fabric:
        fabric.append("s", "transcript.turn", {"role": "user", "text": "the deploy key lives in vault"})
        response = fabric.verbatim("where is the deploy key")
        assert response.hits and response.hits[0].seq == 1
        assert fabric.projector.store is None


def test_batched_catalog_reads_equal_one_by_one(memory: MemoryFabric) -> None:
    """The engine reads the versions of all its hits in one query (``events_versions`` / ``versions``): the
    answers must be exactly the per-key reads, for events with versions, without, and unknown."""
    memory.query("billing db host")  # projects the events
    catalog = memory.projection.projector.catalog
    keys = [("proj", seq) for seq in range(1, 9)] + [("nosuch", 1), ("proj", 3)]
    batched = catalog.events_versions(keys)
    ids = [v.id for versions in batched.values() for v in versions] + ["no-such-version"]
    catalog.refresh()
    catalog._clear()  # cold: the one-by-one reads below go to the database
    assert batched == {key: catalog.event_versions(*key) for key in keys}
    assert any(batched.values()) and batched[("nosuch", 1)] == []
    versions = catalog.versions(ids)
    catalog._clear()
    assert versions == {version_id: catalog.version(version_id) for version_id in ids}
    assert versions["no-such-version"] is None
