"""What opening LangGraph memory costs as history grows: ZaxyStore vs SqliteStore, ZaxyCheckpointer vs SqliteSaver.

Each measurement runs in a fresh Python process (libraries imported first, then timed): open the store and
get one item; open the saver and ``get_state`` of a long thread; ``list(None, limit=10)`` over many threads.
RSS is the process's resident size after the open + first read minus before it. Ratios are Zaxy / baseline
(lower is better), measured in the same run on the same machine.

``--before TREE`` also opens the same stores with the code of another checkout (``TREE``: a folder holding its
``zaxy_agents``), alternating the trees' processes in one run (this run's after, before, baseline, ...) so a
loaded machine weighs on both alike; the stores are built once, with this tree's code, and the other tree opens a
copy of each (its derived files may be of another format).

Usage: python benchmarks/langgraph_open_bench.py [--items 10000,100000] [--checkpoints 2500] [--threads 1000]
       [--repeats 3] [--before TREE] [--no-zero-live] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BEFORE: Path | None = None  # --before: another checkout's code, alternated with this one's

CHILD = r"""
import json, os, sys, time
sys.path.insert(0, {root!r})
kind, path, arg = sys.argv[1], sys.argv[2], sys.argv[3]
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
# Import everything first (a server has): only opening and reading are timed. The files backend's module too: the
# registry imports it on the first open, and with PYTHONDONTWRITEBYTECODE=1 that compiled it inside the timed open
# (~1.4 ms on the 2-core VM, the same at every size).
import zaxy_agents.itemstore, zaxy_agents.checkpoints, zaxy_agents.fabric, zaxy_agents.storage.files.jsonl_log  # noqa
import zaxy_agents.storage.files.backend  # noqa
if kind.endswith("store"):
    from langgraph.store.sqlite import SqliteStore
    from zaxy_agents.langgraph import ZaxyStore
else:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.sqlite import SqliteSaver
    from zaxy_agents.langgraph import ZaxyCheckpointer
    from benchmarks.langgraph_open_bench import chat_graph
    chat_graph(InMemorySaver()).get_state({{"configurable": {{"thread_id": "warm"}}}})
before = rss()
t0, c0 = time.perf_counter(), time.process_time()
parts = {{}}
if kind == "zaxy_store":  # what ZaxyStore.from_path does, in its three parts
    from zaxy_agents.fabric import MemoryFabric
    fabric = MemoryFabric.from_path(path); parts["fabric"] = time.process_time() - c0
    store = ZaxyStore(fabric); parts["item store"] = time.process_time() - c0 - parts["fabric"]
    value = store.get(("bench", "u1"), arg); parts["get"] = time.process_time() - c0 - sum(parts.values())
elif kind == "sqlite_store":
    import sqlite3
    store = SqliteStore(sqlite3.connect(path, check_same_thread=False, isolation_level=None))
    value = store.get(("bench", "u1"), arg)
elif kind in ("zaxy_state", "zaxy_list"):
    saver = ZaxyCheckpointer.from_path(path)
else:
    import sqlite3
    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
if kind.endswith("_state"):
    value = len(chat_graph(saver).get_state({{"configurable": {{"thread_id": arg}}}}).values["messages"])
elif kind.endswith("_list"):
    value = len(list(saver.list(None, limit=10)))
elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({{"seconds": elapsed, "cpu_seconds": cpu, "rss_bytes": rss() - before, "value": str(value)[:60],
                  "cpu_parts": parts}}))
"""


def chat_graph(checkpointer: Any) -> Any:
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph

    def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"echo {state['messages'][-1].content}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", END)
    return builder.compile(checkpointer=checkpointer)


def _run_child(kind: str, path: Path, arg: str, root: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(root=str(root)), kind, str(path), arg],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
    )
    return dict(json.loads(out.stdout))


def _child(kind: str, path: Path, arg: str, repeats: int) -> dict[str, Any]:
    return _summary([_run_child(kind, path, arg, ROOT) for _ in range(repeats)])


def _alternated(cells: dict[str, tuple[str, Path, str, Path]], repeats: int) -> dict[str, dict[str, Any]]:
    """``{label: (kind, path, arg, tree)}``, each measured ``repeats`` times in fresh processes, one of each in turn."""
    runs: dict[str, list[dict[str, Any]]] = {label: [] for label in cells}
    for _ in range(repeats):
        for label, (kind, path, arg, root) in cells.items():
            runs[label].append(_run_child(kind, path, arg, root))
    return {label: _summary(rows) for label, rows in runs.items()}


def _pair(kind: str, baseline: str, path: Path, base_path: Path, arg: str, repeats: int) -> dict[str, Any]:
    """Zaxy (this tree, and the ``--before`` tree when given) and the baseline library, alternated."""
    cells = {"zaxy": (kind, path, arg, ROOT)}
    if BEFORE is not None:
        # Its own copy of the store: two trees whose derived files differ in format, opening one folder, would each
        # rebuild the other's from the log at every open. Its first open (untimed) builds or migrates its own.
        copy = path.with_name(path.name + "-before")
        if not copy.exists():
            shutil.copytree(path, copy)
            _run_child(kind, copy, arg, BEFORE)
        cells["zaxy_before"] = (kind, copy, arg, BEFORE)
    cells[baseline] = (f"sqlite_{kind.split('_', 1)[1]}", base_path, arg, ROOT)
    return _alternated(cells, repeats)


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "ms": statistics.median(r["seconds"] for r in runs) * 1e3,
        "cpu_ms": statistics.median(r["cpu_seconds"] for r in runs) * 1e3,
        "rss_mb": statistics.median(r["rss_bytes"] for r in runs) / 2**20,
        "value": runs[0]["value"],
        "cpu_parts_ms": {
            part: statistics.median(r["cpu_parts"][part] for r in runs) * 1e3 for part in runs[0].get("cpu_parts", {})
        },
    }


def _item(i: int) -> dict[str, Any]:
    return {"text": f"memory {i}: the user prefers option {i % 7} for project {i % 13}", "score": i % 1000}


def build_stores(root: Path, items: int, delete_all: bool = False) -> tuple[Path, Path]:
    import sqlite3

    from langgraph.store.base import PutOp
    from langgraph.store.sqlite import SqliteStore

    from zaxy_agents.langgraph import ZaxyStore

    zaxy_path, sqlite_path = root / f"zaxy-{items}-{delete_all}", root / f"sqlite-{items}-{delete_all}.db"
    conn = sqlite3.connect(sqlite_path, check_same_thread=False, isolation_level=None)
    sqlite_store = SqliteStore(conn)
    sqlite_store.setup()
    with ZaxyStore.from_path(zaxy_path, durability="batch") as zaxy_store:
        for start in range(0, items, 5000):
            ops = [
                PutOp(("bench", f"u{i % 50}"), f"item-{i}", _item(i)) for i in range(start, min(items, start + 5000))
            ]
            zaxy_store.batch(ops)
            sqlite_store.batch(ops)
            if delete_all:
                deletes = [PutOp(op.namespace, op.key, None) for op in ops]
                zaxy_store.batch(deletes)
                sqlite_store.batch(deletes)
    conn.close()
    return zaxy_path, sqlite_path


def bench_store(root: Path, sizes: list[int], repeats: int, zero_live: bool = True) -> dict[str, Any]:
    curve = {}
    for items in sizes:
        t0 = time.perf_counter()
        zaxy_path, sqlite_path = build_stores(root, items)
        built = time.perf_counter() - t0
        _child("zaxy_store", zaxy_path, "item-1", 1)  # the first open after the writer builds nothing new
        curve[items] = {
            **_pair("zaxy_store", "sqlite", zaxy_path, sqlite_path, "item-1", repeats),
            "build_seconds": built,
        }
        # Each size as it completes (stderr): a long curve stopped part-way still reports where it got.
        print(f"  {_store_row(items, curve[items])}   (both built in {built:.0f} s)", file=sys.stderr, flush=True)
        for path in (zaxy_path, zaxy_path.with_name(zaxy_path.name + "-before"), sqlite_path):  # free the disk
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
    if not zero_live:
        return {"curve": curve}
    empty_items = max(sizes) // 2  # puts then deletes: max(sizes) events, 0 live items
    zaxy_path, sqlite_path = build_stores(root, empty_items, delete_all=True)
    _child("zaxy_store", zaxy_path, "item-1", 1)
    empty = {"events": 2 * empty_items, **_pair("zaxy_store", "sqlite", zaxy_path, sqlite_path, "item-1", repeats)}
    fresh = build_stores(root, 1)
    empty["zaxy_empty_store"] = _child("zaxy_store", fresh[0], "item-0", repeats)
    return {"curve": curve, "zero_live": empty}


def bench_checkpointer(root: Path, checkpoints: int, threads: int, repeats: int) -> dict[str, Any]:
    import sqlite3

    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    from zaxy_agents.langgraph import ZaxyCheckpointer

    # The long thread and the many short threads live in separate stores (SqliteSaver's list(None) would
    # otherwise sort the long thread's multi-megabyte rows too).
    zaxy_path, sqlite_path = root / "zaxy-checkpoints", root / "checkpoints.db"
    zaxy_many, sqlite_many = root / "zaxy-threads", root / "threads.db"
    turns = checkpoints // 2  # input checkpoint + the step's checkpoint per turn
    for zaxy_at, sqlite_at, work in (
        (zaxy_path, sqlite_path, [("long", f"question {turn}") for turn in range(turns)]),
        (zaxy_many, sqlite_many, [(f"t{thread}", "hello") for thread in range(threads)]),
    ):
        conn = sqlite3.connect(sqlite_at, check_same_thread=False)
        with ZaxyCheckpointer.from_path(zaxy_at, durability="batch") as zaxy_saver:
            graphs = [chat_graph(zaxy_saver), chat_graph(SqliteSaver(conn))]
            for thread_id, text in work:
                for graph in graphs:
                    graph.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread_id}})
        conn.close()
    # The first list(None) after the writers builds the checkpoint index (it reads every thread once); later
    # opens read it where it lies. Reported apart, then the steady cold figure.
    first_list = _child("zaxy_list", zaxy_many, "", 1)
    return {
        "checkpoints": 2 * (checkpoints // 2),
        "threads": threads,
        "first_list_builds_index": first_list,
        "get_state": _pair("zaxy_state", "sqlite", zaxy_path, sqlite_path, "long", repeats),
        "list_limit_10": _pair("zaxy_list", "sqlite", zaxy_many, sqlite_many, "", repeats),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="10000,100000")
    parser.add_argument("--checkpoints", type=int, default=2500)
    parser.add_argument("--threads", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", choices=["store", "checkpointer"])
    parser.add_argument("--before", type=Path, help="another checkout whose code opens the same stores, alternated")
    parser.add_argument(
        "--no-zero-live",
        action="store_true",
        help="skip the store with 0 live items after max(items) events (its deletes erase: the longest build)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    global BEFORE
    BEFORE = args.before.resolve() if args.before else None
    sizes = [int(size) for size in args.items.split(",")]
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        if args.only != "checkpointer":
            report["store"] = bench_store(root, sizes, args.repeats, zero_live=not args.no_zero_live)
        if args.only != "store":
            report["checkpointer"] = bench_checkpointer(root, args.checkpoints, args.threads, args.repeats)
        report["wall_seconds"] = time.perf_counter() - t0
    if args.json:
        print(json.dumps(report, indent=2))
        return
    if "store" in report:
        print("store: open + first get in a fresh process (median ms, RSS added MB), Zaxy / SqliteStore")
        for items, row in report["store"]["curve"].items():
            print(f"  {_store_row(items, row)}")
        if empty := report["store"].get("zero_live"):
            z, s, e = empty["zaxy"], empty["sqlite"], empty["zaxy_empty_store"]
            before = f", before {empty['zaxy_before']['ms']:.2f} ms" if "zaxy_before" in empty else ""
            print(
                f"  0 live items after {empty['events']:,} events: zaxy {z['ms']:.2f} ms (an empty store "
                f"{e['ms']:.2f} ms){before}, sqlite {s['ms']:.2f} ms"
            )
    if "checkpointer" in report:
        c = report["checkpointer"]
        print(
            f"checkpointer: fresh process, Zaxy / SqliteSaver ({c['checkpoints']} checkpoints, {c['threads']} threads)"
        )
        for op in ("get_state", "list_limit_10"):
            z, s = c[op]["zaxy"], c[op]["sqlite"]
            print(
                f"  {op:14s} zaxy {z['ms']:8.2f} ms ({z['cpu_ms']:.2f} CPU)   sqlite {s['ms']:8.2f} ms "
                f"({s['cpu_ms']:.2f} CPU)   ratio {z['ms'] / s['ms']:5.2f}x time, {z['cpu_ms'] / s['cpu_ms']:5.2f}x CPU"
            )
            if "zaxy_before" in c[op]:
                b = c[op]["zaxy_before"]
                print(
                    f"  {'':14s} before {b['ms']:6.2f} ms ({b['cpu_ms']:.2f} CPU): after / before "
                    f"{z['ms'] / b['ms']:.2f}x time, {z['cpu_ms'] / b['cpu_ms']:.2f}x CPU"
                )
        print(
            f"  (the first list after the writes, which builds the index: {c['first_list_builds_index']['ms']:.0f} ms)"
        )
    print(f"(wall {report['wall_seconds']:.0f} s)")


def _store_row(items: int, row: dict[str, Any]) -> str:
    z, s = row["zaxy"], row["sqlite"]
    line = (
        f"{items:>9,} items  zaxy {z['ms']:8.2f} ms ({z['cpu_ms']:.2f} CPU) {z['rss_mb']:6.1f} MB   sqlite "
        f"{s['ms']:8.2f} ms ({s['cpu_ms']:.2f} CPU) {s['rss_mb']:6.1f} MB   ratio {z['ms'] / s['ms']:5.2f}x time, "
        f"{z['cpu_ms'] / s['cpu_ms']:5.2f}x CPU, {_ratio(z, s):5.2f}x RSS   (zaxy CPU: {_parts(z)})"
    )
    if "zaxy_before" in row:
        b = row["zaxy_before"]
        line += (
            f"\n{'':17s}before {b['ms']:6.2f} ms ({b['cpu_ms']:.2f} CPU) {b['rss_mb']:6.1f} MB   ratio to sqlite "
            f"{b['ms'] / s['ms']:5.2f}x time, {b['cpu_ms'] / s['cpu_ms']:5.2f}x CPU; after / before "
            f"{z['ms'] / b['ms']:.2f}x time, {z['cpu_ms'] / b['cpu_ms']:.2f}x CPU   (before CPU: {_parts(b)})"
        )
    return line


def _parts(row: dict[str, Any]) -> str:
    return ", ".join(f"{part} {ms:.2f}" for part, ms in row.get("cpu_parts_ms", {}).items())


def _ratio(ours: dict[str, float], theirs: dict[str, float]) -> float:
    return ours["rss_mb"] / theirs["rss_mb"] if theirs["rss_mb"] > 0 else float("inf")


if __name__ == "__main__":
    main()
