"""Moving logs between backends: export any backend's sessions to JSONL files, import JSONL files into any
backend. Lossless by construction: both directions move the stored canonical lines byte for byte, and both
check the whole chain as they stream (an export of a broken log, or an import of a tampered file, is refused
and leaves nothing behind), so an exported file verifies with the embedded verifier or the stand-alone one
in docs/eventloom.md, and an imported log verifies in its new backend.

Import is incremental and idempotent: events the target already holds (same seq, same hash) are skipped, the
rest are written in one go after the target's head. PostgreSQL can continue any session that way; the
embedded backend imports only into a session it does not have yet (or already holds entirely).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel, Field

from zaxy_agents.errors import ConflictError, IntegrityError, InvalidRequestError, NotFoundError
from zaxy_agents.eventloom.canonical import GENESIS_HASH
from zaxy_agents.eventloom.protocol import EventLog, SealedLine
from zaxy_agents.eventloom.validation import validate_session_id
from zaxy_agents.eventloom.verifier import ChainVerifier

from .files.torn_tail import classify_torn_tail


class TransferResult(BaseModel):
    """One session moved: how many events, which bytes (SHA-256 of the JSONL lines), and what was skipped."""

    session: str
    path: str
    events: int
    imported: int = 0
    skipped: int = 0
    size_bytes: int = 0
    sha256: str
    head_hash: str | None = None
    warnings: list[str] = Field(default_factory=list)
    error: str | None = None  # set when the session was left out (it does not verify: see `zaxy repair`)


def export_session(
    log: EventLog, session: str, path: str | os.PathLike[str], *, overwrite: bool = False
) -> TransferResult:
    """Write ``session`` to ``path`` as a JSONL log (atomically: a temporary file renamed into place)."""
    validate_session_id(session)
    if log.head(session) is None:
        raise NotFoundError(f"no session {session!r}", field="session", remediation="List sessions: zaxy sessions")
    target = Path(path)
    if target.exists() and not overwrite:
        raise ConflictError(
            f"{target} already exists", field="output", remediation="Choose another path or pass --overwrite."
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    verifier = ChainVerifier(session)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as sink:
            for line in log.replay_lines(session):
                if not verifier.feed(line):
                    break
                sink.write(line)
                digest.update(line)
                size += len(line)
            if not verifier.finish():
                raise IntegrityError(
                    f"session {session!r} is broken at seq {verifier.broken_seq}: {verifier.problem}; nothing was "
                    "exported",
                    field="session",
                    remediation=f"Run `zaxy verify --session-id {session}`; `zaxy repair` sets unreadable bytes "
                    "aside, tampered events need the log restored from a backup.",
                )
            sink.flush()
            os.fsync(sink.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return TransferResult(
        session=session,
        path=str(target),
        events=verifier.count,
        size_bytes=size,
        sha256=digest.hexdigest(),
        head_hash=verifier.head_hash,
    )


def export_sessions(
    log: EventLog, directory: str | os.PathLike[str], sessions: Iterable[str] | None = None, *, overwrite: bool = False
) -> list[TransferResult]:
    """Export sessions (default: all) to ``<directory>/<session>.jsonl``: a folder the embedded backend opens.

    Exporting every session, a session that does not verify is left out (its result carries ``error``) and the
    others are exported: one damaged log never stops a backup of the rest. Named sessions must all verify.
    """
    if sessions is not None:
        return [export_session(log, name, Path(directory) / f"{name}.jsonl", overwrite=overwrite) for name in sessions]
    results = []
    for summary in log.sessions():
        target = Path(directory) / f"{summary.session}.jsonl"
        try:
            results.append(export_session(log, summary.session, target, overwrite=overwrite))
        except IntegrityError as exc:
            results.append(
                TransferResult(session=summary.session, path=str(target), events=0, sha256="", error=exc.message)
            )
    return results


def import_file(log: EventLog, path: str | os.PathLike[str], *, session: str | None = None) -> TransferResult:
    """Import one JSONL log file; refuses (writing nothing) a file that does not verify from seq 1."""
    source = Path(path)
    if not source.is_file():
        raise NotFoundError(f"no file {source}", field="path", remediation="Pass a .jsonl log file or a folder.")
    with open(source, "rb") as handle:
        reader = _CheckedLines(handle, source, session)
        first = reader.peek()
        if first is None:
            raise InvalidRequestError(f"{source} holds no events", field="path", remediation="Pass a non-empty log.")
        name = first[0]["session"]
        head = log.head(name)
        skipped = 0
        if head is not None:
            existing = log.replay_envelopes(name, 1, head.seq)
            while reader.peek() is not None and reader.peek()[0]["seq"] <= head.seq:  # type: ignore[index]
                envelope, _line = next(reader)
                stored = next(existing, None)
                if stored is None or stored["hash"] != envelope["hash"]:
                    raise ConflictError(
                        f"session {name!r} already differs from {source.name} at seq {envelope['seq']}",
                        field="path",
                        remediation="Import into an empty deployment, or export the target first and compare.",
                    )
                skipped += 1
        imported = log.import_lines(name, reader, (head.seq, head.hash) if head else (0, GENESIS_HASH))
        reader.finish()
    return TransferResult(
        session=name,
        path=str(source),
        events=reader.count,
        imported=imported,
        skipped=skipped,
        size_bytes=reader.size,
        sha256=reader.digest.hexdigest(),
        head_hash=reader.prev if reader.count else None,
        warnings=reader.warnings,
    )


def import_paths(log: EventLog, paths: Iterable[str | os.PathLike[str]]) -> list[TransferResult]:
    """Import files and folders (every ``*.jsonl`` directly inside a folder, in name order)."""
    results = []
    for path in paths:
        item = Path(path)
        try:
            files = sorted(item.glob("*.jsonl")) if item.is_dir() else [item]
            item.stat()
        except OSError as exc:  # missing, a name too long, unreadable: refused before anything is imported
            raise NotFoundError(
                f"cannot read {str(item)[:200]}: {exc.strerror or exc}",
                field="path",
                remediation="Pass existing .jsonl log files, or folders of them.",
            ) from None
        if item.is_dir() and not files:
            raise NotFoundError(
                f"{item} holds no <session>.jsonl logs",
                field="paths",
                remediation="Pass JSONL log files, or a folder holding them (e.g. an .eventloom folder).",
            )
        results.extend(import_file(log, file) for file in files)
    return results


class _CheckedLines:
    """Stream a JSONL file's events, checking the chain from seq 1 as they are read (one line of look-ahead).

    A final line without its newline is handled as the embedded log does: a complete, chained event is kept
    (its newline restored), a torn write is skipped with a warning, an altered terminator is refused.
    """

    def __init__(self, handle: BinaryIO, source: Path, session: str | None) -> None:
        self.handle, self.source, self.expected_session = handle, source, session
        self.count, self.size, self.prev = 0, 0, GENESIS_HASH
        self.digest = hashlib.sha256()
        self.warnings: list[str] = []
        self._previous: dict[str, Any] | None = None
        self._ahead: SealedLine | None = None
        self._done = False
        self._session: str | None = None
        self._verifier: ChainVerifier | None = None

    def peek(self) -> SealedLine | None:
        if self._ahead is None and not self._done:
            self._ahead = self._read()
        return self._ahead

    def __iter__(self) -> Iterator[SealedLine]:
        return self

    def __next__(self) -> SealedLine:
        item = self.peek()
        if item is None:
            raise StopIteration
        self._ahead = None
        return item

    def finish(self) -> None:
        """Raise if the backend stopped early (it must consume every line)."""
        if self.peek() is not None:
            raise IntegrityError(f"{self.source}: not every event was imported", remediation="Retry the import.")

    def _read(self) -> SealedLine | None:
        line = self.handle.readline()
        if not line:
            return self._end()
        if not line.endswith(b"\n"):
            kind = classify_torn_tail(line, self._previous)
            if kind in ("terminator_altered", "tampered"):
                self._refuse(self.count + 1, "the final event was modified (not torn by a crash)")
            if kind == "partial":
                self.warnings.append(f"skipped a torn final line of {len(line)} bytes (never acknowledged)")
                return self._end()
            line += b"\n"
        if self._verifier is None:
            self._verifier = ChainVerifier(self.expected_session or _session_of(line))
        if not self._verifier.feed(line):
            self._refuse(self._verifier.broken_seq or self.count + 1, self._verifier.problem or "not an event")
        envelope = self._verifier.last_envelope
        assert envelope is not None
        if self._session is None:
            self._session = validate_session_id(envelope["session"], field="path")
        self.count += 1
        self.size += len(line)
        self.digest.update(line)
        self.prev = self._verifier.prev or ""
        self._previous = envelope
        return envelope, line

    def _end(self) -> None:
        """At the end of the file: what only a later record could vouch for must be settled (before the backend
        commits anything, since the backend is still consuming this iterator)."""
        self._done = True
        if self._verifier is not None and not self._verifier.finish():
            self._refuse(self._verifier.broken_seq or self.count, self._verifier.problem or "broken")
        return None

    def _refuse(self, seq: int, problem: str) -> None:
        raise IntegrityError(
            f"{self.source} does not verify at seq {seq}: {problem}; nothing was imported",
            field="path",
            remediation="Import only logs that pass `zaxy verify`; restore the file from a backup.",
        )


def _session_of(line: bytes) -> str:
    import json

    try:
        value = json.loads(line)
        return str(value["session"])
    except (ValueError, KeyError, TypeError):
        return ""
