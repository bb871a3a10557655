"""The verbatim index rebuilt in a worker process during `zaxy reproject` (see ``projection/rebuild_worker.py``).

``python -m zaxy_agents.retrieval.verbatim_worker <folder>``: reads chunks of searchable documents on stdin and
indexes them with the index's own per-chunk writer into ``<folder>/derived.sqlite`` — the serial rebuild's calls in
the serial rebuild's order, several chunks per transaction as there — then answers ``done`` on stdout. An input
that stops without its end frame (the rebuilding process was killed) deletes the folder instead.
"""

from __future__ import annotations

import shutil
import signal
import sys
from pathlib import Path

from zaxy_agents.projection.listeners import LISTENER_CURSOR_DDL, write_listener_cursors
from zaxy_agents.projection.model import SearchDoc
from zaxy_agents.projection.planner import ProjectionBatch
from zaxy_agents.projection.rebuild_worker import DONE, serve
from zaxy_agents.storage.derived.store import DerivedStore

from .verbatim import VerbatimIndex

GROUP_CHUNKS = 10  # chunks per transaction (the serial rebuild's groups are 10,000 events of 1,000-event chunks)
CACHE_KIB = 131_072  # the rebuild's writer page cache


def main(folder: Path) -> int:
    # a Ctrl-C in the terminal reaches the whole process group: the rebuilding process decides, and its input
    # closing without the end frame stops this one
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    store = DerivedStore(folder)
    index = VerbatimIndex()
    try:
        with store.write() as db:
            db.execute(LISTENER_CURSOR_DDL)
            index.create_schema(db)
            db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        index.attach(store)
        index.committed()

        def chunk(docs: list[SearchDoc], cursors: dict[str, tuple[int, str]]) -> None:
            batch = ProjectionBatch()
            batch.searchable = docs
            index.apply(batch, db)
            write_listener_cursors(db, [(index.name, cursors)])

        ended: list[bool] = []
        frames = serve(sys.stdin.buffer, chunk, ended)
        while not ended:
            with store.write() as db:
                for _ in zip(range(GROUP_CHUNKS), frames, strict=False):
                    index.committed()
        if not ended[0]:
            store.close()
            shutil.rmtree(folder, ignore_errors=True)
            return 1
        store.close()
    except BaseException:
        store.close()
        raise
    sys.stdout.buffer.write(DONE)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
