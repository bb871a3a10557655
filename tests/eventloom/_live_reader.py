"""Child process: follows one session with a single open log and prints each new seq as it appears.

Usage: python -m tests.eventloom._live_reader SESSION COUNT — exits once COUNT events were seen (or after 60 s).
"""

from __future__ import annotations

import sys
import time

from zaxy_agents.config import ZaxySettings
from zaxy_agents.storage.registry import DEFAULT_REGISTRY


def main() -> None:
    session, count = sys.argv[1], int(sys.argv[2])
    log = DEFAULT_REGISTRY.open(ZaxySettings.resolve()).open_log()
    seen = 0
    deadline = time.monotonic() + 60
    print("ready", flush=True)
    try:
        while seen < count and time.monotonic() < deadline:
            head = log.head(session)
            if head is None or head.seq == seen:
                time.sleep(0.01)
                continue
            for event in log.replay(session, seen + 1):
                print(event.seq, event.payload["i"], flush=True)
                seen = event.seq
    finally:
        log.close()


if __name__ == "__main__":
    main()
