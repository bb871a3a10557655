"""Ingest cost, this tree against another tree (``--before``) and against SQLite FTS5, in one run.

Parts, each run in a fresh child process per tree, the two trees alternated ``--runs`` times:

* ``batched``: ``--events`` realistic events (``realistic_stream.py``, ~1 KB each, sessions of 1,000) appended
  in chunks of 1,000 (group commit), then projected (catalog + retrieval indexes in ``derived.sqlite``), then the
  embedded Kuzu graph brought up to date. Wall and CPU seconds of each step; the baseline is an SQLite FTS5 index
  built over the same payload texts in the same child process.
* ``locomo``: the LoCoMo turns of ``--locomo`` ingested as ``zaxy benchmark locomo`` does (append in chunks of
  500, project, then the graph commit per conversation); turns/s without and with the graph commit.
* ``reproject``: ``--events`` realistic events appended, then ``fabric.reproject(digest=False)`` (what
  ``zaxy reproject`` runs: catalog, retrieval indexes and the graph rebuilt from the log), wall and CPU seconds (CPU
  of the rebuild's worker process included; ``reproject_own_cpu_s``: the rebuilding process alone), and the sizes of
  ``derived.sqlite`` and ``graph.kuzu`` after it, as multiples of the log.
* ``one``: append + project one event at a time (the MCP / hook / LangGraph path) on a memory of 1,000 events
  (in ``--one-sessions`` sessions, default 1), with ``durability="fsync"`` (every append waits for its own
  ``fdatasync``) and ``"batch"`` (group commit); the append and project shares of the time, and the projecting
  thread's own CPU (without the WAL checkpoint and group commit threads: the steadier figure under load). With
  ``--one-spread`` the events go to the memory's sessions in turn (LangGraph threads, agents) instead of one.
* ``merge``: the tail merges on the ``one`` part's path (``--one`` events one at a time, group commit, no graph),
  each timed on its own (thread CPU): the verbatim index's (every 1,024 events) and the entity keyword index's; the
  first after seeding a memory of ``--one-sessions`` sessions merges their one-event writes (a posting run per
  term and session), the later ones (``--one-spread``: sessions already in their segment) what came after.
* ``pages``: what one event's projection commit writes, on the ``one`` part's memory (``min(--one, 300)`` events
  one at a time, group commit, no graph): WAL frames per event (the WAL checkpoints held off, so every frame stays
  in the file), how many of them belong to the entity keyword index, the verbatim index and the catalog (dbstat),
  and SQL statement executions per event (every row of an ``executemany`` counts). Counts, not times: the same on a
  loaded machine.
* ``split``: where the CPU of ``batched`` (no graph) goes, in microseconds per event: the append and its redaction
  scan; projection's SQL statements (``execute`` / ``executemany`` / ``commit`` of every connection, with what SQLite
  pulls from their argument iterators), text analysis, log decoding with its hash check, extraction, planning, and
  the rest (the indexes' and catalog's Python loops, row building, commits' bookkeeping); the analysis of each
  index's texts, and the Snowball calls per event (the analysers' memo misses: a count). Each timed call adds
  ~0.2 us of clock reads.
* ``floor``: this disk's floor for a durable append: a 4 KB ``write`` + ``fdatasync`` loop (500) in the memory's
  file system, nothing else; events/s, p50 / p95 ms.
* ``writers``: ``--writers`` processes (default 4: the MCP servers or hooks of four agents) each append + project
  ``--one`` events one at a time into their own session of one memory, all at once (a shared start time), with
  ``fsync`` and with ``batch`` durability; total events/s over the span from the first start to the last end, and
  CPU ms per event summed over the writers.

Usage: python benchmarks/ingest_bench.py [--before /path/to/other/tree] [--events 10000] [--one 200]
       [--locomo /work/shared/datasets/locomo/locomo_dev6.json]
       [--parts batched,locomo,one,pages,merge,reproject,split,floor,writers]
       [--runs 2] [--writers 4] [--one-sessions 1] [--one-spread] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import inspect, json, os, sqlite3, sys, tempfile, time, shutil
tree, part, arg = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, tree)
sys.path.insert(1, sys.argv[4])  # this benchmark's tree, for realistic_stream
from benchmarks.realistic_stream import RealisticStream
from zaxy_agents.fabric import MemoryFabric

def clock():
    # CPU of this process and of its finished children (a rebuild's worker process, rebuild_worker.py)
    children = os.times()
    return time.perf_counter(), time.process_time() + children.children_user + children.children_system

def since(start):
    wall, cpu = clock()
    return wall - start[0], cpu - start[1]

root = tempfile.mkdtemp(prefix="zaxy-ingest-")
out = {}

def seed_one_memory(stream, sessions):
    # the 1,000-event memory the one-at-a-time parts write to: one session, or spread over `sessions`
    with MemoryFabric.from_path(root, durability="batch") as fabric:
        if sessions == 1:
            for session, drafts in stream.sessions(1000):
                fabric.append_many(session, drafts)
        else:  # the same 1,000 events spread over many sessions (LangGraph threads, agents' sessions)
            drafts = [stream.draft(i) for i in range(max(1000, sessions))]
            for s in range(sessions):
                fabric.append_many(f"thread-{s}", drafts[s::sessions])
        fabric.project()

try:
    if part == "batched":
        size = int(arg)
        stream = RealisticStream(seed=size)
        texts = []
        append = [0.0, 0.0]
        with MemoryFabric.from_path(root, durability="batch") as fabric:
            for session, drafts in stream.sessions(size):
                for offset in range(0, len(drafts), 1000):
                    chunk = drafts[offset : offset + 1000]
                    start = clock()
                    fabric.append_many(session, chunk)
                    wall, cpu = since(start)
                    append[0] += wall
                    append[1] += cpu
                    texts += [json.dumps(d["payload"]) for d in chunk]
            start = clock()
            fabric.project()
            out["project_wall_s"], out["project_cpu_s"] = since(start)
            start = clock()
            fabric.projector.store  # opens the graph and syncs it from the log
            fabric.projector.flush(timeout=None)
            out["graph_wall_s"], out["graph_cpu_s"] = since(start)
        out["append_wall_s"], out["append_cpu_s"] = append
        start = clock()
        db = sqlite3.connect(os.path.join(root, "fts.sqlite"))
        db.execute("CREATE VIRTUAL TABLE docs USING fts5(text)")
        db.executemany("INSERT INTO docs(text) VALUES (?)", [(t,) for t in texts])
        db.commit()
        db.close()
        out["fts5_wall_s"], out["fts5_cpu_s"] = since(start)
        out["events"] = size
    elif part == "split":
        # where batched ingest's CPU goes: SQL statements (a timing Connection subclass for every connection the
        # memory opens) by the tables they write, text analysis, log decoding (+ hash check), extraction, planning,
        # the redaction scan of the append, and the Python of each writer (verbatim index, entity keyword index,
        # catalog: its apply minus its SQL and analysis); the rest is the projector's own bookkeeping
        import re, threading
        import zaxy_agents.eventloom.drafts as drafts
        from zaxy_agents.eventloom.integrity import SessionReader
        from zaxy_agents.projection.planner import ProjectionPlanner
        from zaxy_agents.projection.registry import ExtractorTable
        from zaxy_agents.projection.sqlite_catalog import SqliteCatalog
        from zaxy_agents.retrieval.entity_index import EntityKeywordIndex
        from zaxy_agents.retrieval.text import Analyzer
        from zaxy_agents.retrieval.verbatim import VerbatimIndex
        spent = {}
        local = threading.local()  # the writer whose apply is running in this thread (a checkpoint thread: none)
        def owner():
            return getattr(local, "owner", "other")
        def add(key, seconds):
            spent[key] = spent.get(key, 0.0) + seconds
        def timed_function(function, key):
            def wrapper(*args, **kwargs):
                start = time.process_time()
                try:
                    return function(*args, **kwargs)
                finally:
                    add(key, time.process_time() - start)
                    if key == "analysis":
                        add(f"analysis:{owner()}", time.process_time() - start)
            return wrapper
        def owned(function, name):
            def wrapper(*args, **kwargs):
                local.owner = name
                start = time.process_time()
                try:
                    return function(*args, **kwargs)
                finally:
                    add(f"apply:{name}", time.process_time() - start)
                    local.owner = "other"
            return wrapper
        table_of = re.compile(r"(?:INTO|UPDATE|FROM|wal_checkpoint)\W+(\w+)")
        def kind_of(sql):
            found = table_of.search(sql)
            name = found.group(1) if found else ""
            if sql.startswith("PRAGMA wal_checkpoint"):
                return "checkpoint"
            if sql.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")):
                return "commit"
            return next((k for k, p in (("verbatim", "verbatim"), ("entity", "entity_keyword"), ("catalog", "cat_"))
                         if name.startswith(p)), "other")
        def timed_sql(function):
            def wrapper(self, sql, *args):
                start = time.process_time()
                try:
                    return function(self, sql, *args)
                finally:
                    seconds = time.process_time() - start
                    add("sql", seconds)
                    add(f"sql:{kind_of(sql)}", seconds)
                    add(f"sql:{owner()}:owned", seconds)
            return wrapper
        def timed_commit(self):
            start = time.process_time()
            try:
                return sqlite3.Connection.commit(self)
            finally:
                add("sql", time.process_time() - start)
                add("sql:commit", time.process_time() - start)
        class TimedConnection(sqlite3.Connection):
            execute = timed_sql(sqlite3.Connection.execute)
            executemany = timed_sql(sqlite3.Connection.executemany)
            commit = timed_commit
        plain_connect = sqlite3.connect
        def connect(*args, **kwargs):
            kwargs.setdefault("factory", TimedConnection)
            return plain_connect(*args, **kwargs)
        sqlite3.connect = connect
        Analyzer.analyse = timed_function(Analyzer.analyse, "analysis")
        import zaxy_agents.retrieval.text as text_module
        class CountingStemmer:  # Snowball calls: the analysers' memo misses
            def __init__(self, inner):
                self.inner = inner
            def stemWord(self, word):
                spent["stems"] = spent.get("stems", 0) + 1
                return self.inner.stemWord(word)
        text_module._STEMMER = CountingStemmer(text_module._STEMMER)
        SessionReader.decode = timed_function(SessionReader.decode, "decode")
        ExtractorTable.extract = timed_function(ExtractorTable.extract, "extract")
        ProjectionPlanner.add = timed_function(ProjectionPlanner.add, "plan")
        drafts.rules_for = timed_function(drafts.rules_for, "redaction")
        VerbatimIndex.apply = owned(VerbatimIndex.apply, "verbatim")
        EntityKeywordIndex.apply = owned(EntityKeywordIndex.apply, "entity")
        SqliteCatalog.apply = owned(SqliteCatalog.apply, "catalog")
        size = int(arg)
        sessions = list(RealisticStream(seed=size).sessions(size))  # made before the clock starts
        with MemoryFabric.from_path(root, durability="batch") as fabric:
            start = time.process_time()
            for session, drafts_of in sessions:
                for offset in range(0, len(drafts_of), 1000):
                    fabric.append_many(session, drafts_of[offset : offset + 1000])
            out["append_cpu_s"] = time.process_time() - start
            out["redaction_cpu_s"] = spent.get("redaction", 0.0)
            spent.clear()
            start = time.process_time()
            fabric.project()
            out["project_cpu_s"] = time.process_time() - start
        out["spent"] = spent
        out["events"] = size
    elif part == "locomo":
        from zaxy_agents.evaluation.locomo import _commit_graph, _ingest, session_for
        from zaxy_agents.evaluation.locomo_data import load_conversations
        conversations = load_conversations(arg)
        totals = {"ingest_wall_s": 0.0, "ingest_cpu_s": 0.0, "graph_wall_s": 0.0, "graph_cpu_s": 0.0}
        with MemoryFabric.from_path(root, durability="batch") as fabric:
            for conversation in conversations:
                start = clock()
                _ingest(fabric, session_for(conversation.sample_id), conversation)
                wall, cpu = since(start)
                totals["ingest_wall_s"] += wall
                totals["ingest_cpu_s"] += cpu
                start = clock()
                _commit_graph(fabric)
                wall, cpu = since(start)
                totals["graph_wall_s"] += wall
                totals["graph_cpu_s"] += cpu
        out.update(totals)
        out["turns"] = sum(len(c.turns) for c in conversations)
    elif part == "reproject":
        size = int(arg)
        stream = RealisticStream(seed=size)
        with MemoryFabric.from_path(root, durability="batch") as fabric:
            for session, drafts in stream.sessions(size):
                fabric.append_many(session, drafts)
        with MemoryFabric.from_path(root, durability="batch") as fabric:
            start, own = clock(), time.process_time()
            # what `zaxy reproject` runs: catalog, indexes and the graph, from the log (no digest where it is optional)
            if "digest" in inspect.signature(fabric.reproject).parameters:
                fabric.reproject(digest=False)
            else:
                fabric.reproject()
            out["reproject_wall_s"], out["reproject_cpu_s"] = since(start)
            # the rebuilding process alone (its threads), without a worker process's CPU
            out["reproject_own_cpu_s"] = time.process_time() - own
        out["events"] = size
        def stored_bytes(folder, prefix):  # files (and folders) of `folder` whose name starts with `prefix`
            total = 0
            for name in os.listdir(folder):
                path = os.path.join(folder, name)
                if name.startswith(prefix):
                    walked = [os.path.join(d, f) for d, _, files in os.walk(path) for f in files]
                    total += sum(map(os.path.getsize, walked)) if os.path.isdir(path) else os.path.getsize(path)
            return total
        out["log_bytes"] = sum(os.path.getsize(os.path.join(root, f)) for f in os.listdir(root) if f.endswith(".jsonl"))
        out["derived_sqlite_bytes"] = stored_bytes(os.path.join(root, ".zaxy"), "derived.sqlite")
        out["graph_bytes"] = stored_bytes(os.path.join(root, ".zaxy"), "graph.kuzu")
    elif part == "one":
        count, sessions, spread = (int(v) for v in arg.split(":"))
        stream = RealisticStream(seed=5)
        seed_one_memory(stream, sessions)
        live = [stream.draft(i) for i in range(2 * count)]
        for mode, drafts in (("fsync", live[:count]), ("batch", live[count:])):
            with MemoryFabric.from_path(root, durability=mode) as fabric:
                fabric.project()
                fabric.projector.follow_graph()
                appended, projected, project_thread = [0.0, 0.0], [0.0, 0.0], 0.0
                for number, draft in enumerate(drafts):
                    # one live session, or (spread) the memory's sessions in turn: LangGraph threads, agents
                    session = f"thread-{number % sessions}" if spread else "live-" + mode
                    start = clock()
                    fabric.append(session, draft["type"], draft["payload"])
                    wall, cpu = since(start)
                    appended[0] += wall
                    appended[1] += cpu
                    start, thread = clock(), time.thread_time()
                    fabric.project([session])
                    project_thread += time.thread_time() - thread
                    wall, cpu = since(start)
                    projected[0] += wall
                    projected[1] += cpu
                start = clock()
                fabric.projector.flush(timeout=None)
                drain = since(start)
            out[mode] = {"append_wall_s": appended[0], "append_cpu_s": appended[1],
                         "project_wall_s": projected[0], "project_cpu_s": projected[1],
                         "project_thread_cpu_s": project_thread,
                         "graph_drain_wall_s": drain[0], "events": count}
    elif part == "merge":
        # the tail merges of the one-at-a-time path, each timed on its own (thread CPU): the verbatim index's (every
        # 1,024 events) and the entity keyword index's (every ~16k postings); the first one after seeding a memory
        # of many sessions merges their events (one posting run per term and session)
        from zaxy_agents.retrieval import entity_index, verbatim_write
        merges = {"verbatim": [], "entity": []}
        def timed(cls, name, key):
            original = getattr(cls, name)
            def wrapper(*args, **kwargs):
                began = time.thread_time()
                merged = original(*args, **kwargs)
                if merged:
                    merges[key].append(time.thread_time() - began)
                return merged
            setattr(cls, name, wrapper)
        timed(verbatim_write.Writer, "merge_tail", "verbatim")
        timed(entity_index.EntityKeywordIndex, "_merge_tail", "entity")
        count, sessions, spread = (int(v) for v in arg.split(":"))
        stream = RealisticStream(seed=5)
        seed_one_memory(stream, sessions)
        merges = {"verbatim": [], "entity": []}  # not the seeding's
        with MemoryFabric.from_path(root, durability="batch", use_graph=False) as fabric:
            fabric.project()
            for number in range(count):
                draft = stream.draft(number)
                session = f"thread-{number % sessions}" if spread else "live"
                fabric.append(session, draft["type"], draft["payload"])
                fabric.project([session])
        out = {"events": count, "verbatim_merges_s": merges["verbatim"], "entity_merges_s": merges["entity"]}
    elif part == "pages":
        # what one event's projection commit writes: WAL frames (4 KB pages; the WAL checkpoints are held off so
        # every frame stays in the file) and SQL statement executions (each row of an executemany counts), and
        # which B-trees the frames belong to (dbstat)
        from zaxy_agents.storage.derived import checkpointer as wal_checkpointer, store as derived_store
        wal_checkpointer.Checkpointer.committed = lambda self: None
        derived_store.WRITER_LIMIT_PAGES = 10**9
        count, sessions = (int(v) for v in arg.split(":"))
        stream = RealisticStream(seed=5)
        seed_one_memory(stream, sessions)
        live = [stream.draft(i) for i in range(count + 50)]
        with MemoryFabric.from_path(root, durability="batch", use_graph=False) as fabric:
            fabric.project()
            for draft in live[:50]:  # warm: the writers' caches filled as in a running server
                fabric.append("warm", draft["type"], draft["payload"])
                fabric.project(["warm"])
            writer = fabric.projector.derived._writer
            writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            statements = [0]
            writer.set_trace_callback(lambda sql: statements.__setitem__(0, statements[0] + 1))
            for draft in live[50:]:
                fabric.append("live", draft["type"], draft["payload"])
                fabric.project(["live"])
            writer.set_trace_callback(None)
            path = str(fabric.projector.derived.path)
            with open(path + "-wal", "rb") as handle:
                wal = handle.read()
            page_size = int.from_bytes(wal[8:12], "big")
            frames = {}
            for offset in range(32, len(wal) - 24 - page_size + 1, 24 + page_size):
                page = int.from_bytes(wal[offset : offset + 4], "big")
                frames[page] = frames.get(page, 0) + 1
            reader = sqlite3.connect(path)
            names = dict(reader.execute("SELECT pageno, name FROM dbstat"))
            reader.close()
        by_tree = {}
        for page, n in frames.items():
            by_tree[names.get(page, "?")] = by_tree.get(names.get(page, "?"), 0) + n
        out = {"events": count, "frames": sum(frames.values()), "statements": statements[0],
               "by_tree": by_tree}
    elif part == "floor":
        # this disk's durable-append floor: 4 KB append + fdatasync, nothing else, in the memory's file system
        count = int(arg)
        fd = os.open(os.path.join(root, "floor.bin"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        block = b"x" * 4095 + b"\n"
        latencies = []
        start = clock()
        for _ in range(count):
            began = time.perf_counter()
            os.write(fd, block)
            os.fdatasync(fd)
            latencies.append(time.perf_counter() - began)
        out["floor_wall_s"], out["floor_cpu_s"] = since(start)
        os.close(fd)
        latencies.sort()
        out["floor_p50_ms"] = 1000 * latencies[count // 2]
        out["floor_p95_ms"] = 1000 * latencies[int(count * 0.95)]
        out["events"] = count
    elif part == "writers":
        # N processes (MCP servers / hooks of N agents) append + project one event at a time into their own
        # sessions of one memory, at the same time; each writer is this script with part "writer"
        import subprocess
        writers, count = (int(v) for v in arg.split(":"))
        stream = RealisticStream(seed=5)
        with MemoryFabric.from_path(root, durability="batch") as fabric:
            for session, drafts in stream.sessions(1000):
                fabric.append_many(session, drafts)
            fabric.project()
        for mode in ("fsync", "batch"):
            go = time.time() + 4.0 + 1.5 * writers  # every writer has imported and opened the memory by then
            writer = os.environ["INGEST_BENCH_WRITER"]
            procs = [
                subprocess.Popen(
                    [sys.executable, "-c", writer, tree, root, mode, str(count), str(w), str(go), sys.argv[4]],
                    stdout=subprocess.PIPE, text=True,
                )
                for w in range(writers)
            ]
            results = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
            out[mode] = {
                "events": writers * count,
                "wall_s": max(r["end"] for r in results) - min(r["start"] for r in results),
                "cpu_s": sum(r["cpu_s"] for r in results),
                "late_starts": sum(r["late"] for r in results),
            }
        out["writers"] = writers
finally:
    shutil.rmtree(root, ignore_errors=True)
print(json.dumps(out))
"""

WRITER = r"""
import json, sys, time
tree, root, mode, number = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[5]
count, go = int(sys.argv[4]), float(sys.argv[6])
sys.path.insert(0, tree)
sys.path.insert(1, sys.argv[7])
from benchmarks.realistic_stream import RealisticStream
from zaxy_agents.fabric import MemoryFabric
stream = RealisticStream(seed=100 + int(number))
drafts = [stream.draft(i) for i in range(count)]
session = f"live-{mode}-{number}"
with MemoryFabric.from_path(root, durability=mode) as fabric:
    fabric.project([session])
    late = time.time() > go
    while time.time() < go:
        time.sleep(0.005)
    start, cpu = time.time(), time.process_time()
    for draft in drafts:
        fabric.append(session, draft["type"], draft["payload"])
        fabric.project([session])
    end = time.time()
    cpu = time.process_time() - cpu
print(json.dumps({"start": start, "end": end, "cpu_s": cpu, "late": late}))
"""


def run_child(tree: Path, part: str, arg: str) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(tree), part, arg, str(REPO)],
        capture_output=True,
        text=True,
        cwd=str(tree),
        env={**os.environ, "PYTHONWARNINGS": "ignore", "INGEST_BENCH_WRITER": WRITER},
        timeout=7200,
    )
    if result.returncode != 0:
        raise RuntimeError(f"{tree} {part} failed:\n{result.stderr[-4000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def rates(part: str, raw: dict[str, Any]) -> dict[str, float]:
    """Events (turns) per second of wall and of CPU time, per step."""
    if part == "batched":
        n = raw["events"]
        ingest_wall = raw["append_wall_s"] + raw["project_wall_s"]
        ingest_cpu = raw["append_cpu_s"] + raw["project_cpu_s"]
        return {
            "append_per_s": n / raw["append_wall_s"],
            "append_per_cpu_s": n / raw["append_cpu_s"],
            "project_per_s": n / raw["project_wall_s"],
            "project_per_cpu_s": n / raw["project_cpu_s"],
            "ingest_per_s": n / ingest_wall,
            "ingest_per_cpu_s": n / ingest_cpu,
            "graph_per_s": n / raw["graph_wall_s"],
            "graph_per_cpu_s": n / raw["graph_cpu_s"],
            "with_graph_per_s": n / (ingest_wall + raw["graph_wall_s"]),
            "with_graph_per_cpu_s": n / (ingest_cpu + raw["graph_cpu_s"]),
            "fts5_per_s": n / raw["fts5_wall_s"],
            "fts5_per_cpu_s": n / raw["fts5_cpu_s"],
            "ingest_over_fts5_cpu": (n / ingest_cpu) / (n / raw["fts5_cpu_s"]),
        }
    if part == "split":  # microseconds of CPU per event
        n, us, spent = raw["events"], 1e6 / raw["events"], raw["spent"]
        got = lambda key: spent.get(key, 0.0) * us  # noqa: E731
        out = {"append_us": raw["append_cpu_s"] * us, "append_redaction_us": raw["redaction_cpu_s"] * us}
        out["project_us"] = raw["project_cpu_s"] * us
        for key in ("sql", "analysis", "decode", "extract", "plan"):
            out[f"project_{key}_us"] = got(key)
        for kind in ("verbatim", "entity", "catalog", "checkpoint", "commit", "other"):
            out[f"project_sql_{kind}_us"] = got(f"sql:{kind}")
        for name in ("verbatim", "entity", "catalog"):  # a writer's apply less its SQL and its text analysis
            own = got(f"apply:{name}") - got(f"sql:{name}:owned") - got(f"analysis:{name}")
            out[f"project_{name}_python_us"] = own
        writers = sum(got(f"apply:{name}") - got(f"sql:{name}:owned") - got(f"analysis:{name}")
                      for name in ("verbatim", "entity", "catalog"))  # fmt: skip
        spent_elsewhere = sum(got(key) for key in ("sql", "analysis", "decode", "extract", "plan"))
        out["project_projector_python_us"] = out["project_us"] - spent_elsewhere - writers
        for name in ("verbatim", "entity"):  # the analysis of each index's texts (part of project_analysis_us)
            out[f"project_analysis_{name}_us"] = got(f"analysis:{name}")
        out["project_stems_per_event"] = spent.get("stems", 0) / n  # Snowball calls (memo misses), a count
        out["ingest_per_cpu_s"] = n / (raw["append_cpu_s"] + raw["project_cpu_s"])
        return out
    if part == "locomo":
        n = raw["turns"]
        return {
            "turns_per_s": n / raw["ingest_wall_s"],
            "turns_per_cpu_s": n / raw["ingest_cpu_s"],
            "with_graph_per_s": n / (raw["ingest_wall_s"] + raw["graph_wall_s"]),
            "with_graph_per_cpu_s": n / (raw["ingest_cpu_s"] + raw["graph_cpu_s"]),
        }
    if part == "reproject":
        n = raw["events"]
        return {
            "reproject_s": raw["reproject_wall_s"],
            "reproject_cpu_s": raw["reproject_cpu_s"],
            "reproject_own_cpu_s": raw["reproject_own_cpu_s"],
            "reproject_per_s": n / raw["reproject_wall_s"],
            "reproject_per_cpu_s": n / raw["reproject_cpu_s"],
            "derived_sqlite_x_log": raw["derived_sqlite_bytes"] / raw["log_bytes"],
            "graph_kuzu_x_log": raw["graph_bytes"] / raw["log_bytes"],
        }
    if part == "pages":
        n, by_tree = raw["events"], raw["by_tree"]

        def share(*prefixes: str) -> float:
            return sum(v for k, v in by_tree.items() if k.startswith(prefixes)) / n

        return {
            "frames_per_event": raw["frames"] / n,
            "statements_per_event": raw["statements"] / n,
            "entity_keyword_frames": share("entity_keyword", "sqlite_autoindex_entity_keyword"),
            "verbatim_frames": share("verbatim", "sqlite_autoindex_verbatim"),
            "catalog_frames": share("cat_", "sqlite_autoindex_cat"),
        }
    if part == "merge":
        out = {}
        for key in ("verbatim", "entity"):
            times = raw[f"{key}_merges_s"]
            out[f"{key}_merges"] = len(times)
            out[f"{key}_first_ms"] = 1000 * times[0] if times else 0.0
            out[f"{key}_later_median_ms"] = 1000 * statistics.median(times[1:]) if len(times) > 1 else 0.0
            out[f"{key}_ms_per_event"] = 1000 * sum(times) / raw["events"]
        return out
    if part == "floor":
        n = raw["events"]
        return {
            "floor_per_s": n / raw["floor_wall_s"],
            "floor_p50_ms": raw["floor_p50_ms"],
            "floor_p95_ms": raw["floor_p95_ms"],
            "floor_cpu_ms": 1000 * raw["floor_cpu_s"] / n,
        }
    out = {}
    if part == "writers":
        for mode in ("fsync", "batch"):
            m = raw[mode]
            out[f"{mode}_per_s"] = m["events"] / m["wall_s"]
            out[f"{mode}_cpu_ms"] = 1000 * m["cpu_s"] / m["events"]
            out[f"{mode}_late_starts"] = m["late_starts"]
        return out
    for mode in ("fsync", "batch"):
        m = raw[mode]
        n = m["events"]
        out[f"{mode}_per_s"] = n / (m["append_wall_s"] + m["project_wall_s"])
        out[f"{mode}_append_ms"] = 1000 * m["append_wall_s"] / n
        out[f"{mode}_append_cpu_ms"] = 1000 * m["append_cpu_s"] / n
        out[f"{mode}_project_ms"] = 1000 * m["project_wall_s"] / n
        out[f"{mode}_project_cpu_ms"] = 1000 * m["project_cpu_s"] / n
        out[f"{mode}_project_thread_cpu_ms"] = 1000 * m["project_thread_cpu_s"] / n  # the projecting thread only
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, default=None, help="another checkout to compare against")
    parser.add_argument("--events", type=int, default=10000)
    parser.add_argument("--one", type=int, default=200)
    parser.add_argument("--writers", type=int, default=4, help="concurrent processes for the writers part")
    parser.add_argument("--one-sessions", type=int, default=1, help="sessions of the memory the one part writes to")
    parser.add_argument(
        "--one-spread", action="store_true", help="the one part writes to the memory's sessions in turn (not one)"
    )
    parser.add_argument("--locomo", default="/work/shared/datasets/locomo/locomo_dev6.json")
    parser.add_argument("--parts", default="batched,locomo,one")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    trees = {"after": REPO} | ({"before": args.before.resolve()} if args.before else {})
    arguments = {
        "batched": str(args.events),
        "locomo": args.locomo,
        "one": f"{args.one}:{args.one_sessions}:{int(args.one_spread)}",
        "reproject": str(args.events),
        "split": str(args.events),
        "floor": "500",
        "pages": f"{min(args.one, 300)}:{args.one_sessions}",
        "merge": f"{args.one}:{args.one_sessions}:{int(args.one_spread)}",
        "writers": f"{args.writers}:{args.one}",
    }
    samples: dict[str, dict[str, list[dict[str, float]]]] = {}
    for part in args.parts.split(","):
        for run in range(args.runs):
            order = list(trees.items()) if run % 2 == 0 else list(reversed(trees.items()))
            for name, tree in order:
                raw = run_child(tree, part, arguments[part])
                samples.setdefault(part, {}).setdefault(name, []).append(rates(part, raw))
                if not args.json:
                    shown = {k: round(v, 2) for k, v in rates(part, raw).items()}
                    print(f"{part} {name} run {run + 1}: {json.dumps(shown)}", flush=True)
    report: dict[str, Any] = {}
    for part, by_tree in samples.items():
        medians = {name: {k: statistics.median(s[k] for s in runs) for k in runs[0]} for name, runs in by_tree.items()}
        report[part] = {name: {k: round(v, 2) for k, v in m.items()} for name, m in medians.items()}
        if "before" in medians:
            report[part]["after_over_before"] = {
                k: round(medians["after"][k] / medians["before"][k], 2)
                for k in medians["after"]
                if medians["before"][k]
            }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
