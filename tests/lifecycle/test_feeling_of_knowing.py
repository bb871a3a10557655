"""The feeling-of-knowing predictor: in-memory signals only, scoped, honest about staleness."""

from __future__ import annotations

from pathlib import Path

import pytest

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.projection.model import SearchDoc
from zaxy_agents.retrieval.derived import open_standalone
from zaxy_agents.retrieval.verbatim import VerbatimIndex


@pytest.fixture
def fabric(tmp_path: Path):
    with MemoryFabric.from_path(tmp_path / "loom", use_graph=False) as memory:
        memory.append("ops", "fact.asserted", {"subject": "ledger-service", "fact": "ledger-service runs on Kafka 3.6"})
        memory.append("ops", "transcript.turn", {"role": "user", "text": "the nightly reconciliation job is flaky"})
        memory.append("other", "fact.asserted", {"subject": "mobile-app", "fact": "mobile-app ships monthly"})
        yield memory


def test_predictions_follow_names_and_vocabulary(fabric) -> None:
    likely = fabric.feeling_of_knowing("What does ledger-service run on?", session="ops", record=False)
    assert likely["verdict"] == "likely" and likely["signals"]["entity_matches"] == ["ledger-service"]
    words = fabric.feeling_of_knowing("is the nightly reconciliation flaky", session="ops", record=False)
    assert words["verdict"] == "likely" and words["signals"]["term_coverage"] == 1.0
    partial = fabric.feeling_of_knowing("nightly weather forecast for Lisbon", session="ops", record=False)
    assert partial["verdict"] == "possible" and 0 < partial["signals"]["term_coverage"] < 0.35
    unknown = fabric.feeling_of_knowing("favourite colour of the mascot", session="ops", record=False)
    assert unknown["verdict"] == "unlikely" and unknown["score"] == 0.0


def test_scope_limits_what_counts_as_known(fabric) -> None:
    assert fabric.feeling_of_knowing("mobile-app release cadence", session="ops", record=False)["verdict"] == (
        "unlikely"
    )
    scoped = fabric.feeling_of_knowing("mobile-app release cadence", session="ops", scope=["other"], record=False)
    assert scoped["verdict"] == "likely" and scoped["scope"] == ["ops", "other"]
    empty = fabric.feeling_of_knowing("anything at all", session="brand-new", record=False)
    assert empty["verdict"] == "unlikely" and empty["reasons"] == ["memory is empty in this scope"]


def test_reports_lag_instead_of_catching_up_and_records_a_silent_marker(fabric) -> None:
    fabric.feeling_of_knowing("ledger", session="ops", record=False)
    fabric.append("ops", "fact.asserted", {"subject": "indexer", "fact": "indexer uses OpenSearch"})
    stale = fabric.feeling_of_knowing("OpenSearch cluster", session="ops")
    assert stale["projection_lag"] == 1 and stale["verdict"] == "unlikely"  # in-memory state, lag reported
    marker = fabric.resolve(stale["marker"])
    assert marker.type == "metacognition.fok.predicted" and marker.payload["verdict"] == "unlikely"
    hits = fabric.query("OpenSearch cluster unlikely", sessions=["ops"]).hits
    assert all(hit.event_type != "metacognition.fok.predicted" for hit in hits)
    with pytest.raises(InvalidRequestError):
        fabric.feeling_of_knowing("", session="ops")


def test_term_statistics_count_postings_per_session(tmp_path: Path) -> None:
    index = VerbatimIndex()
    listeners = open_standalone(tmp_path / "index", index)
    for seq in range(1, 101):
        index.add(SearchDoc("a" if seq % 2 else "b", seq, f"h{seq}", "note.recorded", "common words here", None, None,
                            None, "2026-01-01T00:00:00.000000Z"))  # fmt: skip
    assert index.term_statistics("common") == (100, {"common": 100})
    assert index.term_statistics("common", sessions=["a"]) == (50, {"common": 50})
    assert index.term_statistics("common", sessions=["nobody"]) == (0, {"common": 0})
    listeners.store.close()
