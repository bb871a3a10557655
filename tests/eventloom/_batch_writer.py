"""Child process: append batches of 10 events to ROOT/session ``batches`` with slow, chunked writes (so SIGKILL
lands inside a batch), printing the last seq of each acknowledged batch."""

from __future__ import annotations

import os
import sys
import time

from zaxy_agents.storage.files import jsonl_file
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog


def _chunked_write(fd: int, data: bytes) -> None:
    for start in range(0, len(data), 97):
        os.write(fd, data[start : start + 97])
        time.sleep(0.0003)


def main() -> None:
    jsonl_file._write_all = _chunked_write
    with JsonlEventLog(sys.argv[1]) as log:
        batch = int(sys.argv[2]) if len(sys.argv) > 2 else 0
        while True:
            batch += 1
            events = log.append_many(
                "batches", [{"type": "note.added", "payload": {"batch": batch, "i": i}} for i in range(10)]
            )
            sys.stdout.write(f"{batch} {events[-1].seq}\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
