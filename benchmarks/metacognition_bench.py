"""Metacognition cost against baselines in the same run: the checkout extension and the reads.

A mixed stream of ``--events`` events in two sessions (facts that partly contradict each other across them) plus
``--unknowns`` known unknowns, ``--assessments`` confidence assessments and ``--requests`` re-verification
requests. Prints:

- checkout latency with every extension vs with the ``metacognition`` extension switched off (overhead ratio),
  each checkout after a fresh append (as in an agent loop, so nothing is served from a memo);
- ``known_unknowns``, ``reverification_needs`` (both sessions: conflict clusters over every claim) and
  ``claim_confidence`` p50/p95, each as a ratio of the same run's checkout p50.

Usage: python benchmarks/metacognition_bench.py [--events 10000] [--unknowns 200] [--assessments 500]
[--requests 100] [--queries 100] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cognitive_bench import _percentiles, _timed
from benchmarks.projection_bench import mixed_stream
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.metacognition.contracts import request_id, unknown_id

SESSIONS = ("bench", "bench-b")


def _batch(kind: str, payloads: list[dict]) -> list[dict]:
    return [{"type": kind, "payload": payload} for payload in payloads]


def run(events: int, unknowns: int, assessments: int, requests: int, queries: int) -> dict:
    report: dict = {"events": events, "unknowns": unknowns, "assessments": assessments, "requests": requests}
    with (
        tempfile.TemporaryDirectory(prefix="zaxy-metacognition-bench-") as tmp,
        MemoryFabric.from_path(Path(tmp) / "loom", durability="batch") as fabric,
    ):
        stream = mixed_stream(events, seed=7)
        half = events // 2
        for offset in range(0, events, 1000):
            fabric.append_many(SESSIONS[offset >= half], stream[offset : offset + 1000])
        claims = [f"setting {i}" for i in range(200)]
        anchors = fabric.append_many(
            "bench", _batch("fact.asserted", [{"key": name, "fact": f"{name} is on"} for name in claims])
        )
        fabric.append_many(  # every fourth claim is contradicted by the other session
            "bench-b", _batch("fact.asserted", [{"key": name, "fact": f"{name} is off"} for name in claims[::4]])
        )
        cite = [{"seq": a.seq, "hash": a.hash} for a in anchors]
        marker = {"authority_status": "non_authoritative"}
        questions = [f"what is the value of {claims[i % len(claims)]} in region {i}?" for i in range(unknowns)]
        fabric.append_many(
            "bench",
            _batch(
                "metacognition.known_unknown.recorded",
                [
                    {
                        "unknown_id": unknown_id(q, f"fact:{claims[i % len(claims)]}"),
                        "question": q,
                        "reason": "not recorded anywhere",
                        "claim_key": f"fact:{claims[i % len(claims)]}",
                        "source_events": [cite[i % len(cite)]],
                        "status": "open",
                        **marker,
                    }
                    for i, q in enumerate(questions)
                ],
            ),
        )
        fabric.append_many(
            "bench",
            _batch(
                "metacognition.confidence.assessed",
                [
                    {
                        "claim_key": f"fact:{claims[i % len(claims)]}",
                        "confidence": round((i % 10) / 10, 1),
                        "rationale": "periodic review",
                        "source_events": [cite[i % len(cite)]],
                        **marker,
                    }
                    for i in range(assessments)
                ],
            ),
        )
        fabric.append_many(
            "bench",
            _batch(
                "metacognition.reverification.requested",
                [
                    {
                        "request_id": request_id(f"fact:{claims[i % len(claims)]}", f"audit {i}"),
                        "claim_key": f"fact:{claims[i % len(claims)]}",
                        "reason": f"audit {i}",
                        "source_events": [cite[i % len(cite)]],
                        "status": "open",
                        **marker,
                    }
                    for i in range(requests)
                ],
            ),
        )
        fabric.project()
        fabric.checkout("warm up", session="bench")
        asks = [f"is {claims[i % len(claims)]} on?" for i in range(queries)]

        def turn(index: int) -> list[float]:
            """One agent turn: something new is appended (not timed), then a checkout (timed)."""
            fabric.append("bench", "transcript.turn", {"role": "user", "text": asks[index]})
            fabric.project(["bench"])
            return _timed(lambda _: fabric.checkout(asks[index], session="bench", scope=["bench-b"]), 1)

        saved = fabric.features
        without_meta = replace(
            saved,
            checkout_extensions=tuple(pair for pair in saved.checkout_extensions if pair[0] != "metacognition"),
        )
        if without_meta.checkout_extensions == saved.checkout_extensions:
            raise SystemExit("metacognition_bench: no checkout extension named 'metacognition' to leave out")
        with_ext, without = [], []
        try:
            for index in range(queries):  # alternate, so both see the same log sizes and machine load
                fabric.features = saved
                with_ext += turn(index)
                fabric.features = without_meta
                without += turn(index)
        finally:
            fabric.features = saved
        checkout_p50 = _percentiles(with_ext)["p50_ms"]
        report["checkout"] = {
            "with_metacognition": _percentiles(with_ext),
            "without_metacognition_baseline": _percentiles(without),
            "overhead_ratio_p50": round(checkout_p50 / _percentiles(without)["p50_ms"], 3),
        }
        reads = {
            "known_unknowns": lambda i: fabric.known_unknowns("bench", limit=20),
            "reverification_needs": lambda i: fabric.reverification_needs("bench", scope=["bench-b"], limit=20),
            "claim_confidence": lambda i: fabric.claim_confidence(
                "bench", f"fact:{claims[i % len(claims)]}", scope=["bench-b"]
            ),
        }
        for name, read in reads.items():
            samples = _percentiles(_timed(read, 20))
            report[name] = {**samples, "ratio_to_checkout_p50": round(samples["p50_ms"] / checkout_p50, 2)}
        report["conflict_clusters"] = fabric.reverification_needs("bench", scope=["bench-b"])["conflict_cluster_count"]
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--unknowns", type=int, default=200)
    parser.add_argument("--assessments", type=int, default=500)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = run(args.events, args.unknowns, args.assessments, args.requests, args.queries)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    checkout = report["checkout"]
    print(
        f"{report['events']} events, {report['unknowns']} known unknowns, {report['assessments']} assessments, "
        f"{report['requests']} requests, {report['conflict_clusters']} conflict clusters"
    )
    print(
        f"checkout p50 {checkout['with_metacognition']['p50_ms']} ms with metacognition, "
        f"{checkout['without_metacognition_baseline']['p50_ms']} ms without (x{checkout['overhead_ratio_p50']})"
    )
    for name in ("known_unknowns", "reverification_needs", "claim_confidence"):
        read = report[name]
        print(
            f"{name}: p50 {read['p50_ms']} ms / p95 {read['p95_ms']} ms ({read['ratio_to_checkout_p50']}x a checkout)"
        )


if __name__ == "__main__":
    main()
