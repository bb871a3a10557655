"""Child process for the multi-process append test."""

from __future__ import annotations

import sys

from zaxy_agents.eventloom.jsonl_log import JsonlEventLog


def main() -> None:
    root, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with JsonlEventLog(root) as log:
        for i in range(count):
            log.append("shared", "note.added", {"worker": worker, "i": i})


if __name__ == "__main__":
    main()
