"""Child process: erase ROOT/SESSION events FROM..TO and SIGKILL itself right after the erasure record is written
(before the log is scrubbed): the crash `zaxy repair` must finish."""

from __future__ import annotations

import os
import signal
import sys

from zaxy_agents.fabric import MemoryFabric


def main() -> None:
    root, session, first, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with MemoryFabric.from_path(root, use_graph=False) as fabric:
        fabric.log.scrub = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)  # type: ignore[method-assign]
        fabric.erase_range(session, first, last, actor="ops")


if __name__ == "__main__":
    main()
