"""Child process: erase ROOT/SESSION events FROM..TO and SIGKILL itself inside the in-place overwrite.

MODE ``journal``: right after the journal is durable, before any line is overwritten. MODE ``midway``: after
overwriting the first target line whole and half of the second (a torn line). The crash the next open of the log,
`zaxy repair` or the next erase must finish from the journal."""

from __future__ import annotations

import os
import signal
import sys

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.storage.files import jsonl_scrub_journal


def main() -> None:
    root, session, first, last, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    real = jsonl_scrub_journal._write_at
    calls = []

    def crashing(fd: int, data: bytes, offset: int) -> None:
        calls.append(offset)
        if mode == "journal" or len(calls) == 2:
            if mode == "midway":
                real(fd, data[: len(data) // 2], offset)
                os.fdatasync(fd)
            os.kill(os.getpid(), signal.SIGKILL)
        real(fd, data, offset)

    jsonl_scrub_journal._write_at = crashing  # type: ignore[assignment]
    with MemoryFabric.from_path(root, use_graph=False) as fabric:
        fabric.erase_range(session, first, last, actor="ops")


if __name__ == "__main__":
    main()
