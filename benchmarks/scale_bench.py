"""A whole memory at 1k -> 1M events: ingest, open, first cited answer, close, RSS and disk, with baselines.

Each size builds a memory from a realistic stream (events of 200-2,000 bytes, ~1 KB mean; sessions of 1,000
events; see ``realistic_stream.py``) and measures, in the same run:

* ingest: appending the stream (the log-append baseline), then projecting it batched (catalog + indexes in
  ``derived.sqlite``), then bringing the embedded graph up to date (off the read path);
* a **fresh process**: imports + open + first cited checkout (wall and CPU), its peak RSS, and its close;
* the CLI end to end (``zaxy memory checkout ... --json``), wall and CPU;
* warm checkout latency (p50 / p95) in one process, each question asked in its session;
* optionally (``--whole-memory-checkouts N``) N current-fact questions asked of the **whole memory** (no session,
  no scope: every session is recalled from), ``max_tokens=2000`` as the CLI and MCP default it: p50 / p95 / max
  wall and CPU per checkout in one warm process, the process's first (cold) checkout, and recall of the current
  fact; twice: with the memory unchanged between questions, and with one event appended to one session (and
  projected, unmeasured) before each question (``after_append``: what per-session caches cost after a change);
  ``--baseline-tree DIR`` runs the same children from another source tree (a worktree of main), alternated
  ``--rounds`` times on the same memory, and reports the CPU ratios;
* one-at-a-time append + project (the MCP / hook / LangGraph path) on top of the memory;
* optionally ``zaxy reproject`` (``--reproject``) and ``zaxy serve`` readiness (``--serve``);
* disk: log, derived state, graph;
* the baseline: an SQLite FTS5 index over the same texts (build; fresh process open + query, RSS).

Start-up is measured the way an installed package runs: with its bytecode compiled (``pip install`` compiles it;
a checkout run with ``PYTHONDONTWRITEBYTECODE=1`` recompiles every module in every process). The children use a
private ``PYTHONPYCACHEPREFIX`` compiled once before measuring; ``fresh_process_source_only`` repeats the first
answer without bytecode, to show what compiling costs. CPU times (user + system) are given beside wall times:
on a loaded machine they are the figures that compare across runs.

Usage: python benchmarks/scale_bench.py [--sizes 1000,10000,100000] [--one-by-one 500] [--reproject] [--serve]
       [--whole-memory-checkouts 40] [--only-whole-memory] [--session-size 1000] [--baseline-tree DIR --rounds 2]
       [--workdir DIR] [--keep] [--no-graph] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.realistic_stream import RealisticStream

PYTHON = sys.executable
REPO = str(Path(__file__).resolve().parents[1])

PEAK_RSS = r"""
def peak_rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
try:  # the peak inherited from the forking parent is reset (Linux >= 4.0)
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")
except OSError:
    pass
"""

FIRST_ANSWER = (
    PEAK_RSS
    + r"""
import json, sys, time
started, started_cpu = time.perf_counter(), time.process_time()
from zaxy_agents.fabric import MemoryFabric
imported, imported_cpu = time.perf_counter(), time.process_time()
fabric = MemoryFabric.from_path(sys.argv[1])
packet = fabric.checkout(sys.argv[2], session=sys.argv[3], max_tokens=2000)
answered, answered_cpu = time.perf_counter(), time.process_time()
fabric.close()
closed = time.perf_counter()
print(json.dumps({
    "import_s": imported - started, "open_and_answer_s": answered - imported, "first_answer_s": answered - started,
    "import_cpu_s": imported_cpu - started_cpu, "first_answer_cpu_s": answered_cpu - started_cpu,
    "close_s": closed - answered, "rss_mb": peak_rss_mb(),
    "cited": "eventloom://" in packet.prompt, "answer": packet.prompt,
}))
"""
)

WARM_QUERIES = r"""
import json, sys, time
from zaxy_agents.fabric import MemoryFabric
questions = json.loads(sys.argv[2])
with MemoryFabric.from_path(sys.argv[1]) as fabric:
    fabric.checkout("warm up", session=questions[0][1])
    samples, hits = [], 0
    for question, session, citation in questions:
        started = time.perf_counter()
        packet = fabric.checkout(question, session=session, max_tokens=2000)
        samples.append((time.perf_counter() - started) * 1000)
        hits += citation in packet.prompt
print(json.dumps({"samples_ms": samples, "recall": hits / len(questions)}))
"""

WHOLE_MEMORY = r"""
import json, os, sys, time
from zaxy_agents.fabric import MemoryFabric
questions = json.loads(sys.argv[2])
append = sys.argv[3] == "append"
sessions = sorted(name[:-6] for name in os.listdir(sys.argv[1]) if name.endswith(".jsonl"))
with MemoryFabric.from_path(sys.argv[1]) as fabric:
    started, started_cpu = time.perf_counter(), time.process_time()
    fabric.checkout("warm up", max_tokens=2000)
    first = {"wall_ms": (time.perf_counter() - started) * 1000, "cpu_ms": (time.process_time() - started_cpu) * 1000}
    walls, cpus, hits = [], [], 0
    for number, (question, citation) in enumerate(questions):
        if append:  # one event in one session since the last checkout, projected (as the MCP path does)
            session = sessions[(number * 37) % len(sessions)]
            payload = {"decision": f"bench decision {number} {time.time_ns()}", "topic": f"bench {number}"}
            fabric.append(session, "decision.recorded", payload)
            fabric.project([session])
        started, started_cpu = time.perf_counter(), time.process_time()
        packet = fabric.checkout(question, max_tokens=2000)
        cpus.append((time.process_time() - started_cpu) * 1000)
        walls.append((time.perf_counter() - started) * 1000)
        hits += citation in packet.prompt
import resource
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"wall_ms": walls, "cpu_ms": cpus, "recall": hits / len(questions), "first": first, "rss_mb": rss_mb}))
"""

FTS_OPEN = (
    PEAK_RSS
    + r"""
import json, sqlite3, sys, time
started = time.perf_counter()
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 10", (sys.argv[2],)).fetchall()
print(json.dumps({"open_and_answer_s": time.perf_counter() - started,
                  "rss_mb": peak_rss_mb(), "hits": len(rows)}))
"""
)


_BYTECODE: dict[str, str] = {}


def _child_env(*, bytecode: bool = True) -> dict[str, str]:
    """The children's environment: warnings off and, by default, the package's bytecode compiled once into a
    private cache (as an installed package has it) instead of recompiling every module in every process."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    if not _BYTECODE:
        _BYTECODE["prefix"] = tempfile.mkdtemp(prefix="zaxy-pycache-")
        _BYTECODE["empty"] = tempfile.mkdtemp(prefix="zaxy-nopycache-")
        compiled = {**env, "PYTHONPYCACHEPREFIX": _BYTECODE["prefix"]}
        compiled.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run([PYTHON, "-m", "compileall", "-q", "zaxy_agents"], cwd=REPO, env=compiled, check=True)
    if not bytecode:  # an empty cache that is never written: every module compiles from source
        return {**env, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": _BYTECODE["empty"]}
    env["PYTHONPYCACHEPREFIX"] = _BYTECODE["prefix"]
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_json(
    code: str, *args: str, timeout: float = 3600, bytecode: bool = True, tree: str | None = None
) -> dict[str, Any]:
    """Run ``code`` in a fresh process and return the JSON of its last line. ``tree``: import ``zaxy_agents``
    from that source tree instead of this one (a baseline measured in the same run)."""
    env = _child_env(bytecode=bytecode)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [tree, env.get("PYTHONPATH")]))
    result = subprocess.run(
        [PYTHON, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=tree or REPO,
        timeout=timeout,
        env=env,
    )
    if result.returncode != 0:
        raise RuntimeError(f"child failed: {result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    pick = lambda q: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)  # noqa: E731
    return {"p50_ms": pick(0.5), "p95_ms": pick(0.95), "max_ms": round(ordered[-1], 2)}


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def _questions(facts: list[tuple[str, str, str]], count: int, rng: random.Random) -> list[tuple[str, str, str]]:
    """(question, session, citation prefix of the current value) for facts that were asserted."""
    picked = rng.sample(facts, min(count, len(facts)))
    return [
        (f"what is the {predicate} of {subject}?", session, citation)
        for subject, predicate, session, citation in picked
    ]  # type: ignore[misc]


def _whole_memory_questions(
    facts: list[tuple[str, str, str, str]], count: int, rng: random.Random
) -> list[tuple[str, str]]:
    """(question, citation of the current value) for facts whose subject and predicate were asserted in one session
    only: asked of the whole memory, that session's current value is the one right answer."""
    sessions: dict[tuple[str, str], list[str]] = {}
    for subject, predicate, _session, citation in facts:
        sessions.setdefault((subject, predicate), []).append(citation)
    unique = sorted((pair, citations[0]) for pair, citations in sessions.items() if len(citations) == 1)
    picked = rng.sample(unique, min(count, len(unique)))
    return [(f"what is the {predicate} of {subject}?", citation) for (subject, predicate), citation in picked]


def whole_memory_checkouts(
    root: Path, facts: list[tuple[str, str, str, str]], count: int, *, append: bool = False, tree: str | None = None
) -> dict[str, Any]:
    """Checkouts with no session and no scope (the whole memory), in one warm process: wall and CPU percentiles,
    and the process's first (cold) checkout. ``append``: one event is appended to one session (and projected)
    before each question, unmeasured, so each checkout follows a change (what caches must survive)."""
    questions = _whole_memory_questions(facts, count, random.Random(count))
    measured = _run_json(WHOLE_MEMORY, str(root), json.dumps(questions), "append" if append else "", tree=tree)
    cpu = _percentiles(measured["cpu_ms"])
    return {
        "questions": len(questions),
        **_percentiles(measured["wall_ms"]),
        "cpu_p50_ms": cpu["p50_ms"],
        "cpu_p95_ms": cpu["p95_ms"],
        "cpu_max_ms": cpu["max_ms"],
        "first_checkout_ms": round(measured["first"]["wall_ms"], 1),
        "first_checkout_cpu_ms": round(measured["first"]["cpu_ms"], 1),
        "current_fact_recall": round(measured["recall"], 3),
        "peak_rss_mb": round(measured["rss_mb"], 1),
    }


def whole_memory_rounds(root: Path, facts: list[tuple[str, str, str, str]], args: argparse.Namespace) -> dict:
    """Whole-memory checkouts unchanged and after an append, from this tree and (``--baseline-tree``) another,
    alternated ``--rounds`` times on the same memory; the ratios compare CPU p50 / p95 with the baseline's."""
    trees = {"this": None, **({"baseline": str(args.baseline_tree.resolve())} if args.baseline_tree else {})}
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for _ in range(args.rounds):
        for mode in ("unchanged", "after_append"):
            for name, tree in trees.items():
                found = whole_memory_checkouts(
                    root, facts, args.whole_memory_checkouts, append=mode == "after_append", tree=tree
                )
                runs.setdefault(mode, {}).setdefault(name, []).append(found)
    report: dict[str, Any] = {"rounds": args.rounds, "baseline_tree": trees.get("baseline")}
    for mode, by_tree in runs.items():
        report[mode] = by_tree
        if "baseline" in by_tree:
            report[f"{mode}_cpu_ratio"] = {
                stat: round(
                    statistics.median(r[stat] for r in by_tree["this"])
                    / max(statistics.median(r[stat] for r in by_tree["baseline"]), 1e-9),
                    3,
                )
                for stat in ("cpu_p50_ms", "cpu_p95_ms", "first_checkout_cpu_ms")
            }
    return report


def build(
    root: Path, size: int, results: dict[str, Any], *, graph: bool = True, session_size: int = 1000
) -> list[tuple[str, str, str, str]]:
    from zaxy_agents.fabric import MemoryFabric

    stream = RealisticStream(seed=size, session_size=session_size)
    facts: dict[tuple[str, str, str], str] = {}
    texts: list[str] = []
    appended = 0.0
    with MemoryFabric.from_path(root, durability="batch") as fabric:
        for session, drafts in stream.sessions(size):
            for start in range(0, len(drafts), 1000):
                chunk = drafts[start : start + 1000]
                started = time.perf_counter()
                events = fabric.append_many(session, chunk)
                appended += time.perf_counter() - started
                for draft, event in zip(chunk, events, strict=True):
                    payload = draft["payload"]
                    texts.append(json.dumps(payload))
                    if draft["type"] == "fact.asserted":
                        facts[(payload["subject"], payload["predicate"], session)] = event.citation
        results["append_events_per_s"] = round(size / appended)
        started = time.perf_counter()
        fabric.project()
        projected = time.perf_counter() - started
        results["ingest_project_events_per_s"] = round(size / projected)
        results["ingest_total_events_per_s"] = round(size / (projected + appended))
        if graph:
            started = time.perf_counter()
            fabric.projector.store  # noqa: B018 - brings the graph up to date
            results["graph_catch_up_events_per_s"] = round(size / (time.perf_counter() - started))
        else:  # --no-graph: the graph is off the read path; a checkout never waits for it
            results["graph_catch_up_events_per_s"] = "skipped (--no-graph)"
        started = time.perf_counter()
    results["close_after_ingest_s"] = round(time.perf_counter() - started, 3)
    _fts_baseline(root.parent / f"fts-{size}.sqlite", texts, results)
    return [(subject, predicate, session, citation) for (subject, predicate, session), citation in facts.items()]


def _fts_baseline(path: Path, texts: list[str], results: dict[str, Any]) -> None:
    started = time.perf_counter()
    db = sqlite3.connect(path)
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(text)")
    db.executemany("INSERT INTO docs(text) VALUES (?)", [(text,) for text in texts])
    db.commit()
    db.close()
    results["fts5_build_events_per_s"] = round(len(texts) / (time.perf_counter() - started))
    results["fts5_bytes"] = _size(path)


def measure(root: Path, size: int, facts: list[tuple[str, str, str, str]], args: argparse.Namespace) -> dict:
    results: dict[str, Any] = {}
    if args.whole_memory_checkouts:
        results["whole_memory_checkout"] = whole_memory_rounds(root, facts, args)
    if args.only_whole_memory:
        return results
    rng = random.Random(size)
    questions = _questions(facts, 40, rng)
    question, session, citation = questions[0]
    # unmeasured: the private bytecode cache holds only zaxy_agents until a child has imported the dependencies
    # (numpy, pydantic, ...), which an installed environment has compiled at install time too
    _run_json(FIRST_ANSWER, str(root), question, session)
    first = _run_json(FIRST_ANSWER, str(root), question, session)
    results["fresh_process"] = {
        k: round(v, 3) if isinstance(v, float) else v for k, v in first.items() if k != "answer"
    }
    results["fresh_process"]["current_fact_cited"] = citation in first["answer"]
    source_only = _run_json(FIRST_ANSWER, str(root), question, session, bytecode=False)
    results["fresh_process_source_only"] = {
        k: round(source_only[k], 3) for k in ("import_s", "first_answer_s", "import_cpu_s", "first_answer_cpu_s")
    }
    runs, cpu = [], []
    for _ in range(3):
        started, started_cpu = time.perf_counter(), _children_cpu()
        cli = subprocess.run(
            [
                PYTHON,
                "-m",
                "zaxy_agents.cli.entry",
                "memory",
                "checkout",
                question,
                "--session-id",
                session,
                "--eventloom-path",
                str(root),
                "--json",
            ],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=_child_env(),
        )
        runs.append(time.perf_counter() - started)
        cpu.append(_children_cpu() - started_cpu)
        assert cli.returncode == 0, cli.stderr[-2000:]
    results["cli_checkout_s"] = round(statistics.median(runs), 3)
    results["cli_checkout_cpu_s"] = round(statistics.median(cpu), 3)
    warm = _run_json(WARM_QUERIES, str(root), json.dumps(questions))
    results["warm_checkout"] = _percentiles(warm["samples_ms"])
    results["warm_checkout"]["current_fact_recall"] = round(warm["recall"], 3)
    fts = root.parent / f"fts-{size}.sqlite"
    words = question.rstrip("?").split()[-1]
    results["fts5_fresh_process"] = {
        k: round(v, 4) if isinstance(v, float) else v for k, v in _run_json(FTS_OPEN, str(fts), words).items()
    }
    derived = root / ".zaxy"
    results["disk_bytes"] = {
        "log": sum(p.stat().st_size for p in root.glob("*.jsonl")),
        "derived_sqlite": _size(derived / "derived.sqlite") + _size(derived / "derived.sqlite-wal"),
        "listeners_state": _size(derived / "listeners.state"),
        "graph_kuzu": _size(derived / "graph.kuzu"),
    }
    disk = results["disk_bytes"]
    results["derived_over_log"] = round(
        (disk["derived_sqlite"] + disk["listeners_state"] + disk["graph_kuzu"]) / max(disk["log"], 1), 2
    )
    if args.one_by_one:
        results["one_by_one"] = one_by_one(root, args.one_by_one)
    if args.reproject:
        started = time.perf_counter()
        cli = subprocess.run(
            [PYTHON, "-m", "zaxy_agents.cli.entry", "reproject", "--eventloom-path", str(root), "--json"],
            capture_output=True,
            text=True,
            cwd=REPO,
        )
        assert cli.returncode == 0, cli.stderr[-2000:]
        results["reproject_s"] = round(time.perf_counter() - started, 2)
    if args.serve:
        results["serve"] = serve_ready(root, question, session)
    return results


ONE_BY_ONE = r"""
import json, sys, time
from benchmarks.realistic_stream import RealisticStream
from zaxy_agents.fabric import MemoryFabric
count = int(sys.argv[2])
drafts = [RealisticStream(seed=99).draft(i) for i in range(count)]
with MemoryFabric.from_path(sys.argv[1]) as fabric:
    fabric.project()
    fabric.projector.follow_graph()
    started = time.perf_counter()
    for draft in drafts:
        fabric.append("live", draft["type"], draft["payload"])
        fabric.project(["live"])
    elapsed = time.perf_counter() - started
    lag = fabric.projector.graph.lag_events()
    started = time.perf_counter()
    fabric.projector.flush(None)
    drained = time.perf_counter() - started
print(json.dumps({"events_per_s": count / elapsed, "graph_lag_events_at_end": lag, "graph_drain_s": drained}))
"""


def one_by_one(root: Path, count: int) -> dict[str, Any]:
    result = _run_json(ONE_BY_ONE, str(root), str(count))
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}


SERVE_PAUSE_S = 4.0


def serve_ready(root: Path, question: str, session: str) -> dict[str, Any]:
    """Time from spawning `zaxy serve` (stdio MCP) to the first memory_checkout answer, over a real client; then,
    in a second server, how long the first call takes when the client pauses after initialize."""
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def run(pause: float) -> dict[str, float]:
        params = StdioServerParameters(
            command=PYTHON,
            args=["-m", "zaxy_agents.cli.entry", "serve", "--eventloom-path", str(root)],
            env=_child_env(),
            cwd=REPO,
        )
        started = time.perf_counter()
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            initialised = time.perf_counter()
            await asyncio.sleep(pause)
            called = time.perf_counter()
            await client.call_tool("memory_checkout", {"query": question, "session_id": session})
            answered = time.perf_counter()
        return {
            "initialize_s": initialised - started,
            "first_checkout_s": answered - started - pause,
            "first_call_s": answered - called,
        }

    started_cpu = _children_cpu()
    timings = asyncio.run(run(0.0))
    # the server's whole life (start-up, first checkout, shutdown), counted once it has exited
    timings["server_cpu_s"] = _children_cpu() - started_cpu
    # an agent usually thinks between initialize and its first call: the call alone, after SERVE_PAUSE_S idle
    timings["first_call_after_pause_s"] = asyncio.run(run(SERVE_PAUSE_S))["first_call_s"]
    return {k: round(v, 3) for k, v in timings.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--one-by-one", type=int, default=500)
    parser.add_argument("--reproject", action="store_true")
    parser.add_argument("--serve", action="store_true")
    parser.add_argument(
        "--whole-memory-checkouts",
        type=int,
        default=0,
        help="N current-fact questions asked of the whole memory (no session): p50/p95 wall and CPU, recall",
    )
    parser.add_argument(
        "--only-whole-memory",
        action="store_true",
        help="measure only the whole-memory checkouts (on a kept memory: --keep --workdir DIR)",
    )
    parser.add_argument(
        "--baseline-tree",
        type=Path,
        default=None,
        help="a source tree (a git worktree of main) whose whole-memory checkouts run alternated with this one's",
    )
    parser.add_argument("--rounds", type=int, default=1, help="alternated rounds of the whole-memory checkouts")
    parser.add_argument(
        "--session-size",
        type=int,
        default=1000,
        help="events per session (fewer, smaller sessions: the per-session cost of a whole-memory checkout)",
    )
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the memories (and reuse them when present)")
    parser.add_argument(
        "--no-graph",
        action="store_true",
        help="do not build the embedded graph (off the read path): a 1M-event memory without hours of graph writes",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="zaxy-scale-"))
    report: dict[str, Any] = {}
    try:
        for size in (int(part) for part in args.sizes.split(",")):
            root = workdir / f"memory-{size}"
            results: dict[str, Any] = {"events": size}
            facts_file = workdir / f"facts-{size}.json"
            if args.keep and facts_file.exists() and root.exists():
                facts = [tuple(item) for item in json.loads(facts_file.read_text())]
            else:
                shutil.rmtree(root, ignore_errors=True)
                facts = build(root, size, results, graph=not args.no_graph, session_size=args.session_size)
                facts_file.write_text(json.dumps(facts))
            results.update(measure(root, size, facts, args))  # type: ignore[arg-type]
            report[str(size)] = results
            if not args.json:
                print(json.dumps(results, indent=2), flush=True)
    finally:
        for cache in _BYTECODE.values():
            shutil.rmtree(cache, ignore_errors=True)
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
