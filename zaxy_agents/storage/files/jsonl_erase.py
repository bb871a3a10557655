"""Scrubbing erased events out of a session file (the embedded half of ``MemoryFabric.erase_events``).

Under the writers' lock, the file is rewritten with each target line replaced by its erased form
(:func:`~zaxy_agents.eventloom.erasure.erased_line`) and renamed over the old one, so the content is gone from
the file as a whole (not overwritten in place, where a crash could tear a line). Writers waiting on the old
file's lock reopen the new one (``SessionFile._locked_writer_fd``); readers re-index it (new inode).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile

from zaxy_agents.eventloom.erasure import erased_line, is_erased
from zaxy_agents.eventloom.integrity import decode_line

from .file_io import _fsync_directory, storage_error
from .jsonl_file import SessionFile
from .jsonl_repair import REPAIR_DIR_NAME
from .torn_tail import TORN_DIR_NAME


def scrub_session(handle: SessionFile, seqs: set[int], record_seq: int) -> int:
    """Replace the lines of ``seqs`` by their erased form; returns how many lines changed."""
    with handle._thread_lock:
        fd = handle._locked_writer_fd()
        try:
            with open(handle.path, "rb") as source:
                content = source.read()
            lines = content.split(b"\n")
            tail = lines.pop()  # bytes after the last newline (a torn line; kept as it is)
            changed = 0
            for seq in sorted(seqs):
                if not 1 <= seq <= len(lines):
                    continue
                envelope = decode_line(lines[seq - 1] + b"\n")
                if envelope is None or envelope.get("seq") != seq or is_erased(envelope):
                    continue
                lines[seq - 1] = erased_line(envelope, record_seq)[:-1]
                changed += 1
            if changed:
                _replace(handle, b"\n".join(lines) + b"\n" + tail)
            return changed
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)


def remove_sidecars(root: str, session: str) -> list[str]:
    """Delete the session's torn-tail and repair sidecars (unacknowledged or unreadable bytes may hold content)."""
    removed = []
    for folder in (TORN_DIR_NAME, REPAIR_DIR_NAME):
        path = os.path.join(root, folder)
        try:
            names = os.listdir(path)
        except OSError:
            continue
        for name in names:
            rest = name[len(session) + 1 :] if name.startswith(f"{session}.") else ""
            if rest and rest.split(".", 1)[0].isdigit():
                os.unlink(os.path.join(path, name))
                removed.append(os.path.join(folder, name))
        if not os.listdir(path):
            shutil.rmtree(path, ignore_errors=True)
    return removed


def _replace(handle: SessionFile, data: bytes) -> None:
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=f".erase.{handle.session}.", suffix=".tmp", dir=handle.root)
        try:
            with os.fdopen(descriptor, "wb") as sink:
                sink.write(data)
                sink.flush()
                os.fsync(sink.fileno())
            os.replace(temporary, handle.path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
    except OSError as exc:
        raise storage_error(exc, handle.path) from exc
    _fsync_directory(handle.root)
    handle._tail = None
