"""Reading a line again once no writer holds the session's lock: what a read racing an in-place erase needs.

Readers take no lock. An erase overwrites its target lines in place under the writers' lock
(:mod:`.jsonl_scrub_journal`), and Linux does not make a read atomic against a ``pwrite`` of the same bytes, so a
read can see a line half old, half new: unreadable, or not matching its hash. A reader that finds a line so waits
for the lock to be free (shared, bounded) and reads it again; real damage reads the same bytes again and is reported
exactly as before. Only failing reads pay this (one ``flock`` and one line read).
"""

from __future__ import annotations

import fcntl
import os
import time
from typing import Any

from zaxy_agents.errors import IntegrityError
from zaxy_agents.eventloom.integrity import SessionReader

from .jsonl_file import SessionFile


def line_after_writers(handle: SessionFile, seq: int, seen: bytes, timeout: float = 5.0) -> bytes | None:
    """The line at ``seq`` once no writer holds the lock (waiting at most ``timeout`` seconds), when it differs
    from ``seen``; ``None`` when it does not (or the lock stayed held)."""
    try:
        fd = os.open(handle.path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return None
                time.sleep(0.005)
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    line = handle._lines_by_index([seq]).get(seq)
    return None if line is None or line == seen else line


def decode_settled(handle: SessionFile, reader: SessionReader, line: bytes) -> dict[str, Any] | None:
    """``reader.decode(line)``, decoded again from the line read once the writers' lock is free when it was
    unreadable (the reader raised) or did not match its hash (a non-strict reader recorded a problem)."""
    seq = reader.expected
    try:
        envelope = reader.decode(line)
    except IntegrityError:
        settled = line_after_writers(handle, seq, line)
        if settled is None:
            raise
    else:
        if envelope is not None or seq not in reader.problems:
            return envelope
        settled = line_after_writers(handle, seq, line)
        if settled is None:
            return None
    reader.expected = seq
    reader.problems.pop(seq, None)
    return reader.decode(settled)
