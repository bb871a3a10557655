"""Internal causal lane: does causal memory find the right explanations, and only those?

Deterministic fixtures (two incident sessions covering all seven relation types) are written through the
real engine — events, ``outcome.explained`` explanations and the producer's causal edges — plus distractors
that must never be returned as explanations: an uncited explanation, one citing a fabricated hash, one whose
cause was later invalidated (stale), one recorded after the ``as_of`` time of a query, and a hand-forged
``causal.edge.generated`` whose evidence does not resolve (it may be returned only flagged as uncited).

Metrics (each the pass rate of its checks; the lane passes at 1.0 on all of them):
``predecessor_hit``, ``successor_hit``, ``relation_match``, ``citation_coverage``, ``authority_boundary``,
``stale_distractor_rejection``. This is an internal regression lane, not an external benchmark.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zaxy_agents.checkout.extensions.causal_context import GUIDANCE
from zaxy_agents.fabric import MemoryFabric

from .lane_scoring import LaneScore

Ref = tuple[str, str]  # (entity name, entity type)
FAKE_HASH = "f" * 64


@dataclass
class Expected:
    source: str
    relation: str
    target: str
    path_length: int
    evidence: str  # name of the event whose citation the edge must carry


@dataclass
class Query:
    direction: str
    entity: Ref
    expected: list[Expected]
    distractors: list[str] = field(default_factory=list)
    relation: str | None = None
    depth: int = 1
    as_of: str | None = None  # a mark name


@dataclass
class Scenario:
    session: str
    steps: list[tuple[Any, ...]]
    queries: list[Query]
    checkout_query: str


DEPLOY = Scenario(
    session="causal-deploy",
    steps=[
        ("event", "token", "fact.asserted", {"key": "ci token expired", "fact": "the CI deploy token expired"}),
        ("event", "deploy", "command.completed", {"command": "make deploy", "exit_code": 1, "output": "401"}),
        ("explain", ("ci token expired", "fact"), ("make deploy #2", "command_run"), "caused", 0.9, "deploy"),
        ("event", "release", "task.updated", {"task_id": "release-1.4", "status": "blocked"}),
        ("explain", ("make deploy #2", "command_run"), ("release-1.4", "task"), "blocked", 0.8, "release"),
        ("event", "rotate", "command.completed", {"command": "vault rotate ci-token", "exit_code": 0}),
        (
            "explain",
            ("vault rotate ci-token #7", "command_run"),
            ("make deploy #2", "command_run"),
            "fixed",
            0.85,
            "rotate",
        ),
        ("mark", "before-disk"),
        ("event", "flaky", "fact.asserted", {"key": "flaky runner", "fact": "runner 3 is flaky"}),
        ("explain", ("flaky runner", "fact"), ("make deploy #2", "command_run"), "caused", 0.6, "deploy"),
        ("invalidate", ("flaky runner", "fact"), "runner 3 was healthy after all"),
        ("uncited", ("dns outage", "incident"), ("make deploy #2", "command_run"), "caused", 0.7),
        ("fabricated", ("cosmic rays", "incident"), ("make deploy #2", "command_run"), "caused", 0.7, "deploy"),
        ("forged", ("moon phase", "incident"), ("make deploy #2", "command_run"), "caused", 0.95, "deploy"),
        ("event", "disk", "fact.asserted", {"key": "disk full", "fact": "the deploy host disk was full"}),
        ("explain", ("disk full", "fact"), ("make deploy #2", "command_run"), "caused", 0.4, "disk"),
    ],
    queries=[
        Query(
            "predecessors",
            ("make deploy #2", "command_run"),
            [
                Expected("ci token expired", "caused", "make deploy #2", 1, "deploy"),
                Expected("vault rotate ci-token #7", "fixed", "make deploy #2", 1, "rotate"),
                Expected("disk full", "caused", "make deploy #2", 1, "disk"),
            ],
            distractors=["flaky runner", "dns outage", "cosmic rays", "moon phase"],
        ),
        Query(
            "predecessors",
            ("make deploy #2", "command_run"),
            [
                Expected("ci token expired", "caused", "make deploy #2", 1, "deploy"),
                Expected("vault rotate ci-token #7", "fixed", "make deploy #2", 1, "rotate"),
            ],
            distractors=["disk full", "flaky runner"],
            as_of="before-disk",
        ),
        Query(
            "successors",
            ("ci token expired", "fact"),
            [
                Expected("ci token expired", "caused", "make deploy #2", 1, "deploy"),
                Expected("make deploy #2", "blocked", "release-1.4", 2, "release"),
            ],
            depth=2,
        ),
        Query(
            "successors",
            ("make deploy #2", "command_run"),
            [Expected("make deploy #2", "blocked", "release-1.4", 1, "release")],
            relation="blocked",
        ),
        Query(
            "predecessors",
            ("release-1.4", "task"),
            [
                Expected("make deploy #2", "blocked", "release-1.4", 1, "release"),
                Expected("ci token expired", "caused", "make deploy #2", 2, "deploy"),
                Expected("vault rotate ci-token #7", "fixed", "make deploy #2", 2, "rotate"),
                Expected("disk full", "caused", "make deploy #2", 2, "disk"),
            ],
            distractors=["flaky runner", "dns outage", "cosmic rays", "moon phase"],
            depth=2,
        ),
    ],
    checkout_query="why did make deploy fail?",
)

LATENCY = Scenario(
    session="causal-latency",
    steps=[
        ("event", "flag", "fact.asserted", {"key": "batching flag on", "fact": "the batching feature flag is on"}),
        ("event", "commit", "file.edit.applied", {"path": "api/batch.py", "operation": "edit"}),
        ("explain", ("batching flag on", "fact"), ("api/batch.py", "file"), "enabled", 0.7, "commit"),
        ("event", "p95", "fact.asserted", {"key": "p95 latency", "fact": "p95 latency rose to 900 ms"}),
        ("explain", ("api/batch.py", "file"), ("p95 latency", "fact"), "regressed", 0.75, "p95"),
        ("event", "gc", "fact.asserted", {"key": "gc pauses", "fact": "GC pauses of 300 ms under batching"}),
        ("explain", ("gc pauses", "fact"), ("p95 latency", "fact"), "explained", 0.65, "gc"),
        ("event", "index", "command.completed", {"command": "psql -f add_index.sql", "exit_code": 0}),
        ("explain", ("psql -f add_index.sql #8", "command_run"), ("p95 latency", "fact"), "fixed", 0.8, "index"),
        ("event", "warm", "fact.asserted", {"key": "cache warmup", "fact": "the cache is warmed at boot"}),
        ("event", "cold", "fact.asserted", {"key": "cold start timeouts", "fact": "no cold start timeouts"}),
        ("explain", ("cache warmup", "fact"), ("cold start timeouts", "fact"), "prevented", 0.7, "cold"),
    ],
    queries=[
        Query(
            "predecessors",
            ("p95 latency", "fact"),
            [
                Expected("api/batch.py", "regressed", "p95 latency", 1, "p95"),
                Expected("gc pauses", "explained", "p95 latency", 1, "gc"),
                Expected("psql -f add_index.sql #8", "fixed", "p95 latency", 1, "index"),
                Expected("batching flag on", "enabled", "api/batch.py", 2, "commit"),
            ],
            depth=2,
        ),
        Query(
            "successors",
            ("batching flag on", "fact"),
            [
                Expected("batching flag on", "enabled", "api/batch.py", 1, "commit"),
                Expected("api/batch.py", "regressed", "p95 latency", 2, "p95"),
            ],
            depth=3,
        ),
        Query(
            "successors",
            ("cache warmup", "fact"),
            [Expected("cache warmup", "prevented", "cold start timeouts", 1, "cold")],
        ),
        Query(
            "predecessors",
            ("p95 latency", "fact"),
            [Expected("psql -f add_index.sql #8", "fixed", "p95 latency", 1, "index")],
            relation="fixed",
        ),
    ],
    checkout_query="why did p95 latency regress?",
)

SCENARIOS = (DEPLOY, LATENCY)


def run_causal_lane(eventloom_path: str | Path | None = None) -> dict[str, Any]:
    """Build the fixtures in a fresh Eventloom, run every query and score it."""
    score = LaneScore("causal")
    started = time.perf_counter()
    queries = 0
    with tempfile.TemporaryDirectory(prefix="zaxy-causal-lane-") as scratch:
        root = Path(eventloom_path) if eventloom_path else Path(scratch) / "loom"
        with MemoryFabric.from_path(root) as fabric:
            for scenario in SCENARIOS:
                names, marks = _build(fabric, scenario)
                for query in scenario.queries:
                    _score_query(fabric, scenario.session, query, names, marks, score)
                    queries += 1
                _score_checkout(fabric, scenario, score)
    return score.report(scenarios=len(SCENARIOS), queries=queries, took_s=round(time.perf_counter() - started, 3))


def _build(fabric: MemoryFabric, scenario: Scenario) -> tuple[dict[str, Any], dict[str, str]]:
    session = scenario.session
    names: dict[str, Any] = {}
    marks: dict[str, str] = {}
    for step in scenario.steps:
        kind = step[0]
        if kind == "event":
            _, name, event_type, payload = step
            names[name] = fabric.append(session, event_type, payload, actor="fixture")
        elif kind == "explain":
            _, cause, effect, relation, confidence, evidence = step
            fabric.explain_outcome(
                session,
                cause=_pointer(cause),
                effect=_pointer(effect),
                relation=relation,
                confidence=confidence,
                evidence=names[evidence].citation,
                actor="fixture",
            )
        elif kind == "mark":
            head = fabric.head(session)
            assert head is not None
            marks[step[1]] = next(iter(fabric.replay(session, head.seq, head.seq))).timestamp
        elif kind == "invalidate":
            _, target, reason = step
            fabric.invalidate(session, target[0], target[1], reason=reason, actor="fixture")
        elif kind == "uncited":
            _, cause, effect, relation, confidence = step
            payload = {"cause": _pointer(cause), "effect": _pointer(effect), "relation": relation}
            fabric.append(session, "outcome.explained", {**payload, "confidence": confidence}, actor="fixture")
        elif kind == "fabricated":
            _, cause, effect, relation, confidence, evidence = step
            fake = {"seq": names[evidence].seq, "hash": FAKE_HASH}
            payload = {"cause": _pointer(cause), "effect": _pointer(effect), "relation": relation}
            fabric.append(
                session, "outcome.explained", {**payload, "confidence": confidence, "evidence": fake}, actor="fixture"
            )
        elif kind == "forged":
            _, source, target, relation, confidence, evidence = step
            fabric.append(
                session,
                "causal.edge.generated",
                {
                    "source": _pointer(source),
                    "target": _pointer(target),
                    "relation_type": relation,
                    "graph_relation_type": f"causal_{relation}",
                    "confidence": confidence,
                    "causal_method": "hand_forged",
                    "review_status": "proposed",
                    "authority_status": "non_authoritative",
                    "evidence": {"seq": names[evidence].seq, "hash": FAKE_HASH},
                },
                actor="fixture",
            )
    return names, marks


def _score_query(
    fabric: MemoryFabric,
    session: str,
    query: Query,
    names: dict[str, Any],
    marks: dict[str, str],
    score: LaneScore,
) -> None:
    read = fabric.causal_predecessors if query.direction == "predecessors" else fabric.causal_successors
    label = f"{session}: {query.direction} of {query.entity[0]!r}" + (f" as of {query.as_of}" if query.as_of else "")
    result = read(
        session,
        query.entity[0],
        entity_type=query.entity[1],
        relation_type=query.relation,
        depth=query.depth,
        as_of=marks[query.as_of] if query.as_of else None,
    )
    hits = result["results"]
    metric = "predecessor_hit" if query.direction == "predecessors" else "successor_hit"
    for expected in query.expected:
        pair = [h for h in hits if h["source"]["name"] == expected.source and h["target"]["name"] == expected.target]
        found = score.check(metric, bool(pair), f"{label}: {expected.source} -> {expected.target} found")
        if found:
            hit = pair[0]
            score.check(
                "relation_match",
                hit["relation_type"] == expected.relation and hit["path_length"] == expected.path_length,
                f"{label}: {expected.source} -> {expected.target} {expected.relation}, {expected.path_length} hops",
            )
            score.check(
                "citation_coverage",
                hit["evidence_resolves"] and hit["evidence"]["citation"] == names[expected.evidence].citation,
                f"{label}: {expected.source} -> {expected.target} cites {names[expected.evidence].citation}",
            )
    for hit in hits:
        score.check(
            "authority_boundary",
            hit["review_status"] == "proposed" and hit["authority_status"] == "non_authoritative",
            f"{label}: {hit['citation']} is proposed and non-authoritative",
        )
        if not {hit["source"]["name"], hit["target"]["name"]} & set(query.distractors):
            score.check("citation_coverage", hit["evidence_resolves"], f"{label}: {hit['citation']} evidence resolves")
    for distractor in query.distractors:
        returned = [h for h in hits if distractor in (h["source"]["name"], h["target"]["name"])]
        score.check(
            "stale_distractor_rejection",
            all(not h["evidence_resolves"] for h in returned),
            f"{label}: distractor {distractor!r} is not returned as a cited explanation",
        )


def _score_checkout(fabric: MemoryFabric, scenario: Scenario, score: LaneScore) -> None:
    packet = fabric.checkout(scenario.checkout_query, session=scenario.session)
    block = packet.diagnostics.model_dump().get("causal_context", {})
    label = f"{scenario.session}: checkout {scenario.checkout_query!r}"
    score.check("authority_boundary", block.get("count", 0) > 0, f"{label}: causal_context found edges")
    score.check("authority_boundary", block.get("non_authoritative") is True, f"{label}: block is non-authoritative")
    score.check("authority_boundary", GUIDANCE in packet.guidance.trust, f"{label}: guidance says explanatory only")
    edge_events = {"causal.edge.generated", "outcome.explained"}
    cited_types = {item.citation: item.event_type for item in packet.provenance}
    score.check(
        "authority_boundary",
        not any(cited_types.get(fact.citation) in edge_events for fact in packet.current_facts),
        f"{label}: no current fact comes from a causal edge or explanation",
    )
    for edge in block.get("edges", []):
        if edge["uncited"]:
            score.check(
                "stale_distractor_rejection",
                edge["trust"] == 0.0,
                f"{label}: uncited edge {edge['citation']} carries no trust",
            )


def _pointer(ref: Ref) -> dict[str, str]:
    return {"name": ref[0], "entity_type": ref[1]}
