"""The embedded graph on LadybugDB 0.22.0 (now) against Kuzu 0.11.3 (main before the switch), same events, same run.

Kuzu is archived upstream; Zaxy's embedded graph now runs on LadybugDB (PyPI ``ladybug``), its maintained fork.
This script measures what the switch changed: each engine runs Zaxy's own graph store over the same realistic log
(``realistic_stream.py``) in a child process (the two engines' bindings cannot share a process):

* ``ladybug``: this tree (``storage/files/ladybug_store.py``, file ``graph.lbug``);
* ``kuzu``: the baseline, a tree of main before the switch (``--before DIR``: e.g. ``git worktree add /tmp/before
  <commit>`` or ``git archive <commit> | tar -x -C /tmp/before``; its ``kuzu_store.py``, file ``graph.kuzu``), run
  with ``kuzu==0.11.3`` installed in this environment (``pip install kuzu==0.11.3``; no longer a dependency).

Measured per engine: the graph file after catching up from the log, catch-up wall / CPU time and the child's peak
RSS, then on the reopened file key lookups (``key_states``, what the planner reads when it continues from the
graph), 2-hop traversals, keyword search over entities, and digests of the canonical dump and of the answers (which
must be the same on both engines). Also, per engine, an engine-level check of 2-hop Cypher patterns against a Python
ground truth (``--hops``: LadybugDB 0.22.0 answers some wrongly, see docs/graph-schema.md) and what the first row of
a node table costs on disk.

Usage: python benchmarks/graph_engine_bench.py --before DIR [--sizes 26,10000] [--engines kuzu,ladybug]
       [--queries 50] [--buffer-pool-mb N] [--workdir DIR] [--keep] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
ENGINES = ("kuzu", "ladybug")


def build_log(root: Path, size: int) -> None:
    """The memory without its graph: the log and ``derived.sqlite`` (the graph is what each engine builds)."""
    sys.path.insert(0, str(HERE))
    from benchmarks.realistic_stream import RealisticStream
    from zaxy_agents.fabric import MemoryFabric

    with MemoryFabric.from_path(root, durability="batch", use_graph=False) as fabric:
        for session, drafts in RealisticStream(seed=size).sessions(size):
            for start in range(0, len(drafts), 1000):
                fabric.append_many(session, drafts[start : start + 1000])
        fabric.project()


def _store_module(engine: str) -> Any:
    name = "kuzu_store" if engine == "kuzu" else "ladybug_store"
    return importlib.import_module(f"zaxy_agents.storage.files.{name}")


def _rss_mb() -> int:
    """This process's resident set now (Linux), MB."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmRSS:"))


def _reset_peak_rss() -> None:
    """Start VmHWM (the peak resident set) again from now (Linux >= 4.0: write 5 to clear_refs)."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


def _peak_rss_mb() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmHWM:"))


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


def _timed(samples: list[float], function: Any, *args: Any, **kwargs: Any) -> Any:
    started = time.perf_counter()
    result = function(*args, **kwargs)
    samples.append((time.perf_counter() - started) * 1000)
    return result


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2) if ordered else 0.0


def child(engine: str, root: Path, queries: int, buffer_pool_mb: int | None) -> dict[str, Any]:
    """Build the graph of ``root`` with ``engine`` (the tree on sys.path), reopen it, query it; one JSON line."""
    from zaxy_agents.fabric import MemoryFabric

    module = _store_module(engine)
    if buffer_pool_mb:
        module.BUFFER_POOL_BYTES = buffer_pool_mb * 1024 * 1024
    result: dict[str, Any] = {"engine": engine, "buffer_pool_mb": module.BUFFER_POOL_BYTES // (1024 * 1024)}
    with MemoryFabric.from_path(root) as fabric:
        projector = fabric.projector  # opened first: the derived state catch-up (an index a tree rebuilds) is untimed
        _reset_peak_rss()
        result["rss_before_catch_up_mb"] = _rss_mb()  # the projector open (with whatever its tree rebuilt)
        started, cpu = time.perf_counter(), _cpu()
        store = projector.store  # catches the graph up from the log
        if store is None:  # what the graph sync recorded (a failed write, another process holding the file)
            graph = fabric.projector.graph
            raise RuntimeError(f"the graph did not open: {graph.error or graph.unavailable or 'no reason recorded'}")
        result["catch_up_s"] = round(time.perf_counter() - started, 3)
        result["catch_up_cpu_s"] = round(_cpu() - cpu, 3)
        result["catch_up_peak_rss_mb"] = _peak_rss_mb()  # from the projector opened to the graph caught up
        result["reopened"] = getattr(store, "reopened", 0)
        store.checkpoint()
        graph_path = fabric.projector.graph.path
    result["graph_file"] = graph_path.name
    result["graph_bytes"] = graph_path.stat().st_size
    rss_before = _rss_mb()
    with MemoryFabric.from_path(root) as fabric:
        store = fabric.projector.store
        result["reopen_rss_growth_mb"] = _rss_mb() - rss_before  # the graph opened again, nothing read yet
        keys = [row[0] for row in store._rows("MATCH (k:EntityKey) RETURN k.id ORDER BY k.id")]
        picked = random.Random(7).sample(keys, min(queries, len(keys)))
        lookups: list[float] = []
        _timed(lookups, store.key_states, keys[:2000])  # one planner prefetch (first call: cold pages)
        lookups.clear()
        for _ in range(5):
            states = _timed(lookups, store.key_states, keys[:2000])
        result["key_states_2000_ms_p50"] = _p(lookups, 0.5)
        result["key_states_found"] = len(states)
        traversals: list[float] = []
        answers = hashlib.sha256()  # what the traversals and searches returned: the same on every engine?
        reached = 0
        for key in picked:
            hits = _timed(traversals, store.traverse, [key], depth=2)
            reached += len(hits)
            answers.update(repr(sorted((h.entity.id, h.depth, h.direction, h.via.id) for h in hits)).encode())
        result["traverse_depth2_ms_p50"], result["traverse_depth2_ms_p95"] = _p(traversals, 0.5), _p(traversals, 0.95)
        result["traverse_hits"] = reached
        searches: list[float] = []
        names = [row[0] for row in store._rows("MATCH (k:EntityKey) RETURN k.name ORDER BY k.id LIMIT 200")]
        found = 0
        for name in random.Random(8).sample(names, min(queries, len(names))):
            hits = _timed(searches, store.search_entities, " ".join(name.split()[:2]), limit=10)
            found += len(hits)
            answers.update(repr([(version.id, score) for version, score in hits]).encode())
        result["search_ms_p50"], result["search_ms_p95"] = _p(searches, 0.5), _p(searches, 0.95)
        result["search_hits"] = found
        digest = hashlib.sha256()
        for line in store.dump_lines():
            digest.update(line.encode() + b"\n")
        result["dump_digest"] = digest.hexdigest()[:16]
        result["answers_digest"] = answers.hexdigest()[:16]
        result["rss_growth_after_queries_mb"] = _rss_mb() - rss_before
    result["one_row_node_table_bytes"] = one_row_tables(engine, root.with_name(f"{root.name}-one-row"))
    result["two_hop_wrong_of_100"] = two_hop_truth(engine, root.with_name(f"{root.name}-hops"))
    if engine == "ladybug":
        result["disk_size_info"] = _disk_size_info(graph_path)
        kuzu_file = root.with_name(root.name.replace("ladybug", "kuzu", 1)) / ".zaxy" / "graph.kuzu"
        if kuzu_file.exists():  # the Kuzu child of this run wrote it
            result["opens_kuzu_0_11_file"] = opens_kuzu_file(kuzu_file)
    return result


def opens_kuzu_file(path: Path) -> str:
    """Whether LadybugDB opens a file Kuzu 0.11.3 wrote (its error message if not)."""
    import ladybug

    try:
        database = ladybug.Database(str(path), read_only=True)
    except RuntimeError as exc:
        return f"no: {exc}"
    try:
        rows = ladybug.Connection(database).execute("MATCH (e:Event) RETURN count(e)").get_all()
        return f"yes ({rows[0][0]} events)"
    finally:
        database.close()


def one_row_tables(engine: str, folder: Path) -> dict[str, int]:
    """What one row costs the engine: the file size growth of a checkpointed database when a node table with one
    key column (STRING, INT64, SERIAL) gets its first row (the primary-key index, for the most part)."""
    db = importlib.import_module(engine)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    grown = {}
    for kind in ("STRING", "INT64", "SERIAL"):
        path = folder / f"{kind}.db"
        database = db.Database(str(path))
        connection = db.Connection(database)
        connection.execute(f"CREATE NODE TABLE T(id {kind}, n INT64, PRIMARY KEY(id))")
        connection.execute("CHECKPOINT")
        empty = path.stat().st_size
        literal = {"INT64": "1", "STRING": "'a'"}.get(kind)
        connection.execute("CREATE (:T {n: 1})" if literal is None else f"CREATE (:T {{id: {literal}, n: 1}})")
        connection.execute("CHECKPOINT")
        database.close()
        grown[kind] = path.stat().st_size - empty
    return grown


def two_hop_truth(engine: str, folder: Path) -> dict[str, int]:
    """Seeds (of 100) whose 2-hop answer differs from a Python ground truth, per pattern shape, on a random graph
    (2,000 nodes, 8,000 edges with a weight)."""
    import pyarrow as pa

    db = importlib.import_module(engine)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    database = db.Database(str(folder / "hops.db"))
    connection = db.Connection(database)
    connection.execute("CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))")
    connection.execute("CREATE REL TABLE R(FROM N TO N, w INT64)")
    rng = random.Random(5)
    nodes = 2000
    edges = [(rng.randrange(nodes), rng.randrange(nodes), rng.randrange(100)) for _ in range(8000)]
    connection.execute("UNWIND range(0, $n - 1) AS i CREATE (:N {id: i})", {"n": nodes})
    columns = {"from": [e[0] for e in edges], "to": [e[1] for e in edges], "w": [e[2] for e in edges]}
    connection.execute("COPY R FROM $t", {"t": pa.table(columns)})
    out: dict[int, list[tuple[int, int]]] = {}
    for source, target, weight in edges:
        out.setdefault(source, []).append((target, weight))

    def truth(seed: int, near: bool, far: bool) -> list[int]:
        return sorted(
            {x for b, w1 in out.get(seed, []) if not near or w1 > 30 for x, w2 in out.get(b, []) if not far or w2 < 70}
        )

    shapes = {
        "filter on the near rel": ("r1.w > 30", True, False),
        "filter on the far rel": ("r2.w < 70", False, True),
        "filters on both": ("r1.w > 30 AND r2.w < 70", True, True),
    }
    seeds = rng.sample(range(nodes), 100)
    wrong = {}
    for name, (condition, near, far) in shapes.items():
        query = f"MATCH (a:N)-[r1:R]->(b:N)-[r2:R]->(x:N) WHERE a.id = $s AND {condition} RETURN DISTINCT x.id"
        wrong[name] = sum(
            sorted(row[0] for row in connection.execute(query, {"s": s}).get_all()) != truth(s, near, far)
            for s in seeds
        )
    staged = "MATCH (a:N)-[r1:R]->(b:N) WHERE a.id = $s AND r1.w > 30 WITH DISTINCT b MATCH (b)-[r2:R]->(x:N) "
    staged += "WHERE r2.w < 70 RETURN DISTINCT x.id"
    wrong["both, staged with WITH"] = sum(
        sorted(row[0] for row in connection.execute(staged, {"s": s}).get_all()) != truth(s, True, True) for s in seeds
    )
    database.close()
    return wrong


def _disk_size_info(path: Path) -> dict[str, int]:
    import ladybug

    database = ladybug.Database(str(path), read_only=True)
    try:
        rows = ladybug.Connection(database).execute("CALL disk_size_info() RETURN *").get_all()
    finally:
        database.close()
    sizes: dict[str, int] = {}
    for kind, _name, _pages, size in rows:
        label = "hash index" if kind == "index" or kind.startswith("pk_index") else kind
        if kind != "total":
            sizes[label] = sizes.get(label, 0) + int(size)
    return sizes


def _run_child(engine: str, tree: Path, root: Path, queries: int, buffer_pool_mb: int | None) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", engine, str(tree), str(root), "--queries", str(queries)]
    command += ["--buffer-pool-mb", str(buffer_pool_mb)] if buffer_pool_mb else []
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=tree)
    if done.returncode != 0:
        return {"engine": engine, "error": (done.stderr.strip().splitlines() or ["(no output)"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def measure(
    size: int, engines: list[str], workdir: Path, queries: int, before: Path | None, buffer_pool_mb: int | None
) -> dict[str, Any]:
    base = workdir / f"log-{size}"
    started = time.perf_counter()
    if not base.exists():  # --workdir with --keep reuses a log built earlier
        build_log(base, size)
    report: dict[str, Any] = {"events": size, "build_log_s": round(time.perf_counter() - started, 1)}
    log_bytes = sum(p.stat().st_size for p in base.rglob("*.jsonl") if p.is_file())
    report["log_bytes"] = log_bytes
    results = {}
    for engine in engines:
        if engine == "kuzu" and (before is None or _version("kuzu") is None):
            results[engine] = {"engine": engine, "skipped": "needs --before DIR and `pip install kuzu==0.11.3`"}
            continue
        root = workdir / f"{engine}-{size}"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(base, root)
        tree = before if engine == "kuzu" else HERE
        results[engine] = _run_child(engine, tree, root, queries, buffer_pool_mb)
    baseline = results.get("kuzu", {})
    for result in results.values():
        if "graph_bytes" in result and "graph_bytes" in baseline:
            result["size_vs_kuzu"] = round(result["graph_bytes"] / baseline["graph_bytes"], 3)
            result["catch_up_cpu_vs_kuzu"] = round(result["catch_up_cpu_s"] / max(baseline["catch_up_cpu_s"], 1e-9), 2)
            result["same_graph_as_kuzu"] = result["dump_digest"] == baseline["dump_digest"]
            result["same_answers_as_kuzu"] = result["answers_digest"] == baseline["answers_digest"]
        if "graph_bytes" in result:
            result["graph_over_log"] = round(result["graph_bytes"] / max(log_bytes, 1), 2)
    report["engines"] = results
    return report


def _print(reports: list[dict[str, Any]]) -> None:
    columns = [
        ("file MB", lambda r: f"{r['graph_file']} {r['graph_bytes'] / 1e6:.2f}"),
        ("x kuzu", lambda r: r.get("size_vs_kuzu", "-")),
        ("x log", lambda r: r["graph_over_log"]),
        ("catch-up s (CPU)", lambda r: f"{r['catch_up_s']} ({r['catch_up_cpu_s']})"),
        ("CPU x kuzu", lambda r: r.get("catch_up_cpu_vs_kuzu", "-")),
        ("peak RSS MB (before)", lambda r: f"{r['catch_up_peak_rss_mb']} ({r['rss_before_catch_up_mb']})"),
        ("RSS +MB open/queries", lambda r: f"{r.get('reopen_rss_growth_mb')}/{r.get('rss_growth_after_queries_mb')}"),
        ("reopens", lambda r: r["reopened"]),
        ("key_states 2k ms", lambda r: r["key_states_2000_ms_p50"]),
        ("traverse p50/p95 ms", lambda r: f"{r['traverse_depth2_ms_p50']}/{r['traverse_depth2_ms_p95']}"),
        ("search p50/p95 ms", lambda r: f"{r['search_ms_p50']}/{r['search_ms_p95']}"),
        (
            "same graph / answers",
            lambda r: f"{r.get('same_graph_as_kuzu', '-')} / {r.get('same_answers_as_kuzu', '-')}",
        ),
    ]
    for report in reports:
        print(f"\n{report['events']} events (log {report['log_bytes'] / 1e6:.2f} MB)")
        print("| engine | " + " | ".join(name for name, _ in columns) + " |")
        print("|---" * (len(columns) + 1) + "|")
        for engine, result in report["engines"].items():
            if "graph_bytes" not in result:
                print(f"| {engine} | {result.get('skipped') or result.get('error')} |")
                continue
            print(f"| {engine} | " + " | ".join(str(render(result)) for _, render in columns) + " |")
        for engine, result in report["engines"].items():
            if "one_row_node_table_bytes" in result:
                grown = ", ".join(f"{k} {v / 1e6:.3f} MB" for k, v in result["one_row_node_table_bytes"].items())
                print(f"{engine}: the first row of a node table keyed by {grown}")
                print(f"{engine}: 2-hop answers wrong (of 100 seeds): {result['two_hop_wrong_of_100']}")
            if "disk_size_info" in result:
                parts = ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in sorted(result["disk_size_info"].items()) if v)
                print(f"{engine}: {parts}; opens a Kuzu 0.11.3 file: {result.get('opens_kuzu_0_11_file', '-')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="26,10000")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--before", type=Path, help="a tree of main before the switch (the Kuzu baseline)")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--buffer-pool-mb", type=int, help="the graph's buffer pool (default: each store's own)")
    parser.add_argument("--child", nargs=3, metavar=("ENGINE", "TREE", "ROOT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        engine, tree, root = args.child
        sys.path.insert(0, tree)  # the tree's zaxy_agents (before the switch for kuzu), ahead of the installed one
        print(json.dumps(child(engine, Path(root), args.queries, args.buffer_pool_mb)))
        return
    engines = [engine for engine in args.engines.split(",") if engine]
    unknown = sorted(set(engines) - set(ENGINES))
    if unknown:
        parser.error(f"--engines: unknown {unknown}; choose from {', '.join(ENGINES)}")
    before = args.before.resolve() if args.before else None
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="zaxy-graph-engines-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        sizes = [int(size) for size in args.sizes.split(",")]
        reports = [measure(size, engines, workdir, args.queries, before, args.buffer_pool_mb) for size in sizes]
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        print(json.dumps({"kuzu": _version("kuzu"), "ladybug": _version("ladybug"), "reports": reports}, indent=2))
        return
    print(f"kuzu {_version('kuzu')} (main before the switch), ladybug {_version('ladybug')} (this tree); ", end="")
    print(f"{args.queries} queries of each kind")
    _print(reports)


if __name__ == "__main__":
    main()
