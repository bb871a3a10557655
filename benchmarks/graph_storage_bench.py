"""Kuzu relationship storage: both directions (Kuzu's default) against forward only, in the same run.

The projection writes each batch into a node table and several relationship tables carrying the edge audit
columns, then commits; the commit is where a graph batch spends its time. This measures, for the schema's real
audit columns, the COMMIT of each batch (wall and CPU) and the file size, with the relationship tables created
both ways and ``WITH (storage_direction = 'fwd')`` (what ``kuzu_schema.FORWARD_ONLY`` tables use), alternated.

Usage: python benchmarks/graph_storage_bench.py [--batches 8] [--rows 600] [--tables 4] [--runs 2] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util  # noqa: F401 - kuzu's COPY-from-Arrow path needs importlib.util loaded
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import kuzu
import pyarrow as pa

from zaxy_agents.storage.files.kuzu_schema import EDGE_AUDIT_COLUMNS, FORWARD_STORAGE, rel_ddl

SAMPLE = {"STRING": lambda name, i: f"{name}-{i:08d}", "INT64": lambda name, i: i, "DOUBLE": lambda name, i: 0.5}


def _column(name: str, kind: str, rows: int) -> list[Any]:
    return [True] * rows if kind == "BOOLEAN" else [SAMPLE[kind](name, i) for i in range(rows)]


def run(folder: Path, storage: str, args: argparse.Namespace) -> dict[str, float]:
    path = folder / f"graph-{storage}.kuzu"
    database = kuzu.Database(str(path))
    connection = kuzu.Connection(database)
    connection.execute("CREATE NODE TABLE Node(id STRING, PRIMARY KEY(id))")
    tables = [f"EDGE_{index}" for index in range(args.tables)]
    for table in tables:
        ddl = rel_ddl(table, "Node", "Node", EDGE_AUDIT_COLUMNS)
        connection.execute(ddl + (FORWARD_STORAGE if storage == "fwd" else ""))
    walls, cpus, written = [], [], 0
    for _ in range(args.batches):
        ids = [f"n{written + i:09d}" for i in range(args.rows)]
        written += args.rows
        edges = {"from": ids, "to": ids[1:] + ids[:1]}
        edges |= {name: _column(name, kind, args.rows) for name, kind in EDGE_AUDIT_COLUMNS}
        connection.execute("BEGIN TRANSACTION")
        connection.execute("COPY Node FROM $rows", {"rows": pa.table({"id": ids})})
        for table in tables:
            connection.execute(f"COPY {table} FROM $rows", {"rows": pa.table(edges)})
        started, started_cpu = time.perf_counter(), time.process_time()
        connection.execute("COMMIT")
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - started_cpu)
    database.close()
    return {
        "commit_wall_s": statistics.median(walls),
        "commit_cpu_s": statistics.median(cpus),
        "file_mb": path.stat().st_size / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--rows", type=int, default=600, help="rows per batch in each table")
    parser.add_argument("--tables", type=int, default=4, help="relationship tables written per batch")
    parser.add_argument("--runs", type=int, default=2, help="alternated runs of each storage")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {"both": [], "fwd": []}
    with tempfile.TemporaryDirectory(prefix="zaxy-graph-storage-") as folder:
        for run_index in range(args.runs):
            for storage in ("both", "fwd"):
                target = Path(folder) / f"run-{run_index}"
                target.mkdir(exist_ok=True)
                results[storage].append(run(target, storage, args))
    report: dict[str, Any] = {
        storage: {key: round(statistics.median(r[key] for r in runs), 3) for key in runs[0]}
        for storage, runs in results.items()
    }
    report["both_over_fwd"] = {
        key: round(report["both"][key] / max(report["fwd"][key], 1e-9), 2) for key in report["both"]
    }
    print(json.dumps(report, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
