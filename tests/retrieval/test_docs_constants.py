"""docs/retrieval.md states the engine's parameters in prose and tables; these are the values the code runs with.

A change to a weight, a bound or a threshold fails here until the page says the new value (the behaviour behind
each is tested elsewhere in tests/retrieval; this keeps the page from drifting away from it)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO_ROOT
from zaxy_agents.retrieval import (
    ann,
    engine,
    features,
    graph_lanes,
    posting_codec,
    postings,
    verbatim_search,
    verbatim_write,
)
from zaxy_agents.retrieval.profiles import LANES, PROFILES
from zaxy_agents.retrieval.ranking import RETRIEVAL_PROFILES
from zaxy_agents.retrieval.verbatim import Config as VerbatimConfig
from zaxy_agents.salience import gate

_CONFIG = VerbatimConfig()
# caption, context window, segment; then the borrows: adjacent, two away, the previous event when it asks a question
_VERBATIM = (_CONFIG.caption_weight, _CONFIG.ctx_weight, _CONFIG.session_weight)
_VERBATIM += (_CONFIG.neighbour_weight, _CONFIG.hop2_weight, _CONFIG.qa_weight)
_STATED = (0.5, 0.5, 0.2, 0.5, 0.5, 1.1)
PAGE = " ".join((REPO_ROOT / "docs" / "retrieval.md").read_text().split())  # prose with its line breaks folded


def _table_rows(heading: str) -> dict[str, list[str]]:
    """The rows of the first table after the line starting with ``heading``, keyed by their first cell's name."""
    text = (REPO_ROOT / "docs" / "retrieval.md").read_text().split(heading, 1)[1]
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        name = re.match(r"`(\w+)`", cells[0])
        if name:
            rows[name[1]] = cells[1:]
    return rows


def test_the_lane_preset_table_is_the_presets() -> None:
    rows = _table_rows("## Fusion and profiles")
    assert set(rows) == set(PROFILES)
    for name, preset in PROFILES.items():
        weights, notes = rows[name][: len(LANES)], rows[name][len(LANES)]
        assert [float(w) for w in weights] == [preset.weights[lane] for lane in LANES], name
        assert f"depth {preset.graph_depth}" in notes or (preset.graph_depth == 2 and "depth" not in notes), name
        if preset.candidates != 50:
            assert f"{preset.candidates} candidates" in notes, name
        if preset.recency_boost:
            assert f"recency boost {preset.recency_boost}" in notes, name
        if name == "cognitive":
            assert f"salience boost {preset.salience_boost}" in notes


def test_the_retrieval_profile_table_is_the_policies() -> None:
    rows = _table_rows("## Retrieval profiles: the 2.2 ranking features")
    assert set(rows) == set(RETRIEVAL_PROFILES)
    for name, policy in RETRIEVAL_PROFILES.items():
        ppr, salience, floor, cues = rows[name][:4]
        assert ppr == ("on" if policy.ppr else "off"), name
        assert salience.startswith("on" if policy.salience else "off"), name
        assert floor == (str(policy.attenuation_floor) if policy.attenuation_floor else "off"), name
        assert cues.startswith(str(policy.cue_weight) if policy.cue_weight else "off"), name


@pytest.mark.parametrize(
    ("sentence", "value", "stated"),
    [
        ("power iteration (alpha 0.85, at most 30 iterations)", graph_lanes.PPR_ALPHA, 0.85),
        ("at most 30 iterations", graph_lanes.PPR_ITERATIONS, 30),
        ("at most 5,000 nodes", graph_lanes.PPR_MAX_NODES, 5000),
        ("nodes of degree > 50", graph_lanes.HUB_DEGREE, 50),
        ("word n-grams of the query, up to 5 words", graph_lanes.MAX_NGRAM, 5),
        ("(up to 384 bytes each)", posting_codec.RUN_BYTES, 384),
        ("(frequent terms: rows of up to 900 bytes", postings.SEAL_BYTES, 900),
        ("*segment* (16,384 consecutive doc ids)", 1 << posting_codec.SEGMENT_BITS, 16384),
        ("56-byte records", features.FEATURE.itemsize, 56),
        ("in blocks of 256", features.BLOCK, 256),
        ("every 1,024 events or when a batch of 256 arrives", verbatim_write.TAIL_LIMIT, 1024),
        ("every 1,024 events or when a batch of 256 arrives", verbatim_write.DIRECT_MIN, 256),
        ("Past `min(2000, 40 x k)` matching events", verbatim_search.SEED_LIMIT, 2000),
        ("Past `min(2000, 40 x k)` matching events", verbatim_search.SEEDS_PER_RESULT, 40),
        ("a thread longer than 2,000 events is not read whole", verbatim_search.GROUP_LIMIT, 2000),
        ("exact up to `ZAXY_ANN_THRESHOLD` (100,000) vectors", ann.ANN_THRESHOLD, 100_000),
        ("M 32, efConstruction 128, ef 256", (ann.CONNECTIVITY, ann.EXPANSION_ADD), (32, 128)),
        ("M 32, efConstruction 128, ef 256", ann.EXPANSION_SEARCH, 256),
        ("proposes 3 x k candidates", ann.OVERSAMPLE, 3),
        (
            "+ 0.5 x caption BM25 + 0.5 x BM25 of a ±2 context window + 0.2 x BM25 of the segment + the best of "
            "0.5 x an adjacent event's score / 0.5 x the score two events away / 1.1 x the previous event's score",
            _VERBATIM,
            _STATED,
        ),
        ("events by a speaker named in the query x1.5", 1 + VerbatimConfig().speaker_boost, 1.5),
        ("prefer events with a temporal expression (x1.6)", 1 + VerbatimConfig().temporal_boost, 1.6),
        ("prefers events dated just after it (x3)", 1 + VerbatimConfig().date_boost, 3.0),
        ("questions carry few facts (x(1 - 0.4 x question share))", VerbatimConfig().question_penalty, 0.4),
        ("events in its window gain 6 x the window's IDF", VerbatimConfig().date_term_weight, 6.0),
        ("bounded traversal (depth 1-3, set by the profile)", {p.graph_depth for p in PROFILES.values()}, {1, 2, 3}),
        ("20,000 rows stale", ann.STALE_ROWS, 20_000),
        (">= 0.85 with an event of the same type is redundant, >= 0.5 reinforcing", gate.REDUNDANT, 0.85),
        (">= 0.85 with an event of the same type is redundant, >= 0.5 reinforcing", gate.REINFORCING, 0.5),
        ("`rerank_weight` is 0.15 in every profile", {p.rerank_weight for p in PROFILES.values()}, {0.15}),
        ("(0.4 in every profile, 0 switches it off", {p.expansion_weight for p in PROFILES.values()}, {0.4}),
        ("the top `candidates` (50) fused hits", PROFILES["balanced"].candidates, 50),
        ("(tripled, like the `graph` lane's, when the query names an entity", engine.ANCHORED_GRAPH_BOOST, 3.0),
        ("over the seeds' neighbourhood up to 3 hops", graph_lanes.personalized_pagerank.__defaults__, (3,)),
    ],
)
def test_a_stated_parameter_is_the_one_the_engine_runs_with(sentence: str, value: object, stated: object) -> None:
    assert sentence in PAGE, f"docs/retrieval.md no longer says {sentence!r}: update this test with the page"
    assert value == stated, f"the engine runs with {value!r} but docs/retrieval.md says {sentence!r}"


def test_salience_halves_in_30_days_from_the_last_use_against_the_newest_event(tmp_path) -> None:
    """'Salience = recency decay (30-day half-life from the last use, against the newest event in memory ...) x
    reinforcement (1 + ln(1 + weight)) x importance'."""
    import math
    from datetime import UTC, datetime, timedelta

    from zaxy_agents.fabric import MemoryFabric
    from zaxy_agents.instants import format_instant

    month_ago = format_instant(datetime.now(UTC) - timedelta(days=30))
    with MemoryFabric.from_path(tmp_path / ".eventloom") as memory:
        memory.append("ops", "fact.asserted", {"key": "old port", "fact": "old port is 7001", "valid_from": month_ago})
        memory.append("ops", "fact.asserted", {"key": "new port", "fact": "new port is 8080"})
        rows = {row["name"]: row for row in memory.checkout("port", session="ops").diagnostics.model_dump()["salience"]}
        assert rows["old port"]["recency"] == pytest.approx(0.5, abs=0.001)
        assert rows["new port"]["recency"] == pytest.approx(1.0, abs=0.001)
        memory.append("ops", "memory.reinforced", {"entity_name": "new port", "entity_type": "fact", "weight": 1.0})
        rows = {row["name"]: row for row in memory.checkout("port", session="ops").diagnostics.model_dump()["salience"]}
        new = rows["new port"]
        assert new["reinforcement"] == pytest.approx(1 + math.log1p(1.0), abs=1e-4)
        assert new["salience"] == pytest.approx(
            min(1.0, new["importance"] * new["recency"] * new["reinforcement"]), abs=1e-3
        )
