"""Scrubbing erased events out of a session file (the embedded half of ``MemoryFabric.erase_events``).

Under the writers' lock, each target line is overwritten in place by its erased form padded to the same length
(:mod:`.jsonl_scrub_journal`: journaled, so a crash leaves every line whole-old or whole-new once the journal is
replayed): the cost is O(targets), whatever the session's history, and no other byte of the file moves. The form of
each event is the one its erasure record lists (:func:`~zaxy_agents.eventloom.erasure.range_forms`), which the
eraser chose to fit the line (:func:`~zaxy_agents.eventloom.erasure.erasure_form`).

When a form does not fit its line (a record written before in-place erasure, or a spec-1 event with a short id),
the file is rewritten with each target line replaced and renamed over the old one, as every erase did before:
writers waiting on the old file's lock reopen the new one (``SessionFile._locked_writer_fd``); readers re-index it
(new inode).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import time

from zaxy_agents.errors import IntegrityError
from zaxy_agents.eventloom.erasure import ERASURE_TYPE, erased_line, is_erased, listed_form, range_forms
from zaxy_agents.eventloom.integrity import decode_line, repair_hint

from .file_io import LogLockTimeout, _fsync_directory, storage_error
from .jsonl_file import SessionFile
from .jsonl_repair import REPAIR_DIR_NAME
from .jsonl_scrub_journal import finish_journal, overwrite
from .torn_tail import TORN_DIR_NAME


def scrub_session(handle: SessionFile, seqs: set[int], record_seq: int) -> int:
    """Replace the lines of ``seqs`` by their erased form; returns how many lines changed."""
    with handle._thread_lock:
        fd = handle._locked_writer_fd()
        try:
            finish_journal(handle.root, handle.session, handle.path)
            forms = _record_forms(handle, record_seq)
            planned = _plan_in_place(handle, fd, seqs, record_seq, forms)
            if planned is None:
                return _rewrite(handle, seqs, record_seq, forms)
            if planned:
                overwrite(handle.root, handle.session, handle.path, handle._fd_inode, planned)
            return len(planned)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)


def finish_pending(handle: SessionFile) -> int:
    """Replay the session's in-place erase journal a crash left behind (see :mod:`.jsonl_scrub_journal`), under the
    writers' lock, if it is free now; returns how many lines it wrote. A held lock means an erase (or an append) is
    at work: it finishes the journal itself (a writer that re-reads the tail replays one first), and opening the
    log does not wait for it."""
    if not handle._thread_lock.acquire(blocking=False):
        return 0
    try:
        fd = handle._locked_writer_fd(time.monotonic(), 0.0)
    except LogLockTimeout:
        handle._thread_lock.release()
        return 0
    try:
        return finish_journal(handle.root, handle.session, handle.path)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        handle._thread_lock.release()


def _record_forms(handle: SessionFile, record_seq: int) -> dict[int, str]:
    """seq -> form as the erasure record at ``record_seq`` lists it ({} when it cannot be read: forms by spec)."""
    line = handle.lines_at([record_seq]).get(record_seq)
    record = None if line is None else decode_line(line)
    if record is None or record.get("type") != ERASURE_TYPE:
        return {}
    return range_forms(record.get("payload"))


def _plan_in_place(
    handle: SessionFile, fd: int, seqs: set[int], record_seq: int, forms: dict[int, str]
) -> list[tuple[int, int, bytes]] | None:
    """``(offset, seq, erased line)`` of every target still holding content, each as long as its line; ``None``
    when one erased form does not fit its line (the caller rewrites the file)."""
    starts, visible = handle._index()
    planned = []
    for seq in sorted(seqs):
        if not 1 <= seq < min(visible, len(starts)):  # a target always has a later line: its erasure record
            continue
        start, end = starts[seq - 1], starts[seq]
        line = os.pread(fd, end - start, start)
        envelope = decode_line(line) if line.endswith(b"\n") else None
        if envelope is None or envelope.get("seq") != seq:
            raise _damaged(handle.session, seq)
        if is_erased(envelope):
            continue
        try:
            form = listed_form(forms, seq, envelope)
            planned.append((start, seq, erased_line(envelope, record_seq, form, size=len(line))))
        except ValueError:
            return None
    return planned


def _rewrite(handle: SessionFile, seqs: set[int], record_seq: int, forms: dict[int, str]) -> int:
    """The whole-file fallback: every target line replaced (unpadded), the file renamed over the old one."""
    with open(handle.path, "rb") as source:
        content = source.read()
    lines = content.split(b"\n")
    tail = lines.pop()  # bytes after the last newline (a torn line; kept as it is)
    changed = 0
    for seq in sorted(seqs):
        if not 1 <= seq <= len(lines):
            continue
        envelope = decode_line(lines[seq - 1] + b"\n")
        if envelope is None or envelope.get("seq") != seq:
            raise _damaged(handle.session, seq)
        if is_erased(envelope):
            continue
        lines[seq - 1] = erased_line(envelope, record_seq, listed_form(forms, seq, envelope))[:-1]
        changed += 1
    if changed:
        _replace(handle, b"\n".join(lines) + b"\n" + tail)
    return changed


def _damaged(session: str, seq: int) -> IntegrityError:
    """A target that is not an event at its place: reported (the erase stops, its record stays pending for
    ``zaxy repair`` to finish once the damage is set aside), never silently skipped."""
    return IntegrityError(
        f"session {session!r} is damaged at event {seq}, which an erasure must scrub: the line there is not an event",
        field="session",
        remediation=repair_hint(session),
        details={"session": session, "seq": seq},
    )


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
