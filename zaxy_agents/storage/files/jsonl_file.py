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

import fcntl
import json
import os
import time
from _thread import allocate_lock  # what threading.Lock is, without importing threading on the hook path
from array import array
from json.encoder import encode_basestring  # type: ignore[attr-defined]

from zaxy_agents.errors import IntegrityError
from zaxy_agents.eventloom.canonical import GENESIS_HASH, canonical_json, encode_line, event_hash, sha256
from zaxy_agents.eventloom.drafts import PreparedDraft

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

TORN_DIR_NAME = ".torn"
TORN_RECOVERY_TYPE = "eventloom.torn_tail_recovered"
_READ_CHUNK = 1 << 16
_INDEX_CHUNK = 1 << 20


_second_prefix: tuple[int, str] = (-1, "")  # (epoch second, its formatted prefix): appends reuse it


def utc_timestamp(moment: float | None = None) -> str:
    """UTC ISO-8601 with microseconds and a ``Z`` suffix (``time`` only: ``datetime`` costs hook start-up)."""
    global _second_prefix
    nanos = time.time_ns() if moment is None else round(moment * 1_000_000) * 1000
    seconds, remainder = divmod(nanos, 1_000_000_000)
    cached_second, prefix = _second_prefix
    if cached_second != seconds:
        prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        _second_prefix = (seconds, prefix)
    return f"{prefix}.{remainder // 1000:06d}Z"


def new_event_id() -> str:
    """A random 128-bit event id (part of the hashed envelope)."""
    return "evt_" + os.urandom(16).hex()


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
        self._path = os.path.join(self.root, f"{session}.jsonl")
        # Dense line index: byte offset of every complete line (seq n is line n). Built by scanning only bytes
        # not seen before, so random access (get/resolve/replay from a seq) costs one seek, not a file scan.
        self._index_lock = allocate_lock()
        self._line_starts = array("q")
        self._indexed_inode: int | None = None
        self._indexed_to = 0
        self._pending_start = 0

    @property
    def path(self) -> str:
        return self._path

    def last_written(self) -> tuple[tuple[int, int], int] | None:
        """``((inode, size), seq)`` right after this handle's last append, or ``None`` (no I/O)."""
        tail = self._tail
        return None if tail is None else ((tail.inode, tail.size), tail.seq)

    # ------------------------------------------------------------------ writing
    def append(self, drafts: list[PreparedDraft]) -> list[dict[str, Any]]:
        """Assign seqs, hash, write all ``drafts`` in one write (and one fsync in ``fsync`` mode)."""
        with self._thread_lock:
            fd = self._writer_fd()
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                tail, torn = self._locked_tail(fd)
                if torn is not None:
                    drafts = [_torn_recovery_draft(torn), *drafts]
                seq, prev = tail.seq, tail.hash
                envelopes: list[dict[str, Any]] = []
                chunks: list[bytes] = []
                offset = tail.size
                session_json = _json_string(self.session)
                for draft in drafts:
                    seq += 1
                    envelope, line = _seal(draft, seq, prev, self.session, session_json)
                    prev = envelope["hash"]
                    offset += len(line)
                    envelopes.append(envelope)
                    chunks.append(line)
                _write_all(fd, b"".join(chunks))
                if self.durability == "fsync":
                    os.fdatasync(fd)
                else:
                    self.dirty = True
                self._tail = _Tail(tail.inode, offset, seq, prev)
                return envelopes
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

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
        os.makedirs(self.root, exist_ok=True)
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        self._fd_inode = os.fstat(self._fd).st_ino
        return self._fd

    def _locked_tail(self, fd: int) -> tuple[_Tail, TornTail | None]:
        """The (seq, hash) at the end of the file, recovering a torn tail first. Caller holds the flock."""
        stat = os.fstat(fd)
        cached = self._tail
        if cached is not None and cached.inode == stat.st_ino and cached.size == stat.st_size:
            return cached, None
        torn = None
        size = stat.st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            cut = _last_newline_end(fd, size)
            if self._completes_chain(fd, cut, size):
                _write_all(fd, b"\n")  # a whole, chained event lost only its newline: keep it
                os.fsync(fd)
                size += 1
            else:
                torn = self._recover_torn_tail(fd, size)
                size = torn.offset
        if size == 0:
            return _Tail(stat.st_ino, 0, 0, GENESIS_HASH), torn
        start = _last_line_start(fd, size)
        line = os.pread(fd, size - start, start)
        envelope = _decode_line(line, self.path, where="last line")
        if event_hash(envelope) != envelope.get("hash"):
            raise IntegrityError(
                f"the last event of {os.path.basename(self.path)} (seq {envelope.get('seq')}) does not match its hash",
                field="session",
                remediation="Run `zaxy verify --session-id <session>`; the log was modified outside Zaxy.",
            )
        return _Tail(stat.st_ino, size, int(envelope["seq"]), str(envelope["hash"])), torn

    def _completes_chain(self, fd: int, cut: int, size: int) -> bool:
        """True when the bytes after the last newline are one complete event chaining from the line before."""
        previous = None
        if cut:
            start = _last_line_start(fd, cut)
            previous = _decode_line(os.pread(fd, cut - start, start), self.path, where="last line")
        return classify_torn_tail(os.pread(fd, size - cut, cut), previous) == "complete"

    def _recover_torn_tail(self, fd: int, size: int) -> TornTail:
        cut = _last_newline_end(fd, size)
        torn_bytes = os.pread(fd, size - cut, cut)
        digest = sha256(torn_bytes).hexdigest()
        torn_dir = os.path.join(self.root, TORN_DIR_NAME)
        os.makedirs(torn_dir, exist_ok=True)
        sidecar = os.path.join(torn_dir, f"{self.session}.{cut}.{digest[:12]}.torn")
        with open(sidecar, "wb") as handle:
            handle.write(torn_bytes)
            handle.flush()
            os.fsync(handle.fileno())
        os.ftruncate(fd, cut)
        os.fsync(fd)
        return TornTail(cut, len(torn_bytes), digest, os.path.relpath(sidecar, self.root))

    # ------------------------------------------------------------------ reading
    def read_tail(self) -> tuple[int, str] | None:
        """(seq, hash) of the last complete line without taking the lock; ``None`` for an empty log."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                size = _last_newline_end(fd, size)
            if size == 0:
                return None
            start = _last_line_start(fd, size)
            envelope = _decode_line(os.pread(fd, size - start, start), self.path, where="last line")
            return int(envelope["seq"]), str(envelope["hash"])
        finally:
            os.close(fd)

    def iter_lines(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[tuple[int, bytes]]:
        """Yield ``(offset, line)`` for complete lines from ``from_seq``, streaming (bounded memory)."""
        starts = self._index()
        if from_seq - 1 >= len(starts):
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
                if not line.endswith(b"\n"):
                    return  # torn tail: never yielded, recovered by the next writer
                if to_seq is not None and seq > to_seq:
                    return
                yield offset, line
                offset += len(line)
                seq += 1
        finally:
            handle.close()

    def _index(self) -> array:
        """Bring the line index up to date with the file (scans only new bytes; rescans a replaced file)."""
        with self._index_lock:
            try:
                stat = os.stat(self._path)
            except FileNotFoundError:
                self._line_starts, self._indexed_inode, self._indexed_to, self._pending_start = array("q"), None, 0, 0
                return self._line_starts
            if stat.st_ino != self._indexed_inode or stat.st_size < self._indexed_to:
                self._line_starts, self._indexed_to, self._pending_start = array("q"), 0, 0
                self._indexed_inode = stat.st_ino
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
                self._indexed_to, self._pending_start = position, pending
            return self._line_starts


_json_string = encode_basestring  # == json.dumps(text, ensure_ascii=False) for str, without encoder set-up


def _seal(draft: PreparedDraft, seq: int, prev: str, session: str, session_json: str) -> tuple[dict[str, Any], bytes]:
    """Assign seq/prev_hash/id/timestamp, hash, and encode the line.

    The canonical text is assembled from pre-encoded parts in sorted-key order (``actor, [hash,] id, payload,
    prev_hash, [security,] seq, session, timestamp, type``) so the payload is encoded once, not three times.
    The result is byte-identical to :func:`encode_line` (``verify`` re-checks that on every line).
    """
    event_id = draft.event_id or new_event_id()
    timestamp = draft.timestamp or utc_timestamp()
    payload_json = draft.payload_json if draft.payload_json is not None else canonical_json(draft.payload)
    security_json = f',"security":{canonical_json(draft.security)}' if draft.security else ""
    rest = (
        f'"id":{_json_string(event_id)},"payload":{payload_json},"prev_hash":"{prev}"{security_json},"seq":{seq},'
        f'"session":{session_json},"timestamp":{_json_string(timestamp)},"type":"{draft.type}"}}'
    )
    actor_json = _json_string(draft.actor)
    digest = sha256(f'{{"actor":{actor_json},{rest}'.encode()).hexdigest()
    envelope: dict[str, Any] = {
        "actor": draft.actor,
        "hash": digest,
        "id": event_id,
        "payload": draft.payload,
        "prev_hash": prev,
        "seq": seq,
        "session": session,
        "timestamp": timestamp,
        "type": draft.type,
    }
    if draft.security:
        envelope["security"] = draft.security
    return envelope, f'{{"actor":{actor_json},"hash":"{digest}",{rest}\n'.encode()


def classify_torn_tail(torn: bytes, previous: dict[str, Any] | None) -> str:
    """What bytes after the last newline are.

    ``complete``: a whole event that chains from ``previous`` and lacks only its newline (a crash between the
    last byte and the newline; harmless, the line is completed). ``terminator_altered``: a whole event whose
    newline was replaced by another byte (tampering, never a crash). ``partial``: a genuinely torn write.
    """
    prev_seq, prev_hash = (0, GENESIS_HASH) if previous is None else (previous["seq"], previous["hash"])

    def chains(data: bytes) -> bool:
        try:
            envelope = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError):
            return False
        return (
            isinstance(envelope, dict)
            and envelope.get("seq") == prev_seq + 1
            and envelope.get("prev_hash") == prev_hash
            and event_hash(envelope) == envelope.get("hash")
            and encode_line(envelope) == data + b"\n"
        )

    if chains(torn):
        return "complete"
    if len(torn) > 1 and chains(torn[:-1]):
        return "terminator_altered"
    return "partial"


def _torn_recovery_draft(torn: TornTail) -> PreparedDraft:
    return PreparedDraft(
        type=TORN_RECOVERY_TYPE,
        actor="zaxy",
        payload={
            "truncated_at_offset": torn.offset,
            "torn_bytes": torn.size,
            "torn_sha256": torn.sha256,
            "sidecar": torn.sidecar,
            "reason": "a writer stopped mid-append; the unacknowledged partial line was moved to the sidecar",
        },
    )


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
