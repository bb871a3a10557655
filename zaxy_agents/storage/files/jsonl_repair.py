"""``zaxy repair`` for the embedded log: set unreadable bytes aside, record it, never touch an acknowledged event.

What it fixes in a session file (under the writers' lock):

* **unreadable bytes** (not an event envelope of this session: garbage, a torn or corrupted line) are moved to
  a sidecar ``.repair/<session>.<offset>.<sha12>.bad``. When readable events follow them, each event the
  bytes stood for becomes a *tombstone* line (its seq and the hashes around it, no content) so every later
  event keeps its seq, bytes and citation; at the end of the file the bytes are simply cut;
* **a last event that does not verify** (edited, or its link broken) blocks every append: it is left exactly
  as it is (still excluded from reads and reported by ``verify``) and *acknowledged*, so the log can continue.

One ``eventloom.repaired`` record, appended in the same step, lists the sidecars, the tombstone runs (which
vouches for them, see :mod:`zaxy_agents.eventloom.verifier`) and the acknowledged events. The new file is
written beside the old one and renamed over it, so a crash leaves either the old file or the repaired one;
sidecars are written ``.pending`` first and named once the repaired file is in place. Events that are
readable but out of place (missing, duplicated, reordered: an edit, not damage) are not repaired: the
session needs restoring from a backup.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from zaxy_agents.errors import IntegrityError
from zaxy_agents.eventloom.canonical import GENESIS_HASH, canonical_bytes, sha256
from zaxy_agents.eventloom.drafts import PreparedDraft
from zaxy_agents.eventloom.integrity import decode_line, line_problem
from zaxy_agents.eventloom.sealing import json_string, seal, utc_timestamp
from zaxy_agents.eventloom.verifier import REPAIR_TYPE

from .file_io import _fsync_directory, storage_error
from .jsonl_file import SessionFile
from .jsonl_scrub_journal import finish_journal
from .torn_tail import PENDING_SUFFIX, classify_torn_tail

REPAIR_DIR_NAME = ".repair"
UNREADABLE_TYPE = "eventloom.unreadable"


class _Span:
    """Unreadable bytes at ``offset``, and the seq of the first event they stood for."""

    __slots__ = ("data", "first_seq", "offset", "prev_hash")

    def __init__(self, offset: int, first_seq: int, prev_hash: str | None) -> None:
        self.offset, self.first_seq, self.prev_hash, self.data = offset, first_seq, prev_hash, bytearray()


def repair_session(handle: SessionFile, *, actor: str = "zaxy", dry_run: bool = False) -> dict[str, Any]:
    """Repair one session file (see the module docstring); returns what was found and done."""
    with handle._thread_lock:
        fd = handle._locked_writer_fd()
        try:
            return _repair_locked(handle, fd, actor, dry_run)
        finally:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_UN)


def _repair_locked(handle: SessionFile, fd: int, actor: str, dry_run: bool) -> dict[str, Any]:
    session = handle.session
    if not dry_run:  # an in-place erase a crash interrupted: its journal finishes the lines it was overwriting
        finish_journal(handle.root, session, handle.path)
    with open(handle.path, "rb") as source:
        content = source.read()
    _settle_pending_sidecars(handle.root, session, content)
    kept: list[bytes | tuple[int, _Span]] = []  # lines to keep, or (count, span) placeholders for tombstones
    spans: list[tuple[_Span, int]] = []  # (span, events it stood for; 0 at the end of the file)
    tampered: list[dict[str, Any]] = []
    expected, prev, last_envelope = 1, GENESIS_HASH, None
    open_span: _Span | None = None
    position = 0
    while position < len(content):
        end = content.find(b"\n", position)
        line = content[position : end + 1] if end >= 0 else content[position:]
        offset, position = position, (end + 1 if end >= 0 else len(content))
        if end < 0:  # a final line without its newline
            kind = classify_torn_tail(line, last_envelope)
            line = line + b"\n" if kind in ("complete", "tampered") else line
        envelope = decode_line(line) if line.endswith(b"\n") else None
        if envelope is None or envelope.get("session") != session:
            if open_span is None:
                open_span = _Span(offset, expected, prev)
            open_span.data += content[offset:position]
            continue
        seq = envelope["seq"]
        if open_span is not None:
            if seq < expected:
                raise _edited(session, seq, expected)
            spans.append((open_span, seq - expected))
            if seq > expected:
                kept.append((seq - expected, open_span))
            open_span, expected = None, seq
        if seq != expected:
            raise _edited(session, seq, expected)
        problem = line_problem(line, envelope)
        if problem is not None:
            tampered.append({"seq": seq, "problem": problem})
        kept.append(line)
        expected, prev, last_envelope = seq + 1, envelope.get("hash"), envelope
    if open_span is not None:
        spans.append((open_span, 0))
    tail = kept[-1] if kept else None
    needs_ack = isinstance(tail, bytes) and bool(tampered) and tampered[-1]["seq"] == expected - 1
    report: dict[str, Any] = {
        "session": session,
        "repaired": False,
        "set_aside": [
            {"offset": span.offset, "size": len(span.data), "events": count, "kind": "middle" if count else "tail"}
            for span, count in spans
        ],
        "tampered": tampered,
        "acknowledged": [tampered[-1]] if needs_ack else [],
    }
    if not spans and not needs_ack:
        report["note"] = "nothing to repair" if not tampered else "edited events stay excluded; nothing to repair"
        return report
    if dry_run:
        return report
    report.update(_rewrite(handle, fd, kept, spans, report, expected, actor))
    return report


def _rewrite(
    handle: SessionFile,
    fd: int,
    kept: list[bytes | tuple[int, _Span]],
    spans: list[tuple[_Span, int]],
    report: dict[str, Any],
    next_seq: int,
    actor: str,
) -> dict[str, Any]:
    root, session = handle.root, handle.session
    record_seq = next_seq
    timestamp = utc_timestamp()
    sidecars = []
    for span, _count in spans:
        digest = sha256(bytes(span.data)).hexdigest()
        sidecars.append(os.path.join(REPAIR_DIR_NAME, f"{session}.{span.offset}.{digest[:12]}.bad"))
    ranges = []
    lines: list[bytes] = []
    for index, item in enumerate(kept):
        if isinstance(item, bytes):
            lines.append(item)
            continue
        count, span = item
        following = kept[index + 1]
        last_hash = decode_line(following)["prev_hash"] if isinstance(following, bytes) else None  # type: ignore[index]
        ranges.append(
            {
                "from_seq": span.first_seq,
                "to_seq": span.first_seq + count - 1,
                "prev_hash": span.prev_hash,
                "last_hash": last_hash,
            }
        )
        for offset in range(count):
            seq = span.first_seq + offset
            tombstone = {
                "hash": last_hash if offset == count - 1 else None,
                "prev_hash": span.prev_hash if offset == 0 else None,
                "seq": seq,
                "session": session,
                "timestamp": timestamp,
                "tombstone": {"kind": "damaged", "record_seq": record_seq},
                "type": UNREADABLE_TYPE,
            }
            lines.append(canonical_bytes(tombstone) + b"\n")
    last = decode_line(lines[-1]) if lines else None
    prev = GENESIS_HASH if last is None else last.get("hash")
    payload = {
        "ranges": ranges,
        "set_aside": [
            {**entry, "sha256": sha256(bytes(span.data)).hexdigest(), "sidecar": sidecar}
            for entry, (span, _count), sidecar in zip(report["set_aside"], spans, sidecars, strict=True)
        ],
        "acknowledged": report["acknowledged"],
        "reason": "unreadable bytes were set aside (tombstones keep the place of the events they stood for); "
        "acknowledged events do not verify and stay excluded from every read",
    }
    draft = PreparedDraft(type=REPAIR_TYPE, actor=actor, payload=payload, timestamp=timestamp)
    envelope, record = seal(draft, record_seq, prev, session, json_string(session))
    lines.append(record)
    repair_dir = os.path.join(root, REPAIR_DIR_NAME)
    try:
        os.makedirs(repair_dir, exist_ok=True)
        for (span, _count), sidecar in zip(spans, sidecars, strict=True):
            with open(os.path.join(root, sidecar) + PENDING_SUFFIX, "wb") as sink:
                sink.write(span.data)
                sink.flush()
                os.fsync(sink.fileno())
        _fsync_directory(repair_dir)
        descriptor, temporary = tempfile.mkstemp(prefix=f".repair.{session}.", suffix=".tmp", dir=root)
        try:
            with os.fdopen(descriptor, "wb") as sink:
                sink.write(b"".join(lines))
                sink.flush()
                os.fsync(sink.fileno())
            os.replace(temporary, handle.path)  # the writers' lock is held on the old file: see _locked_writer_fd
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
    except OSError as exc:
        raise storage_error(exc, handle.path) from exc
    _fsync_directory(root)
    for sidecar in sidecars:
        os.replace(os.path.join(root, sidecar) + PENDING_SUFFIX, os.path.join(root, sidecar))
    _fsync_directory(repair_dir)
    handle._tail = None
    return {"repaired": True, "record_seq": record_seq, "record_hash": envelope["hash"], "sidecars": sidecars}


def _settle_pending_sidecars(root: str, session: str, content: bytes) -> None:
    """Sidecars of a repair that was killed: named when the log holds their record, else dropped (the repaired
    file never replaced the log, which still holds those bytes)."""
    folder = os.path.join(root, REPAIR_DIR_NAME)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name.startswith(f"{session}.") and name.endswith(".bad" + PENDING_SUFFIX):
            final = name[: -len(PENDING_SUFFIX)]
            if os.path.join(REPAIR_DIR_NAME, final).encode() in content:
                os.replace(os.path.join(folder, name), os.path.join(folder, final))
            else:
                os.unlink(os.path.join(folder, name))


def _edited(session: str, seq: int, expected: int) -> IntegrityError:
    return IntegrityError(
        f"session {session!r} holds event {seq} where event {expected} belongs: events were removed, duplicated or "
        "reordered (an edit, not unreadable bytes)",
        field="session",
        remediation="Restore the session's log from a backup (`zaxy eventloom export` makes one); repair only sets "
        "unreadable bytes aside.",
        details={"session": session, "seq": expected},
    )
