"""A checkout's first citation re-read of a session: whole-file line index vs binary search, in the same run.

A whole-memory checkout re-reads the events it cites (``lines_at``: each cited event and its successor) from
sessions the process may never have read. Before, the first ``lines_at`` of a session built its dense line index by
scanning the whole file (~1.2 MB for 1,000 events of 200-2,000 bytes); now a few seqs are found by binary search over
byte offsets (:mod:`zaxy_agents.storage.files.line_search`). For each of ``--sessions`` session files of
``--events`` events, a fresh ``SessionFile`` (nothing cached: no index, no remembered tail) is asked for 3 seqs,
once through the index (what ``lines_at`` did before) and once through the search, alternating which goes first;
the answers must be identical. Printed: bytes read (``rchar`` of /proc/self/io) and CPU per first ``lines_at``,
median and p95, and the ratios. The files are in the page cache (just written): the scan's cost is CPU and copies.

Usage: python benchmarks/citation_reread_bench.py [--sessions 40] [--events 1000] [--seqs 3] [--json]
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

from zaxy_agents.storage.files.jsonl_file import SessionFile
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog


def _rchar() -> int:
    with open("/proc/self/io", "rb") as handle:
        return int(next(line for line in handle if line.startswith(b"rchar:")).split()[1])


def _write(root: Path, session: str, events: int, rng: random.Random) -> None:
    with JsonlEventLog(root, durability="batch") as log:
        for start in range(0, events, 100):
            drafts = [
                {"type": "note.added", "payload": {"text": "x" * rng.randint(200, 2000)}}
                for _ in range(min(100, events - start))
            ]
            log.append_many(session, drafts)


def _measure(root: Path, session: str, seqs: list[int], searched: bool) -> tuple[int, float, dict[int, bytes]]:
    handle = SessionFile(root, session)
    before, cpu = _rchar(), time.thread_time()
    found = handle.lines_at(seqs) if searched else handle._lines_by_index(sorted(set(seqs)))
    cpu, read = time.thread_time() - cpu, _rchar() - before
    if searched and handle._indexed_inode is not None:
        raise SystemExit(f"{session}: the search path did not answer (an index was built)")
    return read, cpu * 1e3, found


def _stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median": ordered[len(ordered) // 2], "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]}


def run(sessions: int, events: int, seqs: int) -> dict:
    rng = random.Random(7)
    results: dict[str, dict[str, list[float]]] = {"index": {"bytes": [], "cpu_ms": []}, "search": {}}
    results["search"] = {"bytes": [], "cpu_ms": []}
    with tempfile.TemporaryDirectory(prefix="zaxy-citation-bench-") as tmp:
        root = Path(tmp)
        sizes = []
        for number in range(sessions):
            _write(root, f"s{number}", events, rng)
            sizes.append((root / f"s{number}.jsonl").stat().st_size)
        for number in range(sessions):
            cited = sorted(rng.sample(range(1, events), seqs))
            order = (False, True) if number % 2 == 0 else (True, False)
            answers = []
            for searched in order:
                read, cpu, found = _measure(root, f"s{number}", cited, searched)
                answers.append(found)
                results["search" if searched else "index"]["bytes"].append(read)
                results["search" if searched else "index"]["cpu_ms"].append(cpu)
            if answers[0] != answers[1] or len(answers[0]) != seqs:
                raise SystemExit(f"s{number}: the two paths disagree on {cited}")
    summary = {
        path: {metric: _stats(values) for metric, values in measured.items()} for path, measured in results.items()
    }
    return {
        "sessions": sessions,
        "events": events,
        "seqs": seqs,
        "file_bytes_median": sorted(sizes)[len(sizes) // 2],
        **summary,
        "bytes_ratio": summary["search"]["bytes"]["median"] / summary["index"]["bytes"]["median"],
        "cpu_ratio": summary["search"]["cpu_ms"]["median"] / summary["index"]["cpu_ms"]["median"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--seqs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = run(args.sessions, args.events, args.seqs)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"first lines_at of {report['seqs']} seqs on a fresh SessionFile; {report['sessions']} sessions of "
        f"{report['events']} events (median file {report['file_bytes_median'] / 1e6:.2f} MB)"
    )
    for path, label in (("index", "whole-file index (before)"), ("search", "binary search (after)")):
        read, cpu = report[path]["bytes"], report[path]["cpu_ms"]
        print(
            f"  {label:28} bytes read median {read['median']:>10,.0f}  p95 {read['p95']:>10,.0f}"
            f"   CPU median {cpu['median']:6.3f} ms  p95 {cpu['p95']:6.3f} ms"
        )
    print(f"  ratio search/index: bytes {report['bytes_ratio']:.3f}x, CPU {report['cpu_ratio']:.3f}x")


if __name__ == "__main__":
    main()
