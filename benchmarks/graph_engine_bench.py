"""The embedded graph on Kuzu 0.11.3 against its maintained fork LadybugDB, same schema, same events, same run.

Kuzu is archived upstream; LadybugDB (PyPI ``ladybug``, earlier ``real_ladybug``) continues it and added
``CALL enable_default_hash_index=false`` (LadybugDB PR #428): node tables without the primary-key hash index that
costs Kuzu 0.11.3 about 1.07 MB per non-empty node table. This script measures what switching would change, without
switching anything: each engine runs Zaxy's own graph store (``storage/files/kuzu_store.py`` and the ``kuzu_*``
modules it is built on, their ``kuzu`` swapped for ``ladybug`` in a child process) over the same realistic log
(``realistic_stream.py``):

* ``graph.kuzu`` on disk after catching up from the log, and what the file holds (``disk_size_info`` on LadybugDB);
* catch-up (projection into the graph) wall and CPU time;
* queries on the reopened file: key lookups (``key_states``, what the planner reads when it continues from the
  graph), 2-hop traversals, keyword search over entities, and the canonical dump's digest, which must be the same
  on every engine (the same graph, or the engine answers differently);
* whether the engine opens a file Kuzu 0.11.3 wrote.

Engines: ``kuzu`` (the baseline), ``ladybug`` (LadybugDB defaults), ``ladybug-nohash`` (no default hash index).
LadybugDB is not a dependency: install it in the environment that runs this (``pip install ladybug``); without it
the LadybugDB engines are reported as skipped.

Usage: python benchmarks/graph_engine_bench.py [--sizes 26,10000] [--engines kuzu,ladybug,ladybug-nohash]
       [--queries 50] [--workdir DIR] [--keep] [--json]
       python benchmarks/graph_engine_bench.py --key-index 100000   (Kuzu's primary-key index: STRING vs INT64)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.realistic_stream import RealisticStream

ENGINES = ("kuzu", "ladybug", "ladybug-nohash")
BUFFER_POOL_MB: int | None = None  # --buffer-pool-mb: the store's own (kuzu_database.BUFFER_POOL_BYTES) when None
SPAN_EVENTS: int | None = None  # --span-events: events per graph transaction of the catch-up (GraphSync.span_events)
GRAPH = Path(".zaxy") / "graph.kuzu"


def build_log(root: Path, size: int) -> None:
    """The memory without its graph: the log and ``derived.sqlite`` (the graph is what each engine builds)."""
    from zaxy_agents.fabric import MemoryFabric

    with MemoryFabric.from_path(root, durability="batch") as fabric:
        for session, drafts in RealisticStream(seed=size).sessions(size):
            for start in range(0, len(drafts), 1000):
                fabric.append_many(session, drafts[start : start + 1000])
        fabric.project()
    for leftover in (root / ".zaxy").glob("graph.*"):
        if leftover.is_dir():
            shutil.rmtree(leftover)
        else:
            leftover.unlink()


def use_engine(engine: str, buffer_pool_mb: int | None = None) -> None:
    """Point the graph store at ``engine`` (in this process only), with the store's buffer pool or a larger one."""
    if engine == "kuzu":
        _buffer_pool(buffer_pool_mb)
        return
    import ladybug

    sys.modules["kuzu"] = ladybug  # the store's `import kuzu` (Database, Connection) gets LadybugDB
    from zaxy_agents.storage.files import kuzu_store

    _buffer_pool(buffer_pool_mb)

    if engine == "ladybug-nohash":
        opened = kuzu_store.KuzuProjectionStore._connection

        def connection(self: Any) -> Any:
            fresh = getattr(self._local, "connection", None) is None
            connection = opened(self)
            if fresh:  # a per-connection option: node tables this connection creates get no default hash index
                connection.execute("CALL enable_default_hash_index=false")
            return connection

        kuzu_store.KuzuProjectionStore._connection = connection


def _buffer_pool(megabytes: int | None) -> None:
    if megabytes:
        from zaxy_agents.storage.files import kuzu_database

        kuzu_database.BUFFER_POOL_BYTES = megabytes * 1024 * 1024


def _cpu() -> float:
    times = __import__("os").times()
    return times.user + times.system


def _timed(samples: list[float], function: Any, *args: Any, **kwargs: Any) -> Any:
    started = time.perf_counter()
    result = function(*args, **kwargs)
    samples.append((time.perf_counter() - started) * 1000)
    return result


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2) if ordered else 0.0


def child(engine: str, root: Path, queries: int, kuzu_file: Path | None, buffer_pool_mb: int | None) -> dict[str, Any]:
    """Build the graph of ``root`` with ``engine``, reopen it, query it; one JSON line of results. (Kuzu and
    LadybugDB cannot both be imported in one process: their bindings register the same type names.)"""
    use_engine(engine, buffer_pool_mb)
    from zaxy_agents.fabric import MemoryFabric

    result: dict[str, Any] = {"engine": engine}
    with MemoryFabric.from_path(root) as fabric:
        if SPAN_EVENTS:  # e.g. the batch size (20,000): one commit per batch, as before spanning transactions
            fabric.projector.graph.span_events = SPAN_EVENTS
        started, cpu = time.perf_counter(), _cpu()
        store = fabric.projector.store  # catches the graph up from the log
        if store is None:  # what the graph sync recorded (a failed write, another process holding the file)
            graph = fabric.projector.graph
            raise RuntimeError(f"the graph did not open: {graph.error or graph.unavailable or 'no reason recorded'}")
        result["catch_up_s"] = round(time.perf_counter() - started, 3)
        result["catch_up_cpu_s"] = round(_cpu() - cpu, 3)
        store.checkpoint()
        if engine == "kuzu":
            result["file_breakdown"] = file_breakdown(store, (root / GRAPH).stat().st_size)
    result["graph_bytes"] = (root / GRAPH).stat().st_size
    with MemoryFabric.from_path(root) as fabric:
        store = fabric.projector.store
        # identities in id order (an identity's id is its session, type and normalised name joined by \x1f; the
        # file may not store it, kuzu_schema.DERIVED_NODE_COLUMNS)
        listed = store._rows("MATCH (k:EntityKey) RETURN k.session_id, k.entity_type, k.norm_name, k.name")
        identities = sorted(("\x1f".join(row[:3]), row[3]) for row in listed)
        keys = [key for key, _name in identities]
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
        names = [name for _key, name in identities[:200]]
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
    result["one_row_node_table_bytes"] = one_row_tables(root.with_name(f"{root.name}-one-row"))
    if engine != "kuzu":
        result["disk_size_info"] = _disk_size_info(root / GRAPH)
        if kuzu_file is not None:
            result["opens_kuzu_0_11_file"] = opens_kuzu_file(kuzu_file)
    return result


def file_breakdown(store: Any, total: int) -> dict[str, int]:
    """What a Kuzu 0.11.3 file holds: column pages (``CALL storage_info`` of every table), free pages (``CALL
    FSM_INFO()``: pages a commit freed that the file keeps) and the rest (primary-key hash indexes, catalog)."""
    columns = 0
    for (name,) in store._rows("CALL SHOW_TABLES() RETURN name"):
        columns += sum(pages for (pages,) in store._rows(f'CALL storage_info("{name}") RETURN num_pages')) * 4096
    free = sum(pages for _start, pages in store._rows("CALL FSM_INFO() RETURN *")) * 4096
    return {"columns": columns, "free": free, "indexes_and_catalog": total - columns - free}


def key_index_bytes(folder: Path, rows: int) -> dict[str, dict[str, int]]:
    """A node table's primary-key hash index on Kuzu 0.11.3 at ``rows`` rows, by key type: 24-hex-character STRING
    keys (Zaxy's version ids), ~55-character STRING keys (its entity identities) and INT64 keys (a dense or hashed
    number). One COPY, checkpointed; the index is the file's growth minus the column pages and free pages."""
    import importlib.util  # noqa: F401 - kuzu's COPY-from-Arrow path needs importlib.util loaded

    import kuzu
    import pyarrow as pa

    hexes = [hashlib.sha256(str(i).encode()).hexdigest() for i in range(rows)]
    keys = {
        "STRING (24 hex)": pa.array([h[:24] for h in hexes]),
        "STRING (~55 chars)": pa.array([f"session-{i % 1000:04d}\x1fperson\x1fan entity {i}" for i in range(rows)]),
        "INT64": pa.array([int(h[:15], 16) for h in hexes], type=pa.int64()),
    }
    folder.mkdir(parents=True, exist_ok=True)
    found = {}
    for label, array in keys.items():
        path = folder / f"key-{len(found)}.kuzu"
        database = kuzu.Database(str(path))
        connection = kuzu.Connection(database)
        kind = "INT64" if label == "INT64" else "STRING"
        connection.execute(f"CREATE NODE TABLE T(id {kind}, PRIMARY KEY(id))")
        connection.execute("CHECKPOINT")
        empty = path.stat().st_size
        connection.execute("COPY T FROM $rows", {"rows": pa.table({"id": array})})
        connection.execute("CHECKPOINT")
        columns = sum(pages for (pages,) in connection.execute("CALL storage_info('T') RETURN num_pages").get_all())
        free = sum(pages for _start, pages in connection.execute("CALL FSM_INFO() RETURN *").get_all())
        database.close()
        grown = path.stat().st_size - empty
        found[label] = {"file_growth": grown, "key_column": columns * 4096, "index": grown - (columns + free) * 4096}
    return found


def one_row_tables(folder: Path) -> dict[str, int]:
    """What one row costs the engine: the file size growth of a checkpointed database when a node table with one
    key column (STRING, INT64, SERIAL) gets its first row (the primary-key index, for the most part)."""
    import kuzu  # in a LadybugDB child this is LadybugDB (see use_engine)

    folder.mkdir(parents=True, exist_ok=True)
    grown = {}
    for kind in ("STRING", "INT64", "SERIAL"):
        path = folder / f"{kind}.db"
        database = kuzu.Database(str(path))
        connection = kuzu.Connection(database)
        connection.execute(f"CREATE NODE TABLE T(id {kind}, n INT64, PRIMARY KEY(id))")
        connection.execute("CHECKPOINT")
        empty = path.stat().st_size
        connection.execute(
            "CREATE (:T {n: 1})"
            if kind == "SERIAL"
            else f"CREATE (:T {{id: {'1' if kind == 'INT64' else chr(39) + 'a' + chr(39)}, n: 1}})"
        )
        connection.execute("CHECKPOINT")
        database.close()
        grown[kind] = path.stat().st_size - empty
    return grown


def _disk_size_info(path: Path) -> dict[str, int]:
    import ladybug

    database = ladybug.Database(str(path), read_only=True)
    try:
        rows = ladybug.Connection(database).execute("CALL disk_size_info() RETURN *").get_all()
    finally:
        database.close()
    sizes: dict[str, int] = {}
    for kind, name, _pages, size in rows:
        label = "hash index" if kind == "index" or kind.startswith("pk_index") else kind
        if kind != "total":
            sizes[label] = sizes.get(label, 0) + int(size)
        del name
    return sizes


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


def _run_child(engine: str, root: Path, queries: int, kuzu_file: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", engine, str(root), str(kuzu_file), "--queries", str(queries)]
    command += ["--buffer-pool-mb", str(BUFFER_POOL_MB)] if BUFFER_POOL_MB else []
    command += ["--span-events", str(SPAN_EVENTS)] if SPAN_EVENTS else []
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"engine": engine, "error": (done.stderr.strip().splitlines() or ["(no output)"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def measure(size: int, engines: list[str], workdir: Path, queries: int) -> dict[str, Any]:
    base = workdir / f"log-{size}"
    started = time.perf_counter()
    build_log(base, size)
    report: dict[str, Any] = {"events": size, "build_log_s": round(time.perf_counter() - started, 1)}
    log_bytes = sum(p.stat().st_size for p in base.rglob("*.jsonl") if p.is_file())
    report["log_bytes"] = log_bytes
    results = {}
    for engine in engines:
        if engine != "kuzu" and _version("ladybug") is None:
            results[engine] = {"engine": engine, "skipped": "LadybugDB is not installed (pip install ladybug)"}
            continue
        root = workdir / f"{engine}-{size}"
        shutil.copytree(base, root)
        kuzu_file = workdir / f"kuzu-{size}" / GRAPH  # written first when kuzu is measured
        results[engine] = _run_child(engine, root, queries, kuzu_file)
    baseline = results.get("kuzu", {})
    for result in results.values():
        if "graph_bytes" in result and "graph_bytes" in baseline:
            result["size_vs_kuzu"] = round(result["graph_bytes"] / baseline["graph_bytes"], 3)
            result["graph_over_log"] = round(result["graph_bytes"] / max(log_bytes, 1), 2)
            result["catch_up_cpu_vs_kuzu"] = round(result["catch_up_cpu_s"] / max(baseline["catch_up_cpu_s"], 1e-9), 2)
            result["same_graph_as_kuzu"] = result["dump_digest"] == baseline["dump_digest"]
            result["same_answers_as_kuzu"] = result["answers_digest"] == baseline["answers_digest"]
    report["engines"] = results
    return report


def _print(reports: list[dict[str, Any]]) -> None:
    columns = [
        ("graph MB", lambda r: f"{r['graph_bytes'] / 1e6:.2f}"),
        ("x kuzu", lambda r: r["size_vs_kuzu"]),
        ("x log", lambda r: r["graph_over_log"]),
        ("catch-up s (CPU)", lambda r: f"{r['catch_up_s']} ({r['catch_up_cpu_s']})"),
        ("CPU x kuzu", lambda r: r["catch_up_cpu_vs_kuzu"]),
        ("key_states 2k ms", lambda r: r["key_states_2000_ms_p50"]),
        ("traverse p50/p95 ms", lambda r: f"{r['traverse_depth2_ms_p50']}/{r['traverse_depth2_ms_p95']}"),
        ("search p50/p95 ms", lambda r: f"{r['search_ms_p50']}/{r['search_ms_p95']}"),
        ("same graph / answers", lambda r: f"{r['same_graph_as_kuzu']} / {r['same_answers_as_kuzu']}"),
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
        for engine, result in report["engines"].items():
            if "disk_size_info" in result:
                parts = ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in sorted(result["disk_size_info"].items()) if v)
                print(f"{engine}: {parts}; opens a Kuzu 0.11.3 file: {result.get('opens_kuzu_0_11_file')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="26,10000")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--buffer-pool-mb", type=int, help="the graph's buffer pool (default: the store's, 256 MB)")
    parser.add_argument("--child", nargs=3, metavar=("ENGINE", "ROOT", "KUZU_FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--key-index", type=int, metavar="ROWS", help="only measure Kuzu's key index at ROWS rows")
    parser.add_argument("--span-events", type=int, help="events per graph transaction of the catch-up (default 100k)")
    args = parser.parse_args()
    global SPAN_EVENTS
    SPAN_EVENTS = args.span_events
    if args.key_index:
        with tempfile.TemporaryDirectory(prefix="zaxy-key-index-") as folder:
            found = key_index_bytes(Path(folder), args.key_index)
        for label, sizes in found.items():
            print(f"{label:20s} " + ", ".join(f"{name} {value / 1e6:.2f} MB" for name, value in sizes.items()))
        return
    global BUFFER_POOL_MB
    BUFFER_POOL_MB = args.buffer_pool_mb
    if args.child:
        kuzu_file = Path(args.child[2])
        print(
            json.dumps(
                child(
                    args.child[0],
                    Path(args.child[1]),
                    args.queries,
                    kuzu_file if kuzu_file.exists() else None,
                    BUFFER_POOL_MB,
                )
            )
        )
        return
    engines = [engine for engine in args.engines.split(",") if engine]
    unknown = sorted(set(engines) - set(ENGINES))
    if unknown:
        parser.error(f"--engines: unknown {unknown}; choose from {', '.join(ENGINES)}")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="zaxy-graph-engines-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        reports = [measure(int(size), engines, workdir, args.queries) for size in args.sizes.split(",")]
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        print(json.dumps({"kuzu": _version("kuzu"), "ladybug": _version("ladybug"), "reports": reports}, indent=2))
        return
    print(f"kuzu {_version('kuzu')}, ladybug {_version('ladybug')}; {args.queries} queries of each kind")
    _print(reports)


if __name__ == "__main__":
    main()
