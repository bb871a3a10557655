"""Torn tails: telling a crash's leftovers from tampering, and recovering them without losing an acknowledged byte.

A process killed mid-write can leave only a torn final line (bytes after the last newline, never acknowledged),
or the first whole events of a multi-event batch it did not finish (each carries ``batch: [position, size]``, so
the last line says whether its batch is whole). Readers hide both (:func:`batch_start`). The next writer, under
the flock, moves those bytes to a sidecar under ``.torn/``, truncates to where they start, and appends an
``eventloom.torn_tail_recovered`` event recording the sidecar (:func:`_recovered_tail`), so nothing acknowledged
is lost or rewritten and the log verifies. A whole chained event that lost only its newline is completed; other
bytes that parse as a complete value were edited, not torn (a crash leaves only a prefix of a line): the append
is refused (:func:`classify_torn_tail`) and nothing is cut.

Kept apart from the append engine (:mod:`.jsonl_file`) because ``verify``, ``repair`` and transfer classify
tails too. Stdlib only: this is on the hook fast path.
"""

from __future__ import annotations

import json
import os

from zaxy_agents.errors import IntegrityError
from zaxy_agents.eventloom.canonical import GENESIS_HASH, encode_line, event_hash, sha256
from zaxy_agents.eventloom.drafts import PreparedDraft

from .file_io import _decode_line, _fsync_directory, _last_line_start, _last_newline_end, _write_all, storage_error

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

TORN_DIR_NAME = ".torn"
PENDING_SUFFIX = ".pending"
TORN_RECOVERY_TYPE = "eventloom.torn_tail_recovered"


class _Tail:
    """Where the next append chains from: the last event's seq and hash, and the file (inode, size) they end."""

    __slots__ = ("hash", "inode", "seq", "size")

    def __init__(self, inode: int, size: int, seq: int, hash: str) -> None:
        self.inode, self.size, self.seq, self.hash = inode, size, seq, hash


class TornTail:
    """What a torn-tail recovery found and where it put the bytes."""

    __slots__ = ("offset", "sha256", "sidecar", "size")

    def __init__(self, offset: int, size: int, sha256: str, sidecar: str) -> None:
        self.offset, self.size, self.sha256, self.sidecar = offset, size, sha256, sidecar


def _recovered_tail(fd: int, stat: os.stat_result, root: str, session: str, path: str) -> tuple[_Tail, list[TornTail]]:
    """The (seq, hash) at the end of the file ``stat`` describes, recovering a torn tail first. Caller holds the flock.

    Also returns the torn-tail recoveries whose record is not in the log yet (this one, and any a writer
    killed between cutting the file and appending the record left pending): the caller appends their
    records before its own events.
    """
    size = stat.st_size
    recoveries = _pending_recoveries(fd, root, session, size)
    cut = size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        cut = _last_newline_end(fd, size)
        kind = _torn_kind(fd, cut, size, path)
        if kind == "complete":
            _write_all(fd, b"\n")  # a whole, chained event lost only its newline: keep it
            os.fsync(fd)
            size += 1
            cut = size
        elif kind != "partial":
            raise IntegrityError(
                f"the last line of {os.path.basename(path)} is a complete event that "
                f"{'does not match its hash' if kind == 'tampered' else 'had its line terminator altered'}: "
                "it was modified, not torn by a crash",
                field="session",
                remediation=f"Run `zaxy verify --session-id {session}` to see the damage and "
                f"`zaxy repair --session-id {session}` to set it aside and continue the log.",
            )
    cut = batch_start(fd, cut)  # whole events of a batch a crash cut short go with the torn bytes
    if cut < size:
        recoveries.append(_recover_torn_tail(fd, root, session, path, size, cut))
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
            f"cannot append to {os.path.basename(path)}: {problem}",
            field="session",
            remediation=f"Run `zaxy verify --session-id {session}` to see the damage and "
            f"`zaxy repair --session-id {session}` to set it aside and continue the log.",
        )
    envelope = json.loads(line)
    return _Tail(stat.st_ino, size, int(envelope["seq"]), str(envelope["hash"])), recoveries


def _torn_kind(fd: int, cut: int, size: int, path: str) -> str:
    """What the bytes after the last newline are (see :func:`classify_torn_tail`)."""
    previous = None
    if cut:
        start = _last_line_start(fd, cut)
        previous = _decode_line(os.pread(fd, cut - start, start), path, where="last line")
    return classify_torn_tail(os.pread(fd, size - cut, cut), previous)


def _recover_torn_tail(fd: int, root: str, session: str, path: str, size: int, cut: int) -> TornTail:
    """Move the torn bytes to a *pending* sidecar, then cut the file. The sidecar gets its final name only
    once the record of the recovery is durable in the log, so a crash in between is finished by the next
    writer (:func:`_pending_recoveries`) and a sidecar never exists without its record.

    ``cut`` is where the unacknowledged bytes start: the torn line, or the first event of a batch a crash
    cut short (those whole events were never acknowledged either)."""
    torn_bytes = os.pread(fd, size - cut, cut)
    digest = sha256(torn_bytes).hexdigest()
    torn_dir = os.path.join(root, TORN_DIR_NAME)
    try:
        os.makedirs(torn_dir, exist_ok=True)
        name = f"{session}.{cut}.{digest[:12]}.torn"
        with open(os.path.join(torn_dir, name + PENDING_SUFFIX), "wb") as handle:
            handle.write(torn_bytes)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise storage_error(exc, path) from exc
    _fsync_directory(torn_dir)
    os.ftruncate(fd, cut)
    os.fsync(fd)
    return TornTail(cut, len(torn_bytes), digest, os.path.join(TORN_DIR_NAME, name))


def _pending_recoveries(fd: int, root: str, session: str, size: int) -> list[TornTail]:
    """Recoveries a killed writer cut from the file without recording: their sidecars are still pending.

    The record of a recovery is the line at the offset where the file was cut. A pending sidecar whose
    record is there only needs its final name; one whose record is missing gets it now.
    """
    torn_dir = os.path.join(root, TORN_DIR_NAME)
    try:
        names = os.listdir(torn_dir)
    except OSError:
        return []
    prefix = f"{session}."
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
            _finish_sidecar(root, torn)
        else:
            missing.append(torn)
    return missing


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
