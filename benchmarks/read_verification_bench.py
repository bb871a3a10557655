"""What read-side verification costs Memory Checkout (issue 25.2), measured with and without it in the same run.

Every event a checkout packet cites (evidence, current facts, working set) is re-read from the log with its
successor and checked against its hash before it is served. This benchmark builds a memory (the checkout
benchmark's mixed stream), then alternates checkouts question by question between the real engine ("verified")
and the same engine with the check replaced by one that reads nothing and accepts every citation ("unverified",
what checkout did before), so both see the same machine state. It prints p50/p95/p99 of both, the ratio, and the
number of citations checked per packet.

Usage: python benchmarks/read_verification_bench.py [--sizes 1000,10000] [--questions 200] [--json]
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
from zaxy_agents.checkout import assemble as assemble_module
from zaxy_agents.eventloom.integrity import CallReads, CitedCheck
from zaxy_agents.fabric import MemoryFabric


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    pick = lambda q: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)  # noqa: E731
    return {"p50_ms": pick(0.5), "p95_ms": pick(0.95), "p99_ms": pick(0.99)}


def _accept_everything(_lines_at, cited, **_kwargs) -> CitedCheck:  # type: ignore[no-untyped-def]
    """The unverified baseline: no read, every citation servable (its hash taken as cited)."""
    check = CitedCheck()
    for session, seq, digest in cited:
        check.envelopes[(session, seq)] = {"hash": digest, "type": "unverified"}
    return check


class _UnverifiedReads(CallReads):
    """A checkout's reads with the citation check replaced by :func:`_accept_everything` (the baseline)."""

    __slots__ = ()

    def check(self, cited):  # type: ignore[no-untyped-def,override]
        return _accept_everything(None, cited)


def run_size(size: int, questions: int) -> dict:
    stream = mixed_stream(size, seed=size)
    real_reads = assemble_module.CallReads
    if real_reads is not CallReads:
        raise SystemExit("read_verification_bench: checkout.assemble no longer builds its reads with CallReads")
    with (
        tempfile.TemporaryDirectory(prefix="zaxy-verify-bench-") as tmp,
        MemoryFabric.from_path(Path(tmp) / "loom", durability="batch") as fabric,
    ):
        for offset in range(0, size, 1000):
            fabric.append_many("bench", stream[offset : offset + 1000])
        fabric.project()
        fabric.projector.flush(timeout=None)
        catalog = fabric.projector.catalog
        current = [catalog.current(key) for key in catalog.type_keys("bench", "fact")]
        names = sorted({version.name for version in current if version is not None})
        rng = random.Random(7)
        asked = [f"what is the current value of {name}?" for name in rng.choices(names, k=questions)]
        fabric.checkout("warm up", session="bench", max_tokens=512)
        verified, unverified, cited = [], [], []
        for index, question in enumerate(asked):
            order = (True, False) if index % 2 == 0 else (False, True)  # alternate which runs first
            for check in order:
                assemble_module.CallReads = real_reads if check else _UnverifiedReads
                start = time.perf_counter()
                packet = fabric.checkout(question, session="bench", max_tokens=1024)
                elapsed = (time.perf_counter() - start) * 1000
                (verified if check else unverified).append(elapsed)
                if check:
                    cited.append(len(packet.provenance))
        assemble_module.CallReads = real_reads
    before, after = _percentiles(unverified), _percentiles(verified)
    return {
        "events": size,
        "questions": questions,
        "unverified": before,
        "verified": after,
        "p95_ratio": round(after["p95_ms"] / before["p95_ms"], 3) if before["p95_ms"] else None,
        "citations_checked_per_packet": round(sum(cited) / len(cited), 1) if cited else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = [run_size(int(size), args.questions) for size in args.sizes.split(",")]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for result in results:
        print(
            f"{result['events']:>7} events, {result['questions']} questions, "
            f"{result['citations_checked_per_packet']} citations checked per packet\n"
            f"  checkout without read-side verification (before): p50 {result['unverified']['p50_ms']} ms, "
            f"p95 {result['unverified']['p95_ms']} ms, p99 {result['unverified']['p99_ms']} ms\n"
            f"  checkout with read-side verification (after):      p50 {result['verified']['p50_ms']} ms, "
            f"p95 {result['verified']['p95_ms']} ms, p99 {result['verified']['p99_ms']} ms\n"
            f"  p95 ratio after/before: {result['p95_ratio']}x"
        )


if __name__ == "__main__":
    main()
