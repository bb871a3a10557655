"""Cost of the issue-20 checkout blocks against a baseline in the same run: synthesis, reasoning primitives and
procedural memory (skills, skill_analytics, procedural_memory).

A mixed stream of ``--events`` events plus ``--skills`` skills (validated, with outcomes), ``--observations``
reasoning-primitive observations and ``--notes`` notes stating amounts. Prints checkout p50/p95 with every
extension vs with these five switched off (overhead ratio), on numeric questions (a synthesis bundle is composed)
and on plain ones, alternating per question; each checkout follows a fresh append, as in an agent loop.
Also ``record_synthesis_artifact`` p50 as a ratio of the numeric checkout p50.

Usage: python benchmarks/synthesis_skills_bench.py [--events 10000] [--skills 100] [--observations 1000]
[--notes 300] [--queries 60] [--json]
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

SESSION = "bench"
NEW_BLOCKS = {"synthesis", "reasoning_primitives", "skills", "skill_analytics", "procedural_memory"}


def run(events: int, skills: int, observations: int, notes: int, queries: int) -> dict:
    report: dict = {"events": events, "skills": skills, "observations": observations, "notes": notes}
    with (
        tempfile.TemporaryDirectory(prefix="zaxy-synthesis-bench-") as tmp,
        MemoryFabric.from_path(Path(tmp) / "loom", durability="batch") as fabric,
    ):
        stream = mixed_stream(events, seed=3)
        for offset in range(0, events, 1000):
            fabric.append_many(SESSION, stream[offset : offset + 1000])
        anchor = fabric.append(SESSION, "command.completed", {"command": "pytest", "exit_code": 0}).citation
        fabric.append_many(
            SESSION,
            [
                {"type": "note.recorded", "payload": {"text": f"Project {i % 30} invoice {i} cost ${100 + i}."}}
                for i in range(notes)
            ],
        )
        for i in range(skills):
            steps = [f"step {j} of task {i}" for j in range(3)]
            fabric.record_skill(
                SESSION,
                "proposed",
                f"skill-{i}",
                summary=f"how to handle task T-{i}",
                procedure=steps,
                citations=[anchor],
            )
            fabric.record_skill(SESSION, "validated", f"skill-{i}", reason="ok")
            fabric.record_skill(SESSION, "outcome_recorded", f"skill-{i}", success_score=0.8)
        for i in range(observations):
            fabric.observe_primitive(SESSION, "memory_known_unknowns", {}, result={"items": [i]})
        fabric.project([SESSION])
        numeric = [f"How much did project {i % 30} cost in total?" for i in range(queries)]
        plain = [f"what is the status of task T-{i % 500}?" for i in range(queries)]
        full = fabric.features
        without = replace(
            full, checkout_extensions=tuple(e for e in full.checkout_extensions if e[0] not in NEW_BLOCKS)
        )

        def alternating(questions: list[str]) -> tuple[list[float], list[float]]:
            """Each question checked out without then with the blocks, each after a fresh append (so load
            changes hit both sides alike and nothing is served from a memo)."""
            timings: dict[bool, list[float]] = {False: [], True: []}
            for index, question in enumerate(questions):
                for with_blocks in (False, True):
                    fabric.features = full if with_blocks else without
                    fabric.append(SESSION, "note.recorded", {"text": f"loop {index} {with_blocks}"})
                    timings[with_blocks] += _timed(lambda _, q=question: fabric.checkout(q, session=SESSION), 1)
            return timings[False], timings[True]

        for name, questions in (("numeric", numeric), ("plain", plain)):
            alternating(questions[:5])  # warm
            base_samples, with_samples = alternating(questions)
            base, with_blocks = _percentiles(base_samples), _percentiles(with_samples)
            report[f"checkout_{name}"] = {
                "without_new_blocks": base,
                "with_new_blocks": with_blocks,
                "overhead_ratio_p50": round(with_blocks["p50_ms"] / max(base["p50_ms"], 1e-9), 3),
            }
        fabric.features = full
        packets = [fabric.checkout(q, session=SESSION).model_dump(mode="json") for q in numeric[:10]]
        with_candidates = [p for p in packets if p["diagnostics"]["synthesis"]["answer_candidates"]]
        report["numeric_checkouts_with_candidates"] = f"{len(with_candidates)}/{len(packets)}"
        record = _percentiles(
            _timed(lambda i: fabric.record_synthesis_artifact(with_candidates[i % len(with_candidates)]), 10)
        )
        report["record_synthesis_artifact"] = {
            **record,
            "ratio_to_numeric_checkout_p50": round(
                record["p50_ms"] / report["checkout_numeric"]["with_new_blocks"]["p50_ms"], 3
            ),
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10000)
    parser.add_argument("--skills", type=int, default=100)
    parser.add_argument("--observations", type=int, default=1000)
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = run(args.events, args.skills, args.observations, args.notes, args.queries)
    print(json.dumps(report, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
