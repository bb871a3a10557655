"""Child process for test_graph_reads_during_writes: two threads read the embedded graph while this one writes it.

``python -m tests.projection._reads_during_writes_child ROOT ROUNDS`` builds a memory, then, ROUNDS times, appends
events to it and catches the graph up (apply + CHECKPOINT, in this thread) while two reader threads keep calling the
store's reads (traverse, search_entities, entity_history, dump_lines). It runs in its own process because without
the store's read/write exclusion Kuzu 0.11.3 can crash the process (segfault). It prints one JSON line: reads per
thread, reads that overlapped a write, the errors seen, and whether the graph ended up holding every event.
"""

from __future__ import annotations

import json
import random
import sys
import threading
import warnings

from tests.projection.test_projection_lifecycle import _mixed_history
from zaxy_agents.fabric import MemoryFabric

root, rounds = sys.argv[1], int(sys.argv[2])
warnings.simplefilter("error")  # a distrusted graph (a failed write) is deleted and rebuilt with a warning
fabric = MemoryFabric.from_path(root)
_mixed_history(fabric, "a", 400)
fabric.project()
store = fabric.projector.store  # opened and caught up
keys = sorted({version.key for version in store.entities_as_of("9999-12-31T00:00:00Z", limit=100_000)})
stop, writing = threading.Event(), threading.Event()
seen_writing = [threading.Event(), threading.Event()]  # each reader has started a read during this catch-up
errors: list[str] = []
reads, overlapped = [0, 0], [0, 0]


def read(thread: int) -> None:
    rng = random.Random(thread)
    while not stop.is_set():
        during = writing.is_set()
        if during:
            seen_writing[thread].set()
        try:
            kind = rng.randrange(4)
            if kind == 0:
                store.traverse(rng.sample(keys, 3), depth=2)
            elif kind == 1:
                store.search_entities("work item choice T-3")
            elif kind == 2:
                store.entity_history(f"T-{rng.randrange(20)}")
            else:
                sum(1 for _ in store.dump_lines())
        except Exception as exc:  # reported to the parent
            errors.append(f"reader {thread}: {type(exc).__name__}: {exc}")
            stop.set()
            return
        reads[thread] += 1
        overlapped[thread] += during


readers = [threading.Thread(target=read, args=(n,)) for n in range(2)]
for reader in readers:
    reader.start()
for round_ in range(rounds):
    _mixed_history(fabric, "a", 300, seed=round_ + 10)
    _mixed_history(fabric, f"s{round_}", 200, seed=round_ + 50)
    fabric.project()  # the catalog; the graph lags until the catch-up below
    writing.set()
    for seen in seen_writing:  # a catch-up can be shorter than one read: let both readers start one inside it
        seen.wait(timeout=60)
    try:
        fabric.projector.graph.sync()  # apply (one transaction per batch) + CHECKPOINT
    except Exception as exc:  # reported to the parent
        errors.append(f"writer: {type(exc).__name__}: {exc}")
    writing.clear()
    for seen in seen_writing:
        seen.clear()
    if fabric.projector.graph.error or errors:
        errors.append(f"graph error: {fabric.projector.graph.error}")
        break
stop.set()
for reader in readers:
    reader.join()
graph = fabric.projector.graph.store
complete = graph is not None and graph.cursors() == fabric.projector.catalog.cursors
print(json.dumps({"reads": reads, "overlapped": overlapped, "errors": errors[:5], "complete": complete}), flush=True)
fabric.close()
