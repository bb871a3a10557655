"""Child process for the multi-process tests: appends through the backend named by the environment.

Usage: python -m tests.eventloom._concurrent_writer WORKER ITERATIONS SESSIONS
Iteration i appends to session ``s{i % SESSIONS}`` (one event, or a batch of three on every third iteration).
"""

from __future__ import annotations

import sys

from zaxy_agents.config import ZaxySettings
from zaxy_agents.storage.registry import DEFAULT_REGISTRY


def main() -> None:
    worker, iterations, sessions = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    log = DEFAULT_REGISTRY.open(ZaxySettings.resolve()).open_log()
    try:
        n = 0
        for i in range(iterations):
            session = f"s{i % sessions}"
            if i % 3 == 2:
                log.append_many(
                    session, [{"type": "note.added", "payload": {"worker": worker, "n": n + k}} for k in range(3)]
                )
                n += 3
            else:
                log.append(session, "note.added", {"worker": worker, "n": n})
                n += 1
    finally:
        log.close()


if __name__ == "__main__":
    main()
