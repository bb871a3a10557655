"""Child process: append one event to ``ROOT``/``SESSION`` and SIGKILL itself at a named point of the append.

Points: ``after-truncate`` (the torn tail was moved to its pending sidecar and cut from the file, before the
recovery record is written) and ``after-record`` (the record is durable, before the sidecar gets its final
name). A real SIGKILL: nothing in this process runs after it.
"""

from __future__ import annotations

import os
import signal
import sys

from zaxy_agents.storage.files import jsonl_file, torn_tail
from zaxy_agents.storage.files.jsonl_log import JsonlEventLog


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    root, session, point = sys.argv[1:4]
    if point == "after-truncate":
        original = torn_tail._recover_torn_tail

        def recover(*args):  # type: ignore[no-untyped-def]
            original(*args)
            _die()

        torn_tail._recover_torn_tail = recover
    elif point == "after-record":
        jsonl_file._finish_sidecar = lambda root, torn: _die()
    with JsonlEventLog(root) as log:
        log.append(session, "note.added", {"from": "killed writer"})


if __name__ == "__main__":
    main()
