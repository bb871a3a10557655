"""Causal reads, checkout extensions, log proposals and the causal producer, against baselines in the same run.

A mixed stream of events (tasks, decisions, facts, commands, edits, turns, tool calls) plus ``--edges`` causal
explanations chaining facts together and ``--candidates`` consolidation candidates. Prints:

- causal predecessors (depth 2, in-memory catalog) vs the same traversal in the Kuzu store (``fabric.traverse``
  restricted to causal relation types): p50/p95 and the ratio;
- checkout latency with the causal/consolidation extensions vs with them switched off (overhead ratio), each
  checkout after a fresh append (as in an agent loop, so nothing is served from a memo);
- ``propose_from_log`` (dry run) vs a plain replay of the same events;
- appending an ``outcome.explained`` (validation + producer + edge append) vs appending a plain event.

Usage: python benchmarks/cognitive_bench.py [--events 10000] [--edges 1000] [--candidates 200] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.projection_bench import mixed_stream
from zaxy_agents.causal.taxonomy import CAUSAL_RELATIONS
from zaxy_agents.fabric import MemoryFabric


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    pick = lambda q: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)  # noqa: E731
    return {"p50_ms": pick(0.5), "p95_ms": pick(0.95)}


def _timed(function, repeat: int) -> list[float]:
    samples = []
    for index in range(repeat):
        started = time.perf_counter()
        function(index)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def run(events: int, edges: int, candidates: int, queries: int) -> dict:
    rng = random.Random(5)
    report: dict = {"events": events, "causal_edges": edges, "candidates": candidates}
    with (
        tempfile.TemporaryDirectory(prefix="zaxy-cognitive-bench-") as tmp,
        MemoryFabric.from_path(Path(tmp) / "loom", durability="batch") as fabric,
    ):
        stream = mixed_stream(events, seed=3)
        for offset in range(0, events, 1000):
            fabric.append_many("bench", stream[offset : offset + 1000])
        facts = [f"incident {i}" for i in range(max(2, edges // 2))]
        anchors = fabric.append_many(
            "bench", [{"type": "fact.asserted", "payload": {"key": name, "fact": f"{name} happened"}} for name in facts]
        )
        explained = []
        for index in range(edges):
            cause, effect = rng.sample(range(len(facts)), 2)
            explained.append(
                {
                    "type": "outcome.explained",
                    "payload": {
                        "cause": {"name": facts[cause], "entity_type": "fact"},
                        "effect": {"name": facts[effect], "entity_type": "fact"},
                        "relation": CAUSAL_RELATIONS[index % len(CAUSAL_RELATIONS)],
                        "confidence": round(rng.uniform(0.3, 0.95), 2),
                        "evidence": {"seq": anchors[effect].seq, "hash": anchors[effect].hash},
                    },
                }
            )
        for offset in range(0, len(explained), 500):
            fabric.append_many("bench", explained[offset : offset + 500])
        for index in range(candidates):
            source = anchors[index % len(anchors)]
            fabric.consolidation_candidate(
                "bench",
                candidate_type=("episode", "claim", "procedure")[index % 3],
                title=f"candidate {index}",
                summary=f"summary of candidate {index}",
                source_events=[source.citation],
                confidence=0.6,
            )
        fabric.project()
        fabric.projector.flush(timeout=None)
        report["causal_edges_projected"] = (
            fabric.projector.derived.reader()
            .execute(
                "SELECT count(*) FROM cat_edges e JOIN cat_types r ON r.tid = e.rtid "
                "WHERE r.name LIKE 'causal\\_%' ESCAPE '\\'"
            )
            .fetchone()[0]
        )

        picks = [facts[rng.randrange(len(facts))] for _ in range(queries)]
        causal_types = [f"causal_{relation}" for relation in CAUSAL_RELATIONS]
        ours = _timed(lambda i: fabric.causal_predecessors("bench", picks[i], entity_type="fact", depth=2), queries)
        kuzu = _timed(
            lambda i: fabric.traverse("bench", picks[i], "fact", depth=2, relation_types=causal_types), queries
        )
        report["causal_predecessors_depth2"] = {
            "catalog": _percentiles(ours),
            "kuzu_traverse_baseline": _percentiles(kuzu),
            "ratio_p50": round(_percentiles(kuzu)["p50_ms"] / max(_percentiles(ours)["p50_ms"], 1e-6), 1),
        }

        questions = [f"why did {picks[i]} happen?" for i in range(min(queries, 100))]
        fabric.checkout("warm up", session="bench")

        def turn(index: int) -> list[float]:
            """One agent turn: something new is appended (not timed), then a checkout (timed)."""
            fabric.append("bench", "transcript.turn", {"role": "user", "text": questions[index]})
            fabric.project(["bench"])
            return _timed(lambda _: fabric.checkout(questions[index], session="bench"), 1)

        saved = fabric.features
        with_ext, without = [], []
        try:
            for index in range(len(questions)):  # alternate, so both see the same log sizes and machine load
                fabric.features = saved
                with_ext += turn(index)
                fabric.features = saved.without_checkout_extensions()
                without += turn(index)
        finally:
            fabric.features = saved
        report["checkout"] = {
            "with_extensions": _percentiles(with_ext),
            "without_extensions": _percentiles(without),
            "overhead_ratio_p50": round(_percentiles(with_ext)["p50_ms"] / _percentiles(without)["p50_ms"], 3),
        }

        head = fabric.head("bench")
        assert head is not None
        window = min(head.seq, 5000)
        propose = _timed(lambda _: fabric.consolidation_propose_from_log("bench", max_events=window, dry_run=True), 5)
        replay = _timed(lambda _: list(fabric.replay("bench", head.seq - window + 1)), 5)
        report["propose_from_log"] = {
            "events_scanned": window,
            "p50_ms": _percentiles(propose)["p50_ms"],
            "replay_baseline_p50_ms": _percentiles(replay)["p50_ms"],
            "ratio_vs_replay": round(_percentiles(propose)["p50_ms"] / _percentiles(replay)["p50_ms"], 2),
        }

        evidence = anchors[0]
        payload = {
            "cause": {"name": facts[1], "entity_type": "fact"},
            "effect": {"name": facts[0], "entity_type": "fact"},
            "relation": "caused",
            "confidence": 0.8,
            "evidence": {"seq": evidence.seq, "hash": evidence.hash},
        }
        producer = _timed(lambda _: fabric.append("appends", "outcome.explained", payload), 200)
        plain = _timed(lambda _: fabric.append("appends", "note.added", payload), 200)
        report["append_outcome_explained"] = {
            "with_producer": _percentiles(producer),
            "plain_append_baseline": _percentiles(plain),
            "ratio_p50": round(_percentiles(producer)["p50_ms"] / _percentiles(plain)["p50_ms"], 2),
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--edges", type=int, default=1_000)
    parser.add_argument("--candidates", type=int, default=200)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = run(args.events, args.edges, args.candidates, args.queries)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    causal = report["causal_predecessors_depth2"]
    print(
        f"{report['events']} events, {report['causal_edges_projected']} causal edges, {report['candidates']} candidates"
    )
    print(
        f"causal predecessors depth 2: catalog p50 {causal['catalog']['p50_ms']} ms / p95 {causal['catalog']['p95_ms']}"
        f" ms; Kuzu traverse p50 {causal['kuzu_traverse_baseline']['p50_ms']} ms ({causal['ratio_p50']}x slower)"
    )
    checkout = report["checkout"]
    print(
        f"checkout p50 {checkout['with_extensions']['p50_ms']} ms with extensions, "
        f"{checkout['without_extensions']['p50_ms']} ms without (x{checkout['overhead_ratio_p50']})"
    )
    propose = report["propose_from_log"]
    print(
        f"propose_from_log over {propose['events_scanned']} events: p50 {propose['p50_ms']} ms, plain replay "
        f"{propose['replay_baseline_p50_ms']} ms (x{propose['ratio_vs_replay']})"
    )
    appends = report["append_outcome_explained"]
    print(
        f"append outcome.explained (+ producer, + edge): p50 {appends['with_producer']['p50_ms']} ms, plain append "
        f"{appends['plain_append_baseline']['p50_ms']} ms (x{appends['ratio_p50']})"
    )


if __name__ == "__main__":
    main()
