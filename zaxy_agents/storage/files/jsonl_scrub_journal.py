"""Overwriting erased lines in place, crash-safely: a journal of the new lines, then the writes, then no journal.

An erasure replaces each target line by its erased form padded to the same length (:func:`~zaxy_agents.eventloom.
erasure.erased_line` with ``size``), so the file keeps every other byte, offset and line where it was and the work is
O(targets), not a rewrite of the session. A crash in the middle of ``pwrite`` could leave a line half old, half new
(unreadable), so, under the writers' lock:

1. the journal ``<root>/.erasing/<session>.journal`` is written (to a temporary name, fsynced, renamed, the folder
   fsynced): the offset, seq, and new bytes of every line. It holds no content -- only erased forms (seq, hashes,
   ids, actor, type, time) -- so it never spreads what is being erased;
2. each line is overwritten (``pwrite``), then the file is ``fdatasync``-ed;
3. the journal is deleted.

A journal left behind is replayed (:func:`finish_journal`) under the lock before anything else touches the file: by
the next erase, ``zaxy repair``, the next append that re-reads the tail, and opening the log
(:class:`~.jsonl_log.JsonlEventLog`). Replaying is idempotent: an entry whose line already holds its new bytes is
left alone; one whose line is the old event (same seq and hash) or unreadable (torn by the crash) is written; an
entry that matches neither (the file was replaced meanwhile) is skipped. So every line ends whole-old-then-whole-new.

Readers need no change: offsets do not move, and every read ``pread``-s the bytes anew (the line index keyed on the
file's inode and size stays exact; nothing caches a line's bytes). What it does not guarantee: on a copy-on-write
filesystem (btrfs, ZFS, APFS) or an SSD's flash translation layer, an overwrite writes new blocks and frees the old
ones without zeroing them, so the old bytes may survive on the device until reused -- as with the rewrite-and-rename
it replaces, which freed the old file's blocks the same way. Neither is a secure wipe of the medium.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from typing import Any

from zaxy_agents.eventloom.integrity import decode_line

from .file_io import _fsync_directory, storage_error

JOURNAL_DIR_NAME = ".erasing"
_SUFFIX = ".journal"


def journal_path(root: str, session: str) -> str:
    return os.path.join(root, JOURNAL_DIR_NAME, f"{session}{_SUFFIX}")


def pending_sessions(root: str) -> list[str]:
    """Sessions with a journal left behind (a crash during an in-place erase)."""
    try:
        names = os.listdir(os.path.join(root, JOURNAL_DIR_NAME))
    except OSError:
        return []
    return sorted(name[: -len(_SUFFIX)] for name in names if name.endswith(_SUFFIX))


def overwrite(root: str, session: str, path: str, inode: int, entries: list[tuple[int, int, bytes]]) -> None:
    """Overwrite lines in place, journaled (see the module docstring). ``entries``: ``(offset, seq, new line)``,
    each new line exactly as long as the line at ``offset``. The caller holds the writers' lock of ``path`` (whose
    inode is ``inode``)."""
    journal = journal_path(root, session)
    _write_journal(journal, {"session": session, "entries": [[o, s, line.decode()] for o, s, line in entries]})
    try:
        fd = os.open(path, os.O_WRONLY)  # not the writers' O_APPEND fd: Linux pwrite appends on an O_APPEND fd
    except OSError as exc:
        raise storage_error(exc, path) from exc
    try:
        if os.fstat(fd).st_ino != inode:
            raise storage_error(OSError(f"{path} was replaced during an erase"), path)
        for offset, _seq, line in entries:
            _write_at(fd, line, offset)
        os.fdatasync(fd)
    except OSError as exc:
        raise storage_error(exc, path) from exc
    finally:
        os.close(fd)
    os.unlink(journal)
    _remove_empty_folder(root)


def finish_journal(root: str, session: str, path: str) -> int:
    """Replay a journal left by a crashed in-place erase (caller holds the writers' lock); returns how many lines
    it wrote. No journal: 0, after one ``stat``."""
    journal = journal_path(root, session)
    try:
        with open(journal, "rb") as handle:
            plan = json.loads(handle.read())
    except FileNotFoundError:
        return 0
    except (OSError, ValueError):  # unreadable: it was never renamed into place whole, so no write followed it
        plan = {"entries": []}
    written = 0
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        fd = None
    if fd is not None:
        try:
            size = os.fstat(fd).st_size
            for offset, seq, text in _entries(plan):
                line = text.encode()
                if _needs_write(fd, size, offset, seq, line):
                    _write_at(fd, line, offset)
                    written += 1
            if written:
                os.fdatasync(fd)
        except OSError as exc:
            raise storage_error(exc, path) from exc
        finally:
            os.close(fd)
    os.unlink(journal)
    _remove_empty_folder(root)
    return written


def _entries(plan: Any) -> list[tuple[int, int, str]]:
    entries = plan.get("entries") if isinstance(plan, dict) else None
    return [
        (entry[0], entry[1], entry[2])
        for entry in (entries if isinstance(entries, list) else [])
        if isinstance(entry, list)
        and len(entry) == 3
        and type(entry[0]) is int
        and type(entry[1]) is int
        and isinstance(entry[2], str)
        and entry[0] >= 0
    ]


def _needs_write(fd: int, size: int, offset: int, seq: int, line: bytes) -> bool:
    """Whether the journal entry's line must be (re)written: the bytes there are the old event it replaces, or torn
    by the crash; never when they already are ``line`` or belong to another event (a stale journal)."""
    end = offset + len(line)
    if end > size or not line.endswith(b"\n"):
        return False
    if offset > 0 and os.pread(fd, 1, offset - 1) != b"\n":
        return False
    current = os.pread(fd, len(line), offset)
    if current == line or not current.endswith(b"\n"):
        return False
    new = decode_line(line)
    if new is None or new.get("seq") != seq:
        return False
    found = decode_line(current)
    if found is None:  # torn mid-write: old bytes up to some point, new ones after
        return True
    return found.get("seq") == seq and found.get("hash") == new.get("hash")


def _write_at(fd: int, data: bytes, offset: int) -> None:
    """One line's overwrite (a seam the crash tests cut)."""
    written = 0
    while written < len(data):
        written += os.pwrite(fd, data[written:], offset + written)


def _write_journal(path: str, plan: dict[str, Any]) -> None:
    folder = os.path.dirname(path)
    try:
        for attempt in range(3):  # another session's erase may remove the (then empty) folder in between
            os.makedirs(folder, exist_ok=True)
            try:
                descriptor, temporary = tempfile.mkstemp(prefix=".journal.", suffix=".tmp", dir=folder)
                break
            except FileNotFoundError:
                if attempt == 2:
                    raise
        try:
            with os.fdopen(descriptor, "wb") as sink:
                sink.write(json.dumps(plan, ensure_ascii=False, separators=(",", ":")).encode())
                sink.flush()
                os.fsync(sink.fileno())
            os.replace(temporary, path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
    except OSError as exc:
        raise storage_error(exc, path) from exc
    _fsync_directory(folder)


def _remove_empty_folder(root: str) -> None:
    with contextlib.suppress(OSError):  # not empty (another session's journal) or already gone
        os.rmdir(os.path.join(root, JOURNAL_DIR_NAME))
