"""Listing a memory of many sessions holds no stat result per session at once.

Why: a whole-memory checkout lists every session of the log. Listed through ``DirEntry.stat``, the 1,000 entries of a
1,000-session memory kept 1,000 stat results (objects the garbage collector counts, tracked or not) alive together,
so every such checkout ran one young collection for the listing alone, and ten young collections of the next
generation bring a full one (~50 ms at 1M: docs/benchmarks.md, "Whole-memory checkouts after an append: the garbage
collector's share"). Each file is now stat'ed by name, one at a time. The listing itself is unchanged."""

from __future__ import annotations

import gc
from pathlib import Path

from zaxy_agents.storage.files.jsonl_log import JsonlEventLog


def test_listing_many_sessions_runs_no_young_collection(tmp_path: Path) -> None:
    count = gc.get_threshold()[0] + 150  # more sessions than the allocations that start a young collection
    log = JsonlEventLog(tmp_path / "loom", durability="batch")
    names = [f"s{number:04d}" for number in range(count)]
    for name in reversed(names):  # created out of order: the listing sorts them
        log.append(name, "decision.recorded", {"decision": f"use {name}", "topic": "storage"})
    listed = log.sessions()
    assert [summary.session for summary in listed] == names
    assert all(summary.event_count == 1 for summary in listed)

    collections: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()  # the young generation's count starts at zero
    gc.callbacks.append(record)
    try:
        again = log.sessions()  # every file version known: the summaries are reused
    finally:
        gc.callbacks.remove(record)
    assert again == listed
    assert collections == [], collections  # 27d07ea: one (a stat result per session held by its DirEntry)

    log.append(names[3], "decision.recorded", {"decision": "use wal", "topic": "storage"})
    changed = {summary.session: summary.event_count for summary in log.sessions()}
    assert changed[names[3]] == 2 and sum(changed.values()) == count + 1
