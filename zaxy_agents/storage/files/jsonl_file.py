"""One session's JSONL file: locked appends, O(1) tail, torn-tail recovery, seq -> offset seeks.

This is the storage engine under :class:`~zaxy_agents.storage.files.jsonl_log.JsonlEventLog`. It works on plain
dicts and bytes (stdlib only) so the hook fast path can append without importing pydantic.

Concurrency: an exclusive ``flock`` on the data file serialises writers across processes; a thread lock
serialises threads of one process (flock does not, since they share the open file description). Inside the
lock the writer re-checks the file's identity and size against its cached tail, so it never re-reads the
whole file and never hands out a seq twice.

Crash safety: each append is one ``write`` of complete lines. A process killed mid-write can leave only a
torn final line (bytes after the last newline, never acknowledged). The next writer moves those bytes to a
sidecar under ``.torn/``, truncates to the last newline, and appends an ``eventloom.torn_tail_recovered``
event recording the sidecar, so nothing acknowledged is lost or rewritten and the log verifies.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import time
from _thread import allocate_lock  # what threading.Lock is, without importing threading on the hook path
from array import array

from zaxy_agents.errors import IntegrityError, LockedError, StorageFullError
from zaxy_agents.eventloom.canonical import GENESIS_HASH, encode_line, event_hash, sha256
from zaxy_agents.eventloom.drafts import PreparedDraft
from zaxy_agents.eventloom.sealing import json_string, seal
from zaxy_agents.storage.files.folder import ensure_eventloom_dir, permission_denied

from .spool import drained_record, pending_files, read_spool
from .spool import remove as remove_spool

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

TORN_DIR_NAME = ".torn"
PENDING_SUFFIX = ".pending"
TORN_RECOVERY_TYPE = "eventloom.torn_tail_recovered"
_READ_CHUNK = 1 << 16
_INDEX_CHUNK = 1 << 20
_EXACT_READ_LINES = 64  # bounded ranges up to this many lines are read exactly, not streamed
SPOOL_DEDUPE_MARGIN = 10_000  # lines read back for ids of spooled events a cut-short drain already wrote


class LogLockTimeout(LockedError):
    """The log lock was not free within the caller's budget; nothing was written."""

    def __init__(self, session: str, timeout: float | None) -> None:
        super().__init__(
            f"the log of session {session!r} stayed locked by another process for {timeout} s",
            field="session",
            remediation="Retry later; `zaxy doctor` names what holds the lock.",
        )


def _flock(fd: int, deadline: float | None, session: str, timeout: float | None) -> None:
    """Take the exclusive lock, waiting forever (``deadline`` None) or until ``deadline`` (monotonic)."""
    if deadline is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LogLockTimeout(session, timeout) from None
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, 0.02)


def _recent_ids(fd: int, size: int, count: int) -> set[str]:
    """Event ids of the last ``count`` lines before ``size`` (reads backwards; used only while draining)."""
    ids: set[str] = set()
    position, data = size, b""
    while position > 0 and data.count(b"\n") <= count:
        start = max(0, position - _INDEX_CHUNK)
        data = os.pread(fd, position - start, start) + data
        position = start
    lines = data.split(b"\n")
    for line in lines[-(count + 1) :] if position > 0 else lines:
        marker = line.find(b'"id":"')
        if marker != -1:
            ids.add(line[marker + 6 : line.find(b'"', marker + 6)].decode("ascii", "replace"))
    return ids


class _Tail:
    __slots__ = ("hash", "inode", "seq", "size")

    def __init__(self, inode: int, size: int, seq: int, hash: str) -> None:
        self.inode, self.size, self.seq, self.hash = inode, size, seq, hash


class TornTail:
    """What a torn-tail recovery found and where it put the bytes."""

    __slots__ = ("offset", "sha256", "sidecar", "size")

    def __init__(self, offset: int, size: int, sha256: str, sidecar: str) -> None:
        self.offset, self.size, self.sha256, self.sidecar = offset, size, sha256, sidecar


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
        """The (seq, hash) at the end of the file, recovering a torn tail first. Caller holds the flock.

        Also returns the torn-tail recoveries whose record is not in the log yet (this one, and any a writer
        killed between cutting the file and appending the record left pending): the caller appends their
        records before its own events.
        """
        stat = os.fstat(fd)
        cached = self._tail
        if cached is not None and cached.inode == stat.st_ino and cached.size == stat.st_size:
            return cached, []
        size = stat.st_size
        recoveries = self._pending_recoveries(fd, size)
        cut = size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            cut = _last_newline_end(fd, size)
            kind = self._torn_kind(fd, cut, size)
            if kind == "complete":
                _write_all(fd, b"\n")  # a whole, chained event lost only its newline: keep it
                os.fsync(fd)
                size += 1
                cut = size
            elif kind != "partial":
                raise IntegrityError(
                    f"the last line of {os.path.basename(self.path)} is a complete event that "
                    f"{'does not match its hash' if kind == 'tampered' else 'had its line terminator altered'}: "
                    "it was modified, not torn by a crash",
                    field="session",
                    remediation=f"Run `zaxy verify --session-id {self.session}` to see the damage and "
                    f"`zaxy repair --session-id {self.session}` to set it aside and continue the log.",
                )
        cut = batch_start(fd, cut)  # whole events of a batch a crash cut short go with the torn bytes
        if cut < size:
            recoveries.append(self._recover_torn_tail(fd, size, cut))
            size = cut
        if size == 0:
            return _Tail(stat.st_ino, 0, 0, GENESIS_HASH), recoveries
        start = _last_line_start(fd, size)
        line = os.pread(fd, size - start, start)
        before = _last_line_start(fd, start) if start else 0
        previous = os.pread(fd, start - before, before) if start else None
        problem = tail_problem(line, previous)
        if problem is not None:
            raise IntegrityError(
                f"cannot append to {os.path.basename(self.path)}: {problem}",
                field="session",
                remediation=f"Run `zaxy verify --session-id {self.session}` to see the damage and "
                f"`zaxy repair --session-id {self.session}` to set it aside and continue the log.",
            )
        envelope = json.loads(line)
        return _Tail(stat.st_ino, size, int(envelope["seq"]), str(envelope["hash"])), recoveries

    def _torn_kind(self, fd: int, cut: int, size: int) -> str:
        """What the bytes after the last newline are (see :func:`classify_torn_tail`)."""
        previous = None
        if cut:
            start = _last_line_start(fd, cut)
            previous = _decode_line(os.pread(fd, cut - start, start), self.path, where="last line")
        return classify_torn_tail(os.pread(fd, size - cut, cut), previous)

    def _recover_torn_tail(self, fd: int, size: int, cut: int) -> TornTail:
        """Move the torn bytes to a *pending* sidecar, then cut the file. The sidecar gets its final name only
        once the record of the recovery is durable in the log, so a crash in between is finished by the next
        writer (:meth:`_pending_recoveries`) and a sidecar never exists without its record.

        ``cut`` is where the unacknowledged bytes start: the torn line, or the first event of a batch a crash
        cut short (those whole events were never acknowledged either)."""
        torn_bytes = os.pread(fd, size - cut, cut)
        digest = sha256(torn_bytes).hexdigest()
        torn_dir = os.path.join(self.root, TORN_DIR_NAME)
        try:
            os.makedirs(torn_dir, exist_ok=True)
            name = f"{self.session}.{cut}.{digest[:12]}.torn"
            with open(os.path.join(torn_dir, name + PENDING_SUFFIX), "wb") as handle:
                handle.write(torn_bytes)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise storage_error(exc, self.path) from exc
        _fsync_directory(torn_dir)
        os.ftruncate(fd, cut)
        os.fsync(fd)
        return TornTail(cut, len(torn_bytes), digest, os.path.join(TORN_DIR_NAME, name))

    def _pending_recoveries(self, fd: int, size: int) -> list[TornTail]:
        """Recoveries a killed writer cut from the file without recording: their sidecars are still pending.

        The record of a recovery is the line at the offset where the file was cut. A pending sidecar whose
        record is there only needs its final name; one whose record is missing gets it now.
        """
        torn_dir = os.path.join(self.root, TORN_DIR_NAME)
        try:
            names = os.listdir(torn_dir)
        except OSError:
            return []
        prefix = f"{self.session}."
        missing = []
        for name in sorted(names):
            if not (name.startswith(prefix) and name.endswith(PENDING_SUFFIX)):
                continue
            parts = name[len(prefix) : -len(PENDING_SUFFIX)].split(".")
            if len(parts) != 3 or not parts[0].isdigit() or parts[2] != "torn" or len(parts[1]) != 12:
                continue
            offset = int(parts[0])
            final = os.path.join(TORN_DIR_NAME, name[: -len(PENDING_SUFFIX)])
            with open(os.path.join(torn_dir, name), "rb") as handle:
                data = handle.read()
            torn = TornTail(offset, len(data), sha256(data).hexdigest(), final)
            if offset < size and _records_recovery(os.pread(fd, min(size - offset, 1 << 16), offset), final):
                _finish_sidecar(self.root, torn)
            else:
                missing.append(torn)
        return missing

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
            stat = os.fstat(fd)
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
            self._read_tail_seen = ((stat.st_ino, stat.st_size, stat.st_mtime_ns), tail)
            return tail
        finally:
            os.close(fd)

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
        """The visible lines at ``seqs`` (absent seqs are left out): one seek each through the index."""
        starts, visible = self._index()
        wanted = sorted(seq for seq in set(seqs) if 1 <= seq <= visible)
        found: dict[int, bytes] = {}
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


def batch_marker(line: bytes) -> tuple[int, int] | None:
    """``(position, size)`` of an event written as part of a multi-event batch, from its stored line."""
    if b'"batch":[' not in line[:512]:
        return None
    try:
        marker = json.loads(line).get("batch")
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, AttributeError):
        return None
    if isinstance(marker, list) and len(marker) == 2 and all(type(n) is int for n in marker):
        return marker[0], marker[1]
    return None


def batch_start(fd: int, end: int) -> int:
    """``end`` (the end of a complete line), or where the batch ending there starts when it is unfinished.

    Every event of a multi-event write carries ``batch: [position, size]`` (hashed), so the last line alone
    says whether its batch is whole: when ``position < size`` a crash (or a write still in progress) stopped
    the batch after ``position`` events, none of which was acknowledged.
    """
    if end == 0:
        return 0
    start = _last_line_start(fd, end)
    marker = batch_marker(os.pread(fd, end - start, start))
    if marker is None or marker[0] >= marker[1]:
        return end
    for _ in range(marker[0] - 1):
        start = _last_line_start(fd, start) if start else 0
    return start


def classify_torn_tail(torn: bytes, previous: dict[str, Any] | None) -> str:
    """What bytes after the last newline are.

    ``complete``: a whole event that chains from ``previous`` and lacks only its newline (a crash between the
    last byte and the newline; harmless, the line is completed). ``terminator_altered``: a whole event whose
    newline was replaced by another byte (tampering, never a crash). ``tampered``: bytes that parse as a
    complete JSON value but are not that event (a crash only ever leaves a *prefix* of a line, and no proper
    prefix of an event's line is a complete JSON value: someone edited the last event and removed its
    newline). ``partial``: a genuinely torn write.
    """
    prev_seq, prev_hash = (0, GENESIS_HASH) if previous is None else (previous["seq"], previous["hash"])

    def parse(data: bytes) -> Any:
        try:
            return json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            return _NOT_JSON

    def chains(envelope: Any, data: bytes) -> bool:
        return (
            isinstance(envelope, dict)
            and envelope.get("seq") == prev_seq + 1
            and envelope.get("prev_hash") == prev_hash
            and sealed_problem(envelope, data + b"\n") is None
        )

    whole = parse(torn)
    if whole is not _NOT_JSON:
        return "complete" if chains(whole, torn) else "tampered"
    if len(torn) > 1:
        head = parse(torn[:-1])
        if head is not _NOT_JSON:
            return "terminator_altered" if chains(head, torn[:-1]) else "tampered"
    return "partial"


_NOT_JSON = object()


def sealed_problem(envelope: Any, line: bytes) -> str | None:
    """Why the decoded ``envelope`` of the stored ``line`` is not a sealed event (hash and canonical bytes)."""
    if not isinstance(envelope, dict) or not isinstance(envelope.get("seq"), int):
        return "the line is not an event envelope"
    try:
        if event_hash(envelope) != envelope.get("hash") or encode_line(envelope) != line:
            return f"event {envelope['seq']} does not match its hash"
    except (TypeError, ValueError):
        return f"event {envelope['seq']} cannot be re-encoded"
    return None


def tail_problem(line: bytes, previous: bytes | None) -> str | None:
    """Why the stored ``line`` (newline included) cannot be the event a new append chains from, or ``None``.

    Checks what an append relies on: the line is an event envelope in canonical form whose hash matches its
    content, and it links to ``previous`` (the line before it; ``None`` when it is the first line) by seq and
    ``prev_hash``.
    """
    try:
        envelope = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return "its last line is not valid JSON"
    problem = sealed_problem(envelope, line)
    if problem is not None:
        return f"its last line: {problem}"
    if previous is None:
        if envelope["seq"] != 1 or envelope.get("prev_hash") != GENESIS_HASH:
            return f"its only line is event {envelope['seq']}, not the start of a chain"
        return None
    try:
        before = json.loads(previous)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return f"the line before its last event (seq {envelope['seq']}) is not valid JSON"
    if not isinstance(before, dict) or before.get("seq") != envelope["seq"] - 1:
        return f"its last event (seq {envelope['seq']}) does not follow the line before it"
    if before.get("hash") != envelope.get("prev_hash"):
        return f"its last event (seq {envelope['seq']}) does not chain from the event before it"
    return None


def _torn_recovery_draft(torn: TornTail) -> PreparedDraft:
    return PreparedDraft(
        type=TORN_RECOVERY_TYPE,
        actor="zaxy",
        payload={
            "truncated_at_offset": torn.offset,
            "torn_bytes": torn.size,
            "torn_sha256": torn.sha256,
            "sidecar": torn.sidecar,
            "reason": "a writer stopped mid-append; its unacknowledged bytes (a torn line, or the first events of a "
            "batch it did not finish) were moved to the sidecar",
        },
    )


def _records_recovery(data: bytes, sidecar: str) -> bool:
    """Whether ``data`` starts with the line of a torn-tail recovery record naming ``sidecar``."""
    end = data.find(b"\n")
    try:
        envelope = json.loads(data[: end if end >= 0 else len(data)])
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return False
    return (
        isinstance(envelope, dict)
        and envelope.get("type") == TORN_RECOVERY_TYPE
        and isinstance(envelope.get("payload"), dict)
        and envelope["payload"].get("sidecar") == sidecar
    )


def _finish_sidecar(root: str, torn: TornTail) -> None:
    """Give a sidecar whose record is durable its final name (idempotent)."""
    final = os.path.join(root, torn.sidecar)
    try:
        os.replace(final + PENDING_SUFFIX, final)
    except FileNotFoundError:
        return
    _fsync_directory(os.path.dirname(final))


def _fsync_directory(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def storage_error(exc: OSError, path: str) -> Exception:
    """The structured error for a failed write: a full disk says so; other I/O errors pass through."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StorageFullError(
            f"no space left on the device holding {os.path.dirname(path) or '.'}; nothing was written",
            field="eventloom_path",
            remediation="Free disk space (or raise the quota) and retry: the failed call left the log unchanged.",
        )
    return exc


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _last_newline_end(fd: int, size: int) -> int:
    """Offset just past the last newline before ``size`` (0 when there is none)."""
    position = size
    while position > 0:
        start = max(0, position - _READ_CHUNK)
        chunk = os.pread(fd, position - start, start)
        index = chunk.rfind(b"\n")
        if index >= 0:
            return start + index + 1
        position = start
    return 0


def _last_line_start(fd: int, size: int) -> int:
    """Start offset of the last complete line, given ``size`` ends right after a newline."""
    return _last_newline_end(fd, size - 1)


def _decode_line(line: bytes, path: str, *, where: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IntegrityError(
            f"{os.path.basename(path)}: {where} is not valid JSON ({exc})",
            field="session",
            remediation="Run `zaxy verify` to locate the damage; the log was modified outside Zaxy.",
        ) from exc
    if not isinstance(value, dict) or not isinstance(value.get("seq"), int):
        raise IntegrityError(
            f"{os.path.basename(path)}: {where} is not an event envelope",
            field="session",
            remediation="Run `zaxy verify` to locate the damage.",
        )
    return value
