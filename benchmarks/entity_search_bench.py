"""Keyword search over entities (``MemoryFabric.search_entities``) on the embedded graph: full scan vs index filter.

Since graph migration 0006 the graph keeps no entity text, so a search reads versions' text from the catalog.
Baseline ``scan``: the implementation before this change (copied here, :func:`search_before`): the text of every
version valid at the time asked is read and matched. ``index``: the store's ``search_entities`` now: the catalog's
entity keyword index names the versions that may match (``retrieval/entity_words.py``; the types it does not
index are still listed), they are read newest first, and reading stops once no later one can enter the top
``limit`` (``storage/files/entity_search.py``). Both run in the same process over the same memory, alternated query by
query; every answer of ``index`` must equal the answer of ``scan`` (the script fails otherwise).

The memory is ``realistic_stream.py``'s log at each size. Queries: the first two words of entity names (what
benchmarks/graph_engine_bench.py asks), one rare word of a summary, and three words of a summary, with ``as_of``
(an earlier instant) on every fourth query.

Usage: python benchmarks/entity_search_bench.py [--sizes 10000,100000] [--queries 30] [--workdir DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.graph_engine_bench import build_log

WORDS = re.compile(r"\w+")


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


def search_before(store: Any, text: str, *, as_of: str | None = None, limit: int = 20) -> list[Any]:
    """``search_entities`` of the embedded store as it was before the index filter (main 78b647f), verbatim but for
    ``self`` and the session filter (not asked here): the text of every valid version read and matched."""
    from zaxy_agents.storage.files.kuzu_layout import entity_projection

    words = list(dict.fromkeys(WORDS.findall(text.casefold())))
    if not words:
        return []
    parameters: dict[str, Any] = {}
    validity = "e.valid_from <= $t AND (e.valid_to IS NULL OR e.valid_to > $t)" if as_of else "e.valid_to IS NULL"
    if as_of:
        parameters["t"] = as_of
    candidates = store._rows(f"MATCH (e:Entity) WHERE {validity} RETURN e.id, e.name, e.source_event_seq", parameters)
    texts = store._texts_of([version_id for version_id, _, _ in candidates]) if candidates else {}
    wanted, name = set(words), " ".join(text.casefold().split())
    matched: list[tuple[float, int, str]] = []
    for version_id, version_name, seq in candidates:
        haystack = f"{version_name} {texts[version_id][0]}".casefold()
        if not any(word in haystack for word in words):
            continue
        found = wanted & set(WORDS.findall(haystack))
        if found:
            exact = 1.0 if " ".join(version_name.casefold().split()) == name else 0.0
            matched.append((-(len(found) + exact), -seq, version_id))
    best = {version_id: -score for score, _seq, version_id in sorted(matched)[:limit]}
    if not best:
        return []
    rows = store._rows("MATCH (e:Entity) WHERE e.id IN $ids RETURN " + entity_projection("e"), {"ids": list(best)})
    scored = [(version, best[version.id]) for version in store._entity_versions(rows)]
    scored.sort(key=lambda pair: (-pair[1], -pair[0].source_event_seq, pair[0].id))
    return scored[:limit]


def queries(store: Any, count: int) -> list[tuple[str, str | None]]:
    """(text, as_of) pairs drawn from the memory itself."""
    rng = random.Random(11)
    rows = store._rows("MATCH (e:Entity) RETURN e.id, e.name, e.valid_from ORDER BY e.id")
    picked = rng.sample(rows, min(count, len(rows)))
    texts = store._texts_of([row[0] for row in picked])
    moments = sorted(row[2] for row in rows)
    found: list[tuple[str, str | None]] = []
    for index, (version_id, name, _valid_from) in enumerate(picked):
        words = re.findall(r"[A-Za-z]{4,}", texts[version_id][0]) or name.split()
        kind = index % 3
        text = (
            " ".join(name.split()[:2])
            if kind == 0
            else words[rng.randrange(len(words))]
            if kind == 1
            else " ".join(words[:3])
        )
        as_of = moments[len(moments) // 2] if index % 4 == 3 else None
        found.append((text, as_of))
    return found


def measure(root: Path, count: int) -> dict[str, Any]:
    from zaxy_agents.fabric import MemoryFabric
    from zaxy_agents.retrieval.entity_index import EntityKeywordIndex
    from zaxy_agents.retrieval.entity_words import IndexedEntityWords

    with MemoryFabric.from_path(root) as fabric:
        store = fabric.projector.store
        index = next(listener for listener in fabric.projector.listeners if isinstance(listener, EntityKeywordIndex))
        source = IndexedEntityWords(index)
        asked = queries(store, count)
        read_texts = store._texts_of
        read_count = [0]

        def counted(ids: Any) -> Any:  # how many versions' text a search reads
            read_count[0] += len(ids)
            return read_texts(ids)

        store._texts_of = counted
        reads: dict[str, list[int]] = {"scan": [], "index": []}
        wall: dict[str, list[float]] = {"scan": [], "index": []}
        cpu: dict[str, list[float]] = {"scan": [], "index": []}
        hits = 0
        for round_index, (text, as_of) in enumerate([asked[0], *asked]):  # the first query warms both up
            answers = {}
            order = ("scan", "index") if round_index % 2 else ("index", "scan")
            for mode in order:
                store.attach_entity_words(source)
                search = store.search_entities if mode == "index" else partial(search_before, store)
                read_count[0] = 0
                started, started_cpu = time.perf_counter(), _cpu()
                answers[mode] = search(text, as_of=as_of, limit=10)
                if round_index:
                    reads[mode].append(read_count[0])
                    wall[mode].append((time.perf_counter() - started) * 1000)
                    cpu[mode].append((_cpu() - started_cpu) * 1000)
            if answers["scan"] != answers["index"]:
                raise AssertionError(f"different answers for {text!r} (as_of={as_of}): {answers}")
            hits += len(answers["index"])
        versions = int(store._rows("MATCH (e:Entity) WHERE e.valid_to IS NULL RETURN count(e)")[0][0])
    result: dict[str, Any] = {"queries": len(asked), "hits": hits, "current_versions": versions}
    for mode in ("scan", "index"):
        result[f"{mode}_ms_p50"] = round(statistics.median(wall[mode]), 1)
        result[f"{mode}_cpu_ms_p50"] = round(statistics.median(cpu[mode]), 1)
        result[f"{mode}_texts_read_p50"] = int(statistics.median(reads[mode]))
        result[f"{mode}_texts_read_min"] = min(reads[mode])
    result["index_vs_scan_wall"] = round(result["index_ms_p50"] / result["scan_ms_p50"], 3)
    result["index_vs_scan_cpu"] = round(result["index_cpu_ms_p50"] / max(result["scan_cpu_ms_p50"], 1e-9), 3)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--workdir", type=Path, default=None, help="keep the memories here (reused when present)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    folder = args.workdir or Path(tempfile.mkdtemp(prefix="zaxy-entity-search-"))
    report = {}
    try:
        for size in (int(part) for part in args.sizes.split(",")):
            root = folder / f"memory-{size}"
            if not (root / ".zaxy").exists():
                build_log(root, size)  # the graph is caught up from the log when measure() opens it
            report[size] = measure(root, args.queries)
            if not args.json:
                row = report[size]
                print(
                    f"{size:>7} events  {row['current_versions']:>7} current versions  scan {row['scan_ms_p50']} ms "
                    f"(CPU {row['scan_cpu_ms_p50']})  index {row['index_ms_p50']} ms (CPU {row['index_cpu_ms_p50']})  "
                    f"index/scan wall {row['index_vs_scan_wall']}x CPU {row['index_vs_scan_cpu']}x  "
                    f"texts read p50 {row['scan_texts_read_p50']} -> {row['index_texts_read_p50']} "
                    f"(min {row['index_texts_read_min']})  ({row['queries']} queries, same answers)",
                    flush=True,
                )
    finally:
        if args.workdir is None:
            shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
