"""One session's JSONL file: locked appends, O(1) tail, seq -> offset seeks.

This is the storage engine under :class:`~zaxy_agents.storage.files.jsonl_log.JsonlEventLog`. It works on plain
dicts and bytes (stdlib only) so the hook fast path can append without importing pydantic.

Concurrency: an exclusive ``flock`` on the data file serialises writers across processes; a thread lock
serialises threads of one process (flock does not, since they share the open file description). Inside the
lock the writer re-checks the file's identity and size against its cached tail, so it never re-reads the
whole file and never hands out a seq twice.

Crash safety: each append is one ``write`` of complete lines. What a killed writer leaves behind (a torn final
line, the first events of an unfinished batch) is detected and set aside by :mod:`.torn_tail` before the next
append; the fd helpers are in :mod:`.file_io`.
"""

from __future__ import annotations

import fcntl
import os
import time
from _thread import allocate_lock  # what threading.Lock is, without importing threading on the hook path
from array import array

from zaxy_agents.errors import IntegrityError
from zaxy_agents.eventloom.drafts import PreparedDraft
from zaxy_agents.eventloom.sealing import json_string, seal
from zaxy_agents.storage.files.folder import ensure_eventloom_dir, permission_denied

from .file_io import (
    _INDEX_CHUNK,
    LogLockTimeout,
    _decode_line,
    _flock,
    _last_line_start,
    _last_newline_end,
    _recent_ids,
    _write_all,
    storage_error,
)
from .line_search import Unsearchable, search_lines
from .spool import drained_record, pending_files, read_spool
from .spool import remove as remove_spool
from .torn_tail import (
    TornTail,
    _finish_sidecar,
    _recovered_tail,
    _Tail,
    _torn_recovery_draft,
    batch_marker,
    batch_start,
)

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

_EXACT_READ_LINES = 64  # bounded ranges up to this many lines are read exactly, not streamed
# lines_at searches (instead of scanning to build the index) for at most this many seqs, when the index would have to
# scan at least _SEARCH_MIN_BYTES. A search costs ~log2(size / 4 KiB) probes of 4 KiB and one JSON decode each per
# seq (~8 probes, ~32 KiB, for a 1.2 MB session of 1,000 events), so 16 seqs read ~0.5 MB: less than the scan of a
# 1 MB file, which is what a checkout's citations (a cited event and its successor) of one session stay under.
# Beyond that, or for files under 256 KiB (~200 events: a scan of ~0.3 ms), the scan is cheap and its index
# serves every later read of the session with one seek.
_SEARCH_MAX_SEQS = 16
_SEARCH_MIN_BYTES = 256 << 10
# A handle answers this many lines_at calls by search, then builds its index: a session cited again and again (a
# warm process's checkouts) pays one scan (~5 searches' CPU for 1,000 events) and then one seek per line.
_SEARCHES_BEFORE_INDEX = 4
ERASING_DIR = ".erasing"  # jsonl_scrub_journal.JOURNAL_DIR_NAME (not imported on the hook path)
SPOOL_DEDUPE_MARGIN = 10_000  # lines read back for ids of spooled events a cut-short drain already wrote


class SessionFile:
    """The append/read engine for ``<root>/<session>.jsonl``."""

    def __init__(self, root: str | os.PathLike[str], session: str, durability: str = "fsync") -> None:
        self.root = os.fspath(root)  # plain str paths: pathlib costs the hook fast path ~4 ms of imports
        self.session = session
        self.durability = durability
        self.dirty = False
        self._thread_lock = allocate_lock()
        self._fd: int | None = None
        self._fd_inode = -1  # the inode of ``_fd`` (constant while it is open: saves an fstat per append)
        self._tail: _Tail | None = None
        # read_tail's last answer and the file version it was read from ((inode, size, mtime_ns), tail)
        self._read_tail_seen: tuple[tuple[int, int, int], tuple[int, str] | None] | None = None
        self._path = os.path.join(self.root, f"{session}.jsonl")
        # Dense line index: byte offset of every complete line (seq n is line n). Built by scanning only bytes
        # not seen before, so random access (get/resolve/replay from a seq) costs one seek, not a file scan.
        self._index_lock = allocate_lock()
        self._line_starts = array("q")
        self._indexed_inode: int | None = None
        self._indexed_to = 0
        self._pending_start = 0
        self._visible = 0
        self._searches = 0  # lines_at calls answered by binary search (see _SEARCHES_BEFORE_INDEX)

    @property
    def path(self) -> str:
        return self._path

    def last_written(self) -> tuple[tuple[int, int], int] | None:
        """``((inode, size), seq)`` right after this handle's last append, or ``None`` (no I/O)."""
        tail = self._tail
        return None if tail is None else ((tail.inode, tail.size), tail.seq)

    # ------------------------------------------------------------------ writing
    def append(self, drafts: list[PreparedDraft], *, lock_timeout: float | None = None) -> list[dict[str, Any]]:
        """Assign seqs, hash, write all ``drafts`` in one write (and one fsync in ``fsync`` mode).

        All or nothing: when the write or its fsync fails (a full disk, an I/O error) the file is cut back to
        where it was, so no part of the batch stays behind, and :class:`StorageFullError` (or the ``OSError``)
        is raised.

        ``lock_timeout``: wait at most this many seconds for the log lock, then raise :class:`LogLockTimeout`
        having written nothing (the hook path spools instead; see :mod:`.spool`). Events a hook spooled earlier
        are drained first, in order. The returned envelopes include recovery and drained events.
        """
        deadline = None if lock_timeout is None else time.monotonic() + lock_timeout
        if not self._thread_lock.acquire(timeout=-1 if lock_timeout is None else max(0.0, lock_timeout)):
            raise LogLockTimeout(self.session, lock_timeout)
        try:
            fd = self._locked_writer_fd(deadline, lock_timeout)
            try:
                tail, recoveries = self._locked_tail(fd)
                spool_files = pending_files(self.root, self.session)
                if spool_files:
                    drafts = [*self._spooled(fd, tail, spool_files), *drafts]
                drafts = [*(_torn_recovery_draft(torn) for torn in recoveries), *drafts]
                seq, prev = tail.seq, tail.hash
                envelopes: list[dict[str, Any]] = []
                chunks: list[bytes] = []
                offset = tail.size
                session_json = json_string(self.session)
                size = len(drafts)
                for position, draft in enumerate(drafts, start=1):
                    seq += 1
                    batch = (position, size) if size > 1 else None
                    envelope, line = seal(draft, seq, prev, self.session, session_json, batch)
                    prev = envelope["hash"]
                    offset += len(line)
                    envelopes.append(envelope)
                    chunks.append(line)
                try:
                    _write_all(fd, b"".join(chunks))
                    if self.durability == "fsync" or recoveries or spool_files:  # sidecars/spools go once durable
                        os.fdatasync(fd)
                    else:
                        self.dirty = True
                except OSError as exc:
                    self._tail = None
                    os.ftruncate(fd, tail.size)  # nothing of a failed batch stays in the log
                    raise storage_error(exc, self.path) from exc
                for torn in recoveries:  # their records are durable now: the sidecars stop being pending
                    _finish_sidecar(self.root, torn)
                self._tail = _Tail(tail.inode, offset, seq, prev)
                self._learn_own_append(fd, tail, chunks, seq, prev)
                if spool_files:
                    remove_spool(spool_files)
                return envelopes
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            self._thread_lock.release()

    def _learn_own_append(self, fd: int, before: _Tail, lines: list[bytes], seq: int, digest: str) -> None:
        """What this append wrote, told to the readers of this handle (the flock is still held, so the file is
        exactly the one read before plus ``lines``): the tail :meth:`read_tail` would read and the line starts
        :meth:`_index` would scan. Projecting the event just appended (the one-event path) then reads its line
        with one ``pread`` instead of re-opening the file, scanning it for newlines and decoding its last line."""
        stat = os.fstat(fd)
        if stat.st_ino != before.inode or stat.st_size != before.size + sum(map(len, lines)):
            return
        self._read_tail_seen = ((stat.st_ino, stat.st_size, stat.st_mtime_ns), (seq, digest))
        with self._index_lock:
            if self._indexed_inode != before.inode or self._indexed_to != before.size:
                return  # the index lags (or was never built): _index scans from where it is
            if self._pending_start != before.size or self._visible != len(self._line_starts):
                return
            position = before.size
            for line in lines:
                self._line_starts.append(position)
                position += len(line)
            self._indexed_to = self._pending_start = position
            self._visible = len(self._line_starts)

    def _spooled(self, fd: int, tail: _Tail, paths: list[str]) -> list[PreparedDraft]:
        """The spooled drafts not yet in the log (a drain cut short after its write left them), then the record."""
        spooled = read_spool(paths)
        present = _recent_ids(fd, tail.size, len(spooled) + SPOOL_DEDUPE_MARGIN) if spooled else set()
        fresh = [draft for draft in spooled if draft.event_id not in present]
        return [*fresh, drained_record(paths, fresh, len(spooled) - len(fresh))]

    def _locked_writer_fd(self, deadline: float | None = None, timeout: float | None = None) -> int:
        """The writer fd with the flock held, for the file currently at ``path`` (waiting until ``deadline``).

        A repair or an erasure replaces the file (write + rename) while holding the flock of the old one; a writer
        that was waiting for that flock must not append to the replaced inode, so it checks after locking.
        """
        while True:
            fd = self._writer_fd()
            _flock(fd, deadline, self.session, timeout)
            try:
                if os.stat(self.path).st_ino == self._fd_inode:
                    return fd
            except FileNotFoundError:
                pass
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            self._fd, self._tail = None, None

    def sync(self) -> None:
        """Flush written-but-unsynced appends (``batch`` durability) to stable storage.

        The fdatasync runs outside the thread lock so group commit never stalls concurrent appenders.
        """
        with self._thread_lock:
            if not self.dirty or self._fd is None:
                return
            fd, self.dirty = self._fd, False
        try:
            os.fdatasync(fd)
        except OSError:
            self.dirty = True
            raise

    def close(self) -> None:
        with self._thread_lock:
            if self._fd is not None:
                if self.dirty:
                    os.fdatasync(self._fd)
                    self.dirty = False
                os.close(self._fd)
                self._fd = None
                self._tail = None

    def _writer_fd(self) -> int:
        if self._fd is not None:
            try:
                if os.stat(self.path).st_ino == self._fd_inode:
                    return self._fd
            except FileNotFoundError:
                pass
            os.close(self._fd)  # the file was replaced or removed: reopen by path
            self._fd, self._tail = None, None
        ensure_eventloom_dir(self.root)
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        except PermissionError:
            raise permission_denied(self.root, "write to") from None
        self._fd_inode = os.fstat(self._fd).st_ino
        return self._fd

    def _locked_tail(self, fd: int) -> tuple[_Tail, list[TornTail]]:
        """The tail this append chains from, and the torn-tail recoveries to record first (see
        :func:`.torn_tail._recovered_tail`). Caller holds the flock. No read while the file is exactly as this
        handle's last append left it."""
        stat = os.fstat(fd)
        cached = self._tail
        if cached is not None and cached.inode == stat.st_ino and cached.size == stat.st_size:
            return cached, []
        if os.path.isdir(os.path.join(self.root, ERASING_DIR)):  # an in-place erase a crash interrupted
            from .jsonl_scrub_journal import finish_journal

            finish_journal(self.root, self.session, self.path)
        return _recovered_tail(fd, stat, self.root, self.session, self.path)

    # ------------------------------------------------------------------ reading
    def read_tail(self, known: os.stat_result | None = None) -> tuple[int, str] | None:
        """(seq, hash) of the last visible event without taking the lock; ``None`` for an empty log.

        Not visible: a torn final line, and the events of a batch a crash cut short (see :func:`batch_start`).

        Remembered per file version ``(inode, size, mtime_ns)``: the log only grows by appends (a rewrite makes a
        new inode or a new mtime), so an unchanged file has the same tail, and a whole-memory checkout asks every
        session's head up to three times (one ``stat`` each instead of an open, reads and a decode). ``known``: a
        ``stat`` of the file the caller just made (listing sessions stats each file anyway).
        """
        try:
            stat = known if known is not None else os.stat(self.path)
        except FileNotFoundError:
            return None
        seen = self._read_tail_seen
        if seen is not None and seen[0] == (stat.st_ino, stat.st_size, stat.st_mtime_ns):
            return seen[1]
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            return self._tail_of(fd, os.fstat(fd))
        finally:
            os.close(fd)

    def _tail_of(self, fd: int, stat: os.stat_result) -> tuple[int, str] | None:
        """:meth:`read_tail` of the open file ``fd`` that ``stat`` describes (remembered per file version)."""
        version = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        seen = self._read_tail_seen
        if seen is not None and seen[0] == version:
            return seen[1]
        size = stat.st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            size = _last_newline_end(fd, size)
        size = batch_start(fd, size)
        if size == 0:
            tail = None
        else:
            start = _last_line_start(fd, size)
            envelope = _decode_line(os.pread(fd, size - start, start), self.path, where="last line")
            tail = int(envelope["seq"]), str(envelope["hash"])
        self._read_tail_seen = (version, tail)
        return tail

    def iter_lines(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[tuple[int, bytes]]:
        """Yield ``(offset, line)`` for visible lines from ``from_seq``, streaming (bounded memory).

        The lines are those the index saw: a batch still being written (or cut short by a crash) is not
        yielded until it is whole.
        """
        starts, visible = self._index()
        last = visible if to_seq is None else min(to_seq, visible)
        if from_seq > last:
            return
        if last - from_seq < _EXACT_READ_LINES:  # a few lines (the tail a catch-up reads): no 1 MB buffered reader
            exact = self._read_range(starts, from_seq, last)
            if exact is not None:
                yield from exact
                return
        try:
            handle = open(self.path, "rb", buffering=1 << 20)  # noqa: SIM115 - closed in finally
        except FileNotFoundError:
            return
        try:
            offset = starts[from_seq - 1]
            handle.seek(offset)
            seq = from_seq
            for line in handle:
                if not line.endswith(b"\n") or seq > last:
                    return  # torn tail: never yielded, recovered by the next writer
                yield offset, line
                offset += len(line)
                seq += 1
        finally:
            handle.close()

    def _read_range(self, starts: array, from_seq: int, last: int) -> list[tuple[int, bytes]] | None:
        """Visible lines ``from_seq..last``, read with one ``pread`` of exactly their bytes (a citation or a hit's
        text: no 1 MB read-ahead). ``None`` when the bytes do not end where the index says lines end (the file was
        rewritten in place): the caller then streams from the first offset, as for long ranges."""
        with self._index_lock:
            start = starts[from_seq - 1]
            end = starts[last] if last < len(starts) else self._pending_start
            bounds = set(starts[from_seq:last]) | {end}
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return []
        try:
            data = os.pread(fd, end - start, start)
        finally:
            os.close(fd)
        lines: list[tuple[int, bytes]] = []
        position = 0
        while position < len(data):
            newline = data.find(b"\n", position)
            if newline < 0 or start + newline + 1 not in bounds:
                return None
            lines.append((start + position, data[position : newline + 1]))
            position = newline + 1
        return lines if len(data) == end - start else None

    def lines_at(self, seqs: Iterable[int]) -> dict[int, bytes]:
        """The visible lines at ``seqs`` (absent seqs are left out).

        Through the line index (one seek each) when it is current, or nearly so, or when many seqs are wanted;
        else by binary search over the file's bytes (:mod:`.line_search`), so a first citation of a few events of
        a long session does not scan the whole file to build an index (see :data:`_SEARCH_MAX_SEQS`). A handle
        searched :data:`_SEARCHES_BEFORE_INDEX` times builds its index on the next call (a session read again and
        again).
        """
        wanted = sorted(seq for seq in set(seqs) if seq >= 1)
        if not wanted:
            return {}
        if len(wanted) <= _SEARCH_MAX_SEQS and self._searches < _SEARCHES_BEFORE_INDEX:
            found = self._lines_by_search(wanted)
            if found is not None:
                self._searches += 1
                return found
        return self._lines_by_index(wanted)

    def _lines_by_search(self, wanted: list[int]) -> dict[int, bytes] | None:
        """:meth:`lines_at` by binary search, or ``None`` when the index is the cheaper way (or the file is not
        shaped as a well-formed log where the search looked: the index path then answers exactly as before)."""
        try:
            fd = os.open(self._path, os.O_RDONLY)
        except FileNotFoundError:
            return {}
        try:
            stat = os.fstat(fd)
            with self._index_lock:
                current = stat.st_ino == self._indexed_inode and stat.st_size >= self._indexed_to
                unscanned = stat.st_size - self._indexed_to if current else stat.st_size
            if unscanned < _SEARCH_MIN_BYTES:
                return None
            try:
                tail = self._tail_of(fd, stat)  # the last visible seq: past it, an unfinished batch or a torn line
                visible = [seq for seq in wanted if tail is not None and seq <= tail[0]]
                return search_lines(fd, stat.st_size, visible)
            except (Unsearchable, IntegrityError):
                return None
        finally:
            os.close(fd)

    def _lines_by_index(self, wanted: list[int]) -> dict[int, bytes]:
        starts, visible = self._index()
        found: dict[int, bytes] = {}
        wanted = [seq for seq in wanted if seq <= visible]
        if not wanted:
            return found
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - closed in finally
        except FileNotFoundError:
            return found
        try:
            for seq in wanted:
                handle.seek(starts[seq - 1])
                line = handle.readline()
                if line.endswith(b"\n"):
                    found[seq] = line
        finally:
            handle.close()
        return found

    def _index(self) -> tuple[array, int]:
        """Bring the line index up to date with the file (scans only new bytes; rescans a replaced file).

        Returns the line starts and how many lines are visible (complete, and not part of an unfinished batch).
        """
        with self._index_lock:
            try:
                stat = os.stat(self._path)
            except FileNotFoundError:
                self._line_starts, self._indexed_inode, self._indexed_to, self._pending_start = array("q"), None, 0, 0
                self._visible = 0
                return self._line_starts, 0
            if stat.st_ino != self._indexed_inode or stat.st_size < self._indexed_to:
                self._line_starts, self._indexed_to, self._pending_start = array("q"), 0, 0
                self._indexed_inode, self._visible = stat.st_ino, 0
            elif self._visible < len(self._line_starts) or self._pending_start < self._indexed_to:
                # The last scan ended in an unfinished batch or a torn line: the next append may cut those bytes
                # and write its recovery record in their place, so rescan from the end of the last visible line.
                stable = self._line_starts[self._visible] if self._visible < len(self._line_starts) else None
                del self._line_starts[self._visible :]
                self._indexed_to = self._pending_start = self._pending_start if stable is None else stable
            if stat.st_size > self._indexed_to:
                starts, pending, position = self._line_starts, self._pending_start, self._indexed_to
                with open(self._path, "rb") as handle:
                    handle.seek(position)
                    while chunk := handle.read(_INDEX_CHUNK):
                        newline = chunk.find(b"\n")
                        while newline >= 0:
                            starts.append(pending)
                            pending = position + newline + 1
                            newline = chunk.find(b"\n", newline + 1)
                        position += len(chunk)
                    self._visible = len(starts)
                    if starts:
                        handle.seek(starts[-1])
                        marker = batch_marker(handle.read(pending - starts[-1]))
                        if marker is not None and marker[0] < marker[1]:
                            self._visible = max(0, len(starts) - marker[0])
                self._indexed_to, self._pending_start = position, pending
            return self._line_starts, self._visible
