"""What ``derived.sqlite`` holds, per table and index, against the log it derives from (issue 24, ``size``).

Reads SQLite's ``dbstat`` virtual table (pages per table and index) of one or more kept memories, for example the
``--keep`` memories of ``scale_bench.py`` built by two source trees on the same realistic stream:

    python benchmarks/scale_bench.py --sizes 20000 --one-by-one 0 --no-graph --keep --workdir /tmp/before
    (the same from the other tree, --workdir /tmp/after)
    python benchmarks/derived_size_bench.py --memory /tmp/before/memory-20000 --memory /tmp/after/memory-20000

Prints, per memory: the log's bytes, ``derived.sqlite``'s bytes (file + WAL) and its ratio to the log, the share of
each component (catalog ``cat_*``, verbatim lane ``verbatim_*``, entity keyword index ``entity_keyword_*``,
vectors, the rest) and its ratio to the log, the largest tables and indexes; with two memories, the second's sizes
over the first's (same stream: the same log bytes). The memories are copied before reading (a reader never
touches a live file).

Usage: python benchmarks/derived_size_bench.py --memory DIR [--memory DIR ...] [--top 12] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

GROUPS = (
    ("catalog", "cat_"),
    ("verbatim", "verbatim_"),
    ("entity_keyword", "entity_keyword_"),
    ("vectors", "vectors_"),
)


def _group(name: str, owners: dict[str, str]) -> str:
    table = owners.get(name, name)
    for group, prefix in GROUPS:
        if table.startswith(prefix):
            return group
    return "other"


def measure(memory: Path, top: int) -> dict[str, Any]:
    log = sum(path.stat().st_size for path in memory.glob("*.jsonl"))
    derived = memory / ".zaxy" / "derived.sqlite"
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "derived.sqlite"
        shutil.copy(derived, copy)
        wal = derived.with_name("derived.sqlite-wal")
        if wal.exists():
            shutil.copy(wal, copy.with_name("derived.sqlite-wal"))
        db = sqlite3.connect(copy)
        try:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            owners = dict(db.execute("SELECT name, tbl_name FROM sqlite_schema WHERE name IS NOT NULL"))
            pages = db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
            free = db.execute("PRAGMA freelist_count").fetchone()[0] * db.execute("PRAGMA page_size").fetchone()[0]
        finally:
            db.close()
    size = derived.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    groups: dict[str, int] = {}
    for name, used in pages:
        groups[_group(name, owners)] = groups.get(_group(name, owners), 0) + used
    return {
        "memory": str(memory),
        "log_bytes": log,
        "derived_bytes": size,
        "derived_over_log": round(size / max(log, 1), 3),
        "free_pages_bytes": free,
        "groups": {
            group: {"bytes": used, "share": round(used / max(size, 1), 3), "over_log": round(used / max(log, 1), 3)}
            for group, used in sorted(groups.items(), key=lambda item: -item[1])
        },
        "largest": [
            {"name": name, "bytes": used, "over_log": round(used / max(log, 1), 3)} for name, used in pages[:top]
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memory", type=Path, action="append", required=True, help="a memory folder (repeatable)")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report: dict[str, Any] = {"memories": [measure(memory, args.top) for memory in args.memory]}
    if len(report["memories"]) >= 2:
        first, last = report["memories"][0], report["memories"][-1]
        report["last_over_first"] = {
            "derived": round(last["derived_bytes"] / max(first["derived_bytes"], 1), 3),
            **{
                group: round(last["groups"].get(group, {"bytes": 0})["bytes"] / max(used["bytes"], 1), 3)
                for group, used in first["groups"].items()
            },
        }
    print(json.dumps(report, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
