"""Child process for crash tests: append forever, printing each acknowledged seq.

Mode ``normal`` appends through the backend named by the environment (``ZAXY_BACKEND``...). Mode ``chunked``
(JSONL only, ``ROOT`` argument) splits every write into tiny pieces with pauses, so SIGKILL lands mid-line and
leaves a genuinely torn tail.
"""

from __future__ import annotations

import os
import sys
import time

from zaxy_agents.config import ZaxySettings
from zaxy_agents.storage.files import jsonl_file
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog
from zaxy_agents.storage.registry import DEFAULT_REGISTRY


def _chunked_write(fd: int, data: bytes) -> None:
    for start in range(0, len(data), 7):
        os.write(fd, data[start : start + 7])
        time.sleep(0.0002)


def main() -> None:
    mode = sys.argv[1]
    if mode == "chunked":
        jsonl_file._write_all = _chunked_write
    log = JsonlEventLog(sys.argv[2]) if mode == "chunked" else DEFAULT_REGISTRY.open(ZaxySettings.resolve()).open_log()
    with log:
        n = 0
        while True:
            n += 1
            batch = [{"type": "note.added", "payload": {"n": n, "text": "x" * (n % 300)}}] * (1 + n % 3)
            events = log.append_many("crash", batch)
            sys.stdout.write(f"{events[-1].seq}\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
