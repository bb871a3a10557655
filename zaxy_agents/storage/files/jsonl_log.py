"""The embedded Eventloom backend: one hash-chained JSONL file per session under a folder.

``JsonlEventLog`` validates and redacts drafts, hands them to the per-session :class:`SessionFile` engine,
and returns pydantic :class:`Event` objects with their citations. It implements the
:class:`~zaxy_agents.eventloom.protocol.EventLog` protocol that every backend shares.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import threading
import weakref
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from zaxy_agents.errors import IntegrityError, InvalidRequestError, NotFoundError, ZaxyError
from zaxy_agents.eventloom.chain import check_range as _check_range
from zaxy_agents.eventloom.chain import draft_fields as _draft_fields
from zaxy_agents.eventloom.drafts import prepare_draft
from zaxy_agents.eventloom.integrity import SessionReader
from zaxy_agents.eventloom.models import Event, EventDraft, EventHead, SessionSummary, VerifyReport, event_from_envelope
from zaxy_agents.eventloom.protocol import EventLog, LogCapability
from zaxy_agents.eventloom.validation import (
    DEFAULT_MAX_PAYLOAD_BYTES,
    SESSION_ID_PATTERN,
    validate_durability,
    validate_session_id,
)
from zaxy_agents.eventloom.verifier import ChainVerifier

from .jsonl_file import PreparedDraft, SessionFile
from .jsonl_scrub_journal import pending_sessions
from .jsonl_settle import decode_settled, line_after_writers
from .torn_tail import classify_torn_tail

DEFAULT_GROUP_COMMIT_SECONDS = 0.05
_STAT_AT = os.stat in os.supports_dir_fd  # stat a file by name relative to an open folder (POSIX)


class JsonlEventLog(EventLog):
    """Append-only, hash-chained JSONL logs, one file per session, under ``root``.

    ``durability="fsync"`` (default) makes every append durable before it returns. ``"batch"`` is group
    commit: appends are written immediately (visible to other processes, safe if this process dies) and a
    background flusher fsyncs them every ``group_commit_seconds``; an OS crash can lose at most that window.
    """

    capabilities = frozenset({LogCapability.CHANGE_TOKEN})

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        durability: str = "fsync",
        max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
        group_commit_seconds: float = DEFAULT_GROUP_COMMIT_SECONDS,
    ) -> None:
        validate_durability(durability)
        self.root = Path(root)
        self.durability = durability
        self.max_payload_bytes = max_payload_bytes
        self._files: dict[str, SessionFile] = {}
        # sessions(): each file's summary per file version (inode, size, mtime_ns), as its head is remembered
        self._listed: dict[str, tuple[tuple[int, int, int], SessionSummary]] = {}
        self._files_lock = threading.Lock()
        self._closed = False
        # Events a streaming read excluded because their bytes do not match their hash: {session: {seq: why}}.
        self.integrity_problems: dict[str, dict[int, str]] = {}
        if durability == "batch":
            _start_group_commit(self, group_commit_seconds)
        atexit.register(_close_quietly, weakref.ref(self))
        self._finish_interrupted_erasures()

    # ------------------------------------------------------------------ writing
    def append(
        self,
        session: str,
        type: str,
        payload: dict[str, Any] | None = None,
        *,
        actor: str = "agent",
    ) -> Event:
        """Append one event and return it (with ``.citation``). Raises before writing on bad input."""
        draft = prepare_draft(type, {} if payload is None else payload, actor, self.max_payload_bytes)
        return event_from_envelope(self._file(session).append([draft])[-1])

    def append_many(self, session: str, drafts: Iterable[EventDraft | dict[str, Any]]) -> list[Event]:
        """Append several events with one lock, one write and one fsync. All-or-nothing validation."""
        prepared = []
        for index, draft in enumerate(drafts):
            kind, payload, actor = _draft_fields(draft, index)
            prepared.append(
                prepare_draft(kind, payload, actor, self.max_payload_bytes, field_prefix=f"events[{index}].")
            )
        if not prepared:
            return []
        return [event_from_envelope(envelope) for envelope in self._file(session).append(prepared)]

    def append_prepared(self, session: str, drafts: list[PreparedDraft]) -> list[dict[str, Any]]:
        """Seal and store drafts ``prepare_draft`` already checked; their envelopes (no pydantic)."""
        return self._file(session).append(drafts) if drafts else []

    def sync(self) -> None:
        """Force pending group-commit writes to disk."""
        for handle in list(self._files.values()):
            handle.sync()

    def close(self) -> None:
        """fsync pending writes and release file handles. Safe to call twice."""
        self._closed = True
        with self._files_lock:
            for handle in self._files.values():
                handle.close()
            self._files.clear()

    def __enter__(self) -> JsonlEventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reading
    def replay(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Event]:
        """Stream events ``from_seq..to_seq`` (inclusive) without loading the whole file.

        Every line is checked against its hash as it is read: an event whose bytes do not match raises
        :class:`IntegrityError` naming it (it is never returned), as does a line that is not an event.
        """
        validate_session_id(session)
        _check_range(from_seq, to_seq)
        reader = SessionReader(session, from_seq, strict=True)
        validate = Event.model_validate
        handle = self._file(session)
        for _offset, line in handle.iter_lines(from_seq, to_seq):
            yield validate(decode_settled(handle, reader, line))

    def replay_envelopes(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[dict[str, Any]]:
        """Like :meth:`replay` but yields plain dicts: the fast path for projection, indexes and views.

        An event whose bytes do not match its hash is skipped (recorded in :attr:`integrity_problems`); a
        line that is not an event stops the replay with :class:`IntegrityError`.
        """
        validate_session_id(session)
        _check_range(from_seq, to_seq)
        reader = SessionReader(
            session, from_seq, strict=False, problems=self.integrity_problems.setdefault(session, {})
        )
        handle = self._file(session)
        for _offset, line in handle.iter_lines(from_seq, to_seq):
            envelope = decode_settled(handle, reader, line)
            if envelope is not None:
                yield envelope

    def lines_at(self, keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], bytes]:
        """The stored lines of ``(session, seq)`` keys that exist (one seek each): for read-side checks."""
        by_session: dict[str, list[int]] = {}
        for session, seq in keys:
            by_session.setdefault(session, []).append(seq)
        found: dict[tuple[str, int], bytes] = {}
        files = self._files
        for session, seqs in by_session.items():
            # A session with an open handle skips the stat: its handle answers {} itself if the file is gone. An
            # unknown one is checked first so a missing (or malformed) id opens no handle and raises nothing.
            handle = files.get(session)
            if handle is None:
                if not (self.root / f"{session}.jsonl").exists():
                    continue
                handle = self._file(session)
            for seq, line in handle.lines_at(seqs).items():
                found[(session, seq)] = line
        return found

    def replay_lines(self, session: str, from_seq: int = 1, to_seq: int | None = None) -> Iterator[bytes]:
        """The stored lines byte for byte, newline included (what ``zaxy eventloom export`` writes)."""
        validate_session_id(session)
        _check_range(from_seq, to_seq)
        for _offset, line in self._file(session).iter_lines(from_seq, to_seq):
            yield line

    def import_lines(self, session: str, lines: Iterable[tuple[dict[str, Any], bytes]], after: tuple[int, str]) -> int:
        """Create a session from checked lines (see :mod:`.transfer`); only new sessions can be imported."""
        from .jsonl_import import import_new_session

        validate_session_id(session)
        return import_new_session(self.root, session, lines, after)

    def head(self, session: str) -> EventHead | None:
        """Seq and hash of the last event (O(1): reads the tail only); ``None`` for an empty session."""
        tail = self._file(session).read_tail()
        return None if tail is None else EventHead(session=session, seq=tail[0], hash=tail[1])

    def change_token(self, session: str) -> tuple[int, int] | None:
        """A cheap value that changes whenever the session's file does (one ``stat``; ``None``: no log yet).

        Views that follow a session compare it before each read instead of reading the tail.
        """
        handle = self._files.get(session)
        # A session without a handle is stat'ed by name: opening a handle (locks, an index) only to stat cost a
        # fresh process's first read ~30 us (docs/benchmarks.md, "ZaxyStore open + first get").
        path = handle.path if handle is not None else os.path.join(self.root, f"{validate_session_id(session)}.jsonl")
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            return None
        return (stat.st_ino, stat.st_size)

    def change_tokens(self, prefix: str) -> dict[str, tuple[int, int]]:
        """One directory scan: the ``(inode, size)`` token of every session file whose id starts with ``prefix``."""
        tokens: dict[str, tuple[int, int]] = {}
        try:
            entries = os.scandir(self.root)
        except FileNotFoundError:
            return tokens
        with entries:
            for entry in entries:
                name = entry.name
                if not (name.startswith(prefix) and name.endswith(".jsonl")):
                    continue
                session = name[: -len(".jsonl")]
                if not SESSION_ID_PATTERN.fullmatch(session):
                    continue
                try:
                    stat = entry.stat()
                except FileNotFoundError:
                    continue
                tokens[session] = (stat.st_ino, stat.st_size)
        return tokens

    def last_written(self, session: str) -> tuple[tuple[int, int], int] | None:
        """``(change token, seq)`` as of this process's last append to ``session`` (no I/O).

        When :meth:`change_token` still equals that token, nobody appended since, so a view that applied
        events up to that seq is current without reading anything.
        """
        handle = self._files.get(session)
        return None if handle is None else handle.last_written()

    def has_session(self, session: str) -> bool:
        validate_session_id(session)
        return (self.root / f"{session}.jsonl").exists()

    def sessions(self) -> list[SessionSummary]:
        """Every session in the folder with its event count (from the tail, not a scan).

        Each file is stat'ed by name relative to the open folder (no path joined per session), one at a time: a
        ``DirEntry`` keeps the stat result it was asked for, and the 1,000 entries of a 1,000-session memory held
        1,000 of them (objects the garbage collector counts) alive at once, one young collection in every
        whole-memory checkout; ten of those bring a full one (docs/benchmarks.md, "the garbage collector's
        share")."""
        summaries: list[SessionSummary] = []
        try:  # names sorted as strings (what sorting the paths of one folder gives, without pathlib's cost)
            with os.scandir(self.root) as scan:
                names = sorted(entry.name for entry in scan if entry.name.endswith(".jsonl"))
            folder = os.open(self.root, os.O_RDONLY) if _STAT_AT else None
        except (FileNotFoundError, NotADirectoryError):
            return summaries
        try:
            self._list(names, folder, summaries)
        finally:
            if folder is not None:
                os.close(folder)
        return summaries

    def _list(self, names: list[str], folder: int | None, summaries: list[SessionSummary]) -> None:
        listed = self._listed
        for name in names:
            session = name[: -len(".jsonl")]
            try:
                stat = os.stat(name, dir_fd=folder) if folder is not None else os.stat(os.path.join(self.root, name))
            except FileNotFoundError:
                continue
            version = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
            known = listed.get(session)
            if known is not None and known[0] == version:  # this file version was listed before: same summary
                summaries.append(known[1])
                continue
            try:
                validate_session_id(session)
            except InvalidRequestError:
                continue
            damaged = None
            try:
                head = self._file(session).read_tail(stat)
            except IntegrityError as exc:  # one damaged file never hides the others
                head, damaged = None, exc.message
            summary = SessionSummary.model_construct(  # our own checked values (validating them cost the most)
                session=session,
                event_count=head[0] if head else 0,
                head_hash=head[1] if head else None,
                size_bytes=stat.st_size,
                modified=_modified(stat.st_mtime),
                damaged=damaged,
            )
            if damaged is None:
                listed[session] = (version, summary)
            summaries.append(summary)

    def verify(self, session: str) -> VerifyReport:
        """Recompute the whole chain; report the first broken seq and why (tampering, gaps, reordering).

        A break is checked once more after any writer lets go of the lock: an in-place erase may have been
        overwriting that line while it was read (:func:`.jsonl_settle.line_after_writers`)."""
        report = self._verify_once(session)
        if report.ok or report.first_broken_seq is None:
            return report
        handle = self._file(session)
        line = handle.lines_at([report.first_broken_seq]).get(report.first_broken_seq, b"")
        if line_after_writers(handle, report.first_broken_seq, line) is None:
            return report
        return self._verify_once(session)

    def _verify_once(self, session: str) -> VerifyReport:
        validate_session_id(session)
        path = self.root / f"{session}.jsonl"
        if not path.exists():
            raise NotFoundError(
                f"no log for session {session!r} in {self.root}",
                field="session",
                remediation="List sessions with `zaxy sessions`.",
            )
        verifier = ChainVerifier(session)
        torn = b""
        with open(path, "rb", buffering=1 << 20) as handle:
            for line in handle:
                if not line.endswith(b"\n"):
                    torn = line
                    break
                if not verifier.feed(line):
                    return _broken(verifier)
        warnings: list[str] = []
        torn_bytes = 0
        if torn:
            kind = classify_torn_tail(torn, verifier.last_envelope)
            if kind in ("terminator_altered", "tampered"):
                verifier.problem, verifier.broken_seq = _TORN_TAMPERING[kind], verifier.count + 1
                return _broken(verifier)
            if kind == "complete":
                verifier.feed(torn + b"\n")
                warnings.append("final event lacks only its newline (completed on the next append)")
            else:
                torn_bytes = len(torn)
                warnings.append(
                    f"torn final line of {len(torn)} bytes, never acknowledged (moved aside on the next append)"
                )
        hidden = _unfinished_batch(verifier)
        if not verifier.finish():
            return _broken(verifier)
        report = VerifyReport(
            session=session,
            ok=True,
            event_count=verifier.count - hidden,
            head_hash=verifier.head_hash if not hidden else None,
            torn_tail_bytes=torn_bytes,
            warnings=warnings,
        )
        if hidden:
            report.warnings.append(
                f"the last {hidden} events are the start of a batch a writer did not finish (never acknowledged; "
                "moved aside on the next append)"
            )
        return report

    def repair(self, session: str, *, actor: str = "zaxy", dry_run: bool = False) -> dict[str, Any]:
        """Set a session's unreadable bytes aside and let a blocked log continue (see :mod:`.jsonl_repair`)."""
        from .jsonl_repair import repair_session

        validate_session_id(session)
        if not (self.root / f"{session}.jsonl").exists():
            raise NotFoundError(
                f"no log for session {session!r} in {self.root}",
                field="session",
                remediation="List sessions with `zaxy sessions`.",
            )
        report = repair_session(self._file(session), actor=actor, dry_run=dry_run)
        self.integrity_problems.pop(session, None)
        return report

    def scrub(self, session: str, seqs: list[int], record_seq: int, *, whole_session: bool = False) -> int:
        """Remove the content of ``seqs`` (recorded by the erasure event at ``record_seq``) from the session file;
        ``whole_session`` also deletes its torn-tail and repair sidecars. Returns how many events changed."""
        from .jsonl_erase import remove_sidecars, scrub_session

        validate_session_id(session)
        changed = scrub_session(self._file(session), set(seqs), record_seq)
        if whole_session:
            remove_sidecars(str(self.root), session)
        return changed

    def session_names(self) -> list[str]:
        """Every session with a log file, readable or not (``sessions()`` reads their tails)."""
        if not self.root.is_dir():
            return []
        names = []
        for path in sorted(self.root.glob("*.jsonl")):
            try:
                names.append(validate_session_id(path.name[: -len(".jsonl")]))
            except InvalidRequestError:
                continue
        return names

    # ------------------------------------------------------------------ internals
    def _finish_interrupted_erasures(self) -> None:
        """Lines an in-place erase was overwriting when its process died are finished from its journal before
        anything reads them (:mod:`.jsonl_scrub_journal`); one failed ``listdir`` when there is none. Imported with
        the module, not here: every log open runs this, and an import inside it was compiled inside a store's timed
        open where bytecode is not written (+3.2 ms on the 2-core VM, `langgraph_open_bench.py`)."""
        for session in pending_sessions(str(self.root)):
            try:
                validate_session_id(session)
            except InvalidRequestError:
                continue
            from .jsonl_erase import finish_pending

            with contextlib.suppress(OSError, ZaxyError):  # a read-only folder: readers report the damage
                finish_pending(self._file(session))

    def _file(self, session: str) -> SessionFile:
        handle = self._files.get(session)
        if handle is None:
            validate_session_id(session)
            with self._files_lock:
                handle = self._files.setdefault(session, SessionFile(self.root, session, durability=self.durability))
        return handle


@functools.lru_cache(maxsize=8192)
def _modified(mtime: float) -> str:
    """A file's modification time as listed (formatting it was a tenth of listing a thousand sessions)."""
    return datetime.fromtimestamp(mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _broken(verifier: ChainVerifier) -> VerifyReport:
    count = (verifier.broken_seq or 1) - 1
    return VerifyReport(
        session=verifier.session,
        ok=False,
        event_count=min(count, verifier.count),
        first_broken_seq=verifier.broken_seq,
        reason=verifier.problem,
    )


def _unfinished_batch(verifier: ChainVerifier) -> int:
    """How many trailing events belong to a batch that is not whole (0 when the last batch is whole)."""
    marker = (verifier.last_envelope or {}).get("batch")
    if isinstance(marker, list) and len(marker) == 2 and marker[0] < marker[1]:
        return int(marker[0])
    return 0


_TORN_TAMPERING = {
    "terminator_altered": "the final event's line terminator was altered (a crash never does this)",
    "tampered": "the final line is a complete event that does not match its hash and lacks its newline: it was "
    "modified (a crash only ever leaves part of a line)",
}


def _close_quietly(ref: weakref.ReferenceType[JsonlEventLog]) -> None:
    log = ref()
    if log is not None:
        with contextlib.suppress(OSError):
            log.close()


def _start_group_commit(log: JsonlEventLog, interval: float) -> None:
    """A daemon thread that fsyncs dirty session files every ``interval`` seconds (batch durability)."""
    ref = weakref.ref(log)

    def run() -> None:
        stop = threading.Event()
        while not stop.wait(interval):
            target = ref()
            if target is None or target._closed:
                return
            with contextlib.suppress(OSError):
                target.sync()
            del target

    threading.Thread(target=run, name="eventloom-group-commit", daemon=True).start()
