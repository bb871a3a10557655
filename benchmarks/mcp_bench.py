"""MCP tool-call round trips over stdio against the same fabric calls made in-process, in the same run.

Measures p50/p95 of: memory_checkout and memory_append (and memory_feeling_of_knowing) through a real
``zaxy serve`` subprocess driven by ``mcp.client.stdio``; the same calls through a second server that proxies to
the first (graph owner); and, as the baseline, ``MemoryFabric.checkout`` / ``append`` / ``feeling_of_knowing``
called directly in this process on the same workspace (the fabric call includes the marker append, as the tool
does). Also reports the feeling-of-knowing predictor alone (in-memory signals only, no marker append), which is
meant to be sub-millisecond, and the time from spawning ``zaxy serve`` to an initialized MCP session.

Usage: python benchmarks/mcp_bench.py [--events 2000] [--calls 60] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.metacognition.fok import predict

SESSION = "bench"
QUESTIONS = [
    "which port does service {i} use?",
    "what was decided about topic {i}?",
    "is task T-{i} done?",
    "what failed in the last deploy of service {i}?",
]


def seed(root: Path, events: int) -> None:
    drafts = []
    for i in range(events):
        kind = i % 5
        if kind == 0:
            drafts.append({"type": "fact.asserted", "payload": {"subject": f"service {i % 97}", "predicate": "port",
                                                                 "object": str(8000 + i)}})  # fmt: skip
        elif kind == 1:
            drafts.append(
                {"type": "decision.recorded", "payload": {"decision": f"decision {i}", "topic": f"topic {i % 53}"}}
            )
        elif kind == 2:
            drafts.append({"type": "task.created", "payload": {"task_id": f"T-{i % 211}", "title": f"work item {i}"}})
        elif kind == 3:
            drafts.append(
                {
                    "type": "transcript.turn",
                    "payload": {"role": "user", "text": f"deploy {i} of service {i % 97} failed"},
                }
            )
        else:
            drafts.append(
                {"type": "command.completed", "payload": {"command": f"make test-{i % 31}", "exit_code": i % 2}}
            )
    with MemoryFabric.from_path(root) as fabric:
        for start in range(0, len(drafts), 500):
            fabric.append_many(SESSION, drafts[start : start + 500])
        fabric.project()
        fabric.projector.flush()


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 3),
        "n": len(ordered),
    }


def timed(function, count: int) -> list[float]:
    samples = []
    for i in range(count):
        started = time.perf_counter()
        function(i)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def in_process(root: Path, calls: int) -> dict[str, dict[str, float]]:
    with MemoryFabric.from_path(root) as fabric:
        fabric.checkout("warm up", session=SESSION)
        checkout = timed(lambda i: fabric.checkout(QUESTIONS[i % 4].format(i=i), session=SESSION), calls)
        append = timed(lambda i: fabric.append(SESSION, "note.recorded", {"text": f"in-process note {i}"}), calls)
        fabric.project([SESSION])
        fok = timed(lambda i: fabric.feeling_of_knowing(QUESTIONS[i % 4].format(i=i), session=SESSION), calls)
        catalog, index = fabric.projector.catalog, fabric.retriever.verbatim
        predictor = timed(lambda i: predict(QUESTIONS[i % 4].format(i=i), catalog, index, [SESSION]), calls * 10)
    return {
        "checkout": summary(checkout),
        "append": summary(append),
        "feeling_of_knowing": summary(fok),
        "fok_predictor_only": summary(predictor),
    }


async def over_stdio(root: Path, calls: int, *, second: bool) -> dict[str, dict[str, float]]:
    """Round trips through the owner and (interleaved call by call, so drift hits both alike) a proxy."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "zaxy_agents.cli.entry", "serve", "--eventloom-path", str(root), "--session-id", SESSION],
        env=dict(os.environ),
    )
    results: dict[str, dict[str, float]] = {}
    with open(os.devnull, "w") as quiet:
        started = time.perf_counter()
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as owner:
            await owner.initialize()
            results["startup_owner"] = summary([(time.perf_counter() - started) * 1000])
            await owner.call_tool("memory_checkout", {"query": "warm up"})
            if not second:
                results.update(await _measure({"stdio": owner}, calls))
                return results
            started = time.perf_counter()
            async with stdio_client(params, errlog=quiet) as (r2, w2), ClientSession(r2, w2) as proxy:
                await proxy.initialize()
                results["startup_proxy"] = summary([(time.perf_counter() - started) * 1000])
                role = (await proxy.call_tool("memory_capabilities", {})).structuredContent["server"]["process"]
                assert role["role"] == "proxy", role
                await proxy.call_tool("memory_checkout", {"query": "warm up"})
                results.update(await _measure({"stdio": owner, "proxy": proxy}, calls))
    return results


async def _measure(clients: dict[str, ClientSession], calls: int) -> dict[str, dict[str, float]]:
    operations = {
        "checkout": ("memory_checkout", lambda i, label: {"query": QUESTIONS[i % 4].format(i=i)}),
        "append": ("memory_append", lambda i, label: {"type": "note.recorded", "payload": {"text": f"{label} {i}"}}),
        "feeling_of_knowing": ("memory_feeling_of_knowing", lambda i, label: {"query": QUESTIONS[i % 4].format(i=i)}),
    }
    results: dict[str, dict[str, float]] = {}
    for operation, (tool, arguments_for) in operations.items():
        samples: dict[str, list[float]] = {label: [] for label in clients}
        for i in range(calls):
            for label, client in clients.items():
                started = time.perf_counter()
                result = await client.call_tool(tool, arguments_for(i, label))
                samples[label].append((time.perf_counter() - started) * 1000)
                assert not result.isError, result.structuredContent
        for label, values in samples.items():
            results[f"{label}_{operation}"] = summary(values)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--no-proxy", action="store_true", help="skip the second (proxy) server")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="zaxy-mcp-bench-") as scratch:
        root = Path(scratch) / "eventloom"
        seed(root, args.events)
        before = in_process(root, args.calls)
        remote = asyncio.run(over_stdio(root, args.calls, second=not args.no_proxy))
        after = in_process(root, args.calls)  # the baseline again: the machine's drift during the run
    baseline = {
        name: {
            "p50_ms": round((before[name]["p50_ms"] + after[name]["p50_ms"]) / 2, 3),
            "p95_ms": round((before[name]["p95_ms"] + after[name]["p95_ms"]) / 2, 3),
            "n": before[name]["n"] + after[name]["n"],
            "p50_before_after": [before[name]["p50_ms"], after[name]["p50_ms"]],
        }
        for name in before
    }
    report = {"events": args.events, "calls": args.calls, "in_process": baseline, "mcp": remote, "ratios": {}}
    for transport in ("stdio", "proxy"):
        for operation in ("checkout", "append", "feeling_of_knowing"):
            key = f"{transport}_{operation}"
            if key in remote:
                report["ratios"][key] = round(remote[key]["p50_ms"] / baseline[operation]["p50_ms"], 2)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"workspace: {args.events} events; {args.calls} calls per operation (p50 / p95 ms)")
    print(f"{'operation':<22}{'in-process':>22}{'MCP stdio':>22}{'stdio via proxy':>22}{'stdio/in-proc':>15}")
    for operation in ("checkout", "append", "feeling_of_knowing"):
        base = baseline[operation]
        cells = [f"{base['p50_ms']:.2f} / {base['p95_ms']:.2f}"]
        for transport in ("stdio", "proxy"):
            value = remote.get(f"{transport}_{operation}")
            cells.append(f"{value['p50_ms']:.2f} / {value['p95_ms']:.2f}" if value else "-")
        ratio = report["ratios"].get(f"stdio_{operation}")
        print(f"{operation:<22}{cells[0]:>22}{cells[1]:>22}{cells[2]:>22}{ratio:>14}x")
    for role in ("owner", "proxy"):
        if f"startup_{role}" in remote:
            print(f"server start-up to initialized ({role}): {remote[f'startup_{role}']['p50_ms']:.0f} ms")
    print("in-process p50 before / after the MCP runs: " + ", ".join(
        f"{name} {values['p50_before_after'][0]:.2f} / {values['p50_before_after'][1]:.2f}"
        for name, values in baseline.items()
    ))  # fmt: skip
    predictor = baseline["fok_predictor_only"]
    print(f"feeling-of-knowing predictor alone (in-memory signals): p50 {predictor['p50_ms'] * 1000:.0f} µs, "
          f"p95 {predictor['p95_ms'] * 1000:.0f} µs")  # fmt: skip


if __name__ == "__main__":
    main()
