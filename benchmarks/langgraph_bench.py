"""ZaxyStore and ZaxyCheckpointer against LangGraph's own backends, as ratios measured in the same run.

Store: ZaxyStore vs InMemoryStore and SqliteStore (langgraph-checkpoint-sqlite): durable single put, get,
narrow (indexed equality filter) and broad (namespace scan) search, a range-filtered search over 10k items,
and a 10k-item batch put. Checkpointer: ZaxyCheckpointer vs InMemorySaver and SqliteSaver on a messages graph
run turn by turn (turns/s), then get_tuple latency, get_state_history and a full list at the end.

Durable writes take turns op by op (and graph turns alternate between savers) because this machine's fsync
latency switches between ~0.2 ms and ~4 ms regimes for seconds at a time; see benchmarks/eventloom_bench.py.

Usage: python benchmarks/langgraph_bench.py [--items 10000] [--turns 300] [--puts 300] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyStore

CATEGORIES = 200  # narrow filter: one category holds ~0.5% of the items


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {
        "ops_per_s": len(samples) / sum(samples),
        "p50_ms": pick(0.5) * 1e3,
        "p95_ms": pick(0.95) * 1e3,
        "mean_ms": statistics.fmean(samples) * 1e3,
    }


def _interleaved(operations: dict[str, Callable[[int], Any]], count: int) -> dict[str, dict[str, float]]:
    """Run each backend's operation in turn, op by op, so they all see the same disk regime."""
    samples: dict[str, list[float]] = {name: [] for name in operations}
    for i in range(count):
        for name, operation in operations.items():
            t0 = time.perf_counter()
            operation(i)
            samples[name].append(time.perf_counter() - t0)
    return {name: _stats(values) for name, values in samples.items()}


def _item(i: int) -> dict[str, Any]:
    return {
        "text": f"memory {i}: the user prefers option {i % 7} for project {i % 13}",
        "category": f"c{i % CATEGORIES}",
        "score": (i * 7919) % 1000 / 10.0,
        "user": f"u{i % 50}",
    }


def bench_store(root: Path, items: int, puts: int) -> dict[str, Any]:
    sqlite_conn = sqlite3.connect(root / "store.sqlite", check_same_thread=False, isolation_level=None)
    stores: dict[str, Any] = {
        "inmemory": InMemoryStore(),
        "sqlite": SqliteStore(sqlite_conn),
        "zaxy": ZaxyStore.from_path(root / "eventloom-store"),
    }
    stores["sqlite"].setup()
    results: dict[str, Any] = {}

    # Durable single puts: every backend fsyncs before returning; "zaxy_group_commit" is the Eventloom's batch
    # durability (written at once, fsynced within 50 ms), shown separately because it is a weaker guarantee.
    group_commit = ZaxyStore.from_path(root / "eventloom-group-commit", durability="batch")
    results["single_put"] = _interleaved(
        {
            name: (lambda i, s=store: s.put(("single",), f"k{i}", _item(i)))
            for name, store in {**stores, "zaxy_group_commit": group_commit}.items()
        },
        puts,
    )
    group_commit.close()

    batch_times = {}
    ops = [PutOp(("bench", f"u{i % 50}"), f"item-{i}", _item(i)) for i in range(items)]
    for name, store in stores.items():
        t0 = time.perf_counter()
        store.batch(ops)
        batch_times[name] = {"seconds": time.perf_counter() - t0, "items_per_s": items / (time.perf_counter() - t0)}
    results["batch_put"] = batch_times

    rng = random.Random(7)
    keys = [(("bench", f"u{i % 50}"), f"item-{i}") for i in (rng.randrange(items) for _ in range(20000))]
    results["get"] = _interleaved({name: (lambda i, s=store: s.get(*keys[i])) for name, store in stores.items()}, 20000)

    narrow = [{"category": f"c{rng.randrange(CATEGORIES)}"} for _ in range(300)]
    results["search_narrow_filter"] = _interleaved(
        {name: (lambda i, s=store: s.search(("bench",), filter=narrow[i], limit=10)) for name, store in stores.items()},
        300,
    )
    results["search_broad"] = _interleaved(
        {name: (lambda i, s=store: s.search(("bench",), limit=10, offset=i % 50)) for name, store in stores.items()},
        300,
    )
    ranges = [{"score": {"$gte": lo, "$lt": lo + 0.5}} for lo in (rng.uniform(0, 99) for _ in range(300))]
    results["search_range_filter"] = _interleaved(
        {name: (lambda i, s=store: s.search(("bench",), filter=ranges[i], limit=10)) for name, store in stores.items()},
        300,
    )
    for store in stores.values():
        if hasattr(store, "close"):
            store.close()
    sqlite_conn.close()
    return results


def _graph(checkpointer: Any) -> Any:
    filler = "lorem ipsum dolor sit amet " * 4

    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(content=f"echo {state['messages'][-1].content} {filler}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=checkpointer)


def bench_short_threads(root: Path, threads: int) -> dict[str, Any]:
    """Many short threads (one turn each: a user message and a reply), savers alternating turn by turn."""
    sqlite_conn = sqlite3.connect(root / "short.sqlite", check_same_thread=False)
    savers: dict[str, Any] = {
        "inmemory": InMemorySaver(),
        "sqlite": SqliteSaver(sqlite_conn),
        "zaxy": ZaxyCheckpointer.from_path(root / "eventloom-short"),
        "zaxy_group_commit": ZaxyCheckpointer.from_path(root / "eventloom-short-batch", durability="batch"),
    }
    graphs = {name: _graph(saver) for name, saver in savers.items()}

    def turn(graph: Any) -> Callable[[int], Any]:
        return lambda i: graph.invoke(
            {"messages": [HumanMessage(content=f"question {i}")]}, {"configurable": {"thread_id": f"short-{i}"}}
        )

    run = _interleaved({name: turn(graph) for name, graph in graphs.items()}, threads)
    savers["zaxy"].close()
    savers["zaxy_group_commit"].close()
    sqlite_conn.close()
    return {name: {"turns_per_s": r["ops_per_s"], **r} for name, r in run.items()}


def bench_checkpointer(root: Path, turns: int) -> dict[str, Any]:
    sqlite_conn = sqlite3.connect(root / "checkpoints.sqlite", check_same_thread=False)
    savers: dict[str, Any] = {
        "inmemory": InMemorySaver(),
        "sqlite": SqliteSaver(sqlite_conn),
        "zaxy": ZaxyCheckpointer.from_path(root / "eventloom-checkpoints"),
        "zaxy_group_commit": ZaxyCheckpointer.from_path(root / "eventloom-checkpoints-batch", durability="batch"),
    }
    graphs = {name: _graph(saver) for name, saver in savers.items()}
    config = {"configurable": {"thread_id": "bench-thread"}}

    def turn(graph: Any) -> Callable[[int], Any]:
        return lambda i: graph.invoke({"messages": [HumanMessage(content=f"question {i} about the plan")]}, config)

    run = _interleaved({name: turn(graph) for name, graph in graphs.items()}, turns)
    results: dict[str, Any] = {"turns": {name: {"turns_per_s": r["ops_per_s"], **r} for name, r in run.items()}}
    results["messages"] = 2 * turns
    results["get_tuple"] = _interleaved({name: (lambda i, s=s: s.get_tuple(config)) for name, s in savers.items()}, 200)
    history, listing = {}, {}
    for name, graph in graphs.items():
        t0 = time.perf_counter()
        count = sum(1 for _ in graph.get_state_history(config))
        history[name] = {"seconds": time.perf_counter() - t0, "checkpoints": count}
        t0 = time.perf_counter()
        count = sum(1 for _ in savers[name].list(config))
        listing[name] = {"seconds": time.perf_counter() - t0, "checkpoints": count}
    results["get_state_history"] = history
    results["list_all"] = listing
    savers["zaxy"].close()
    savers["zaxy_group_commit"].close()
    sqlite_conn.close()
    return results


def _ratio(ours: float, theirs: float) -> float:
    return ours / theirs if theirs else float("inf")


def summarise(store: dict[str, Any] | None, checkpointer: dict[str, Any] | None) -> dict[str, float]:
    """Ours vs each baseline: >1 means Zaxy is faster (latency ratios are inverted to read the same way)."""
    out: dict[str, float] = {}
    for base in ("sqlite", "inmemory"):
        if store:
            for op in ("single_put", "get", "search_narrow_filter", "search_broad", "search_range_filter"):
                out[f"store.{op} vs {base}"] = _ratio(store[op]["zaxy"]["ops_per_s"], store[op][base]["ops_per_s"])
            out[f"store.single_put_group_commit vs {base}"] = _ratio(
                store["single_put"]["zaxy_group_commit"]["ops_per_s"], store["single_put"][base]["ops_per_s"]
            )
            batch = store["batch_put"]
            out[f"store.batch_put_10k vs {base}"] = _ratio(batch[base]["seconds"], batch["zaxy"]["seconds"])
        if checkpointer:
            turns, get_tuple = checkpointer["turns"], checkpointer["get_tuple"]
            for name in ("zaxy", "zaxy_group_commit"):
                out[f"checkpointer.long_thread_turns_per_s {name} vs {base}"] = _ratio(
                    turns[name]["turns_per_s"], turns[base]["turns_per_s"]
                )
                short = checkpointer["short_threads"]
                out[f"checkpointer.short_thread_turns_per_s {name} vs {base}"] = _ratio(
                    short[name]["turns_per_s"], short[base]["turns_per_s"]
                )
            out[f"checkpointer.get_tuple_p95 speedup vs {base}"] = _ratio(
                get_tuple[base]["p95_ms"], get_tuple["zaxy"]["p95_ms"]
            )
            for op in ("get_state_history", "list_all"):
                out[f"checkpointer.{op} speedup vs {base}"] = _ratio(
                    checkpointer[op][base]["seconds"], checkpointer[op]["zaxy"]["seconds"]
                )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--puts", type=int, default=300)
    parser.add_argument("--short-threads", type=int, default=300, help="one-turn threads (short-thread turns/s)")
    parser.add_argument("--only", choices=["store", "checkpointer"])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = bench_store(root, args.items, args.puts) if args.only != "checkpointer" else None
        checkpointer = bench_checkpointer(root, args.turns) if args.only != "store" else None
        if checkpointer is not None:
            checkpointer["short_threads"] = bench_short_threads(root, args.short_threads)
    ratios = summarise(store, checkpointer)
    if args.json:
        print(json.dumps({"store": store, "checkpointer": checkpointer, "ratios": ratios}, indent=2))
        return
    if store:
        print_store(store, args.items)
    if checkpointer:
        print_checkpointer(checkpointer, args.turns)
    print("ratios (ours / baseline, >1 = Zaxy faster)")
    for name, value in ratios.items():
        print(f"  {name:55s} {value:8.2f}x")


def print_store(store: dict[str, Any], items: int) -> None:
    print(f"store ({items} items)")
    for op in ("single_put", "get", "search_narrow_filter", "search_broad", "search_range_filter"):
        row = "  ".join(f"{n} {r['ops_per_s']:9.0f}/s p95 {r['p95_ms']:7.3f} ms" for n, r in store[op].items())
        print(f"  {op:22s} {row}")
    print("  batch_put_10k          " + "  ".join(f"{n} {r['seconds']:.3f} s" for n, r in store["batch_put"].items()))


def print_checkpointer(checkpointer: dict[str, Any], turns: int) -> None:
    print(f"checkpointer ({turns} turns, {checkpointer['messages']} messages)")
    print(
        "  turns/s                " + "  ".join(f"{n} {r['turns_per_s']:.1f}" for n, r in checkpointer["turns"].items())
    )
    print(
        "  short threads turns/s  "
        + "  ".join(f"{n} {r['turns_per_s']:.1f}" for n, r in checkpointer["short_threads"].items())
    )
    print(
        "  get_tuple p50/p95 ms   "
        + "  ".join(f"{n} {r['p50_ms']:.3f}/{r['p95_ms']:.3f}" for n, r in checkpointer["get_tuple"].items())
    )
    for op in ("get_state_history", "list_all"):
        print(f"  {op:22s} " + "  ".join(f"{n} {r['seconds']:.3f} s" for n, r in checkpointer[op].items()))


if __name__ == "__main__":
    main()
