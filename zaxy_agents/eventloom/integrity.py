"""Read-side verification: an event leaves the engine only when its stored bytes match its hash.

``verify`` checks a whole chain on request; this module checks what is *read*, on every read, so an event
edited behind the log's back is never served under its citation:

* :class:`SessionReader` checks the lines a backend streams for one session. A line that cannot be read at
  its place (not JSON, not an envelope, the wrong seq or session) is structural damage: the rest of the file
  cannot be trusted to be where it should, so reading stops with :class:`IntegrityError` (``zaxy repair``
  fixes it). An event whose bytes do not match its hash is *excluded*: strict readers (``replay``, ``get``,
  ``resolve``) raise, streaming readers (projection, views) skip it and record it in ``problems``.
* :func:`check_cited` re-reads a set of cited events (plus each one's successor, whose ``prev_hash`` must name
  it) in one round trip and says which may be served: what checkout, queries and recovery packets call just
  before a citation leaves the engine.

Erased events and tombstones pass (their content is gone on purpose, see :mod:`.verifier`); readers get them
normalized (:func:`readable`): an empty payload and an ``erased`` marker.
"""

from __future__ import annotations

import json

from zaxy_agents.errors import IntegrityError

from .canonical import line_shape_problem, stored_line_sound

TYPE_CHECKING = False  # keep `typing` off the hook fast path (the SessionStart packet is checked with this module)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

HASH_MISMATCH = "its stored bytes do not match its hash (the event was modified after it was written)"


def repair_hint(session: str) -> str:
    return (
        f"Run `zaxy verify --session-id {session}` to see the damage, then `zaxy repair --session-id {session}` "
        "(it sets unreadable bytes aside in a sidecar file and records that it did; events are never rewritten)."
    )


def line_problem(line: bytes, envelope: dict[str, Any], sha: Any = None) -> str | None:
    """Why a decoded stored line may not be served (its hash does not commit to its bytes), or ``None``.

    ``sha``: the SHA-256 constructor; default hashlib's (~3x faster than the builtin one the hook path uses to
    avoid loading OpenSSL at start-up; it passes :data:`~.canonical.sha256`).
    """
    return None if stored_line_sound(line, envelope, sha or _hashlib_sha256()) else HASH_MISMATCH


def _hashlib_sha256() -> Any:
    from hashlib import sha256

    return sha256


def readable(envelope: dict[str, Any]) -> dict[str, Any]:
    """The envelope as readers use it: erased events and tombstones get an empty payload and ``erased``."""
    if "tombstone" in envelope:
        tombstone = envelope["tombstone"] if isinstance(envelope["tombstone"], dict) else {}
        return {
            "actor": "",
            "erased": {"tombstone": tombstone.get("kind"), "record_seq": tombstone.get("record_seq")},
            "hash": envelope.get("hash") or "",
            "id": "",
            "payload": {},
            "prev_hash": envelope.get("prev_hash") or "",
            "seq": envelope["seq"],
            "session": envelope["session"],
            "timestamp": envelope.get("timestamp") or "",
            "type": envelope.get("type") or "eventloom.tombstone",
        }
    if "erased" in envelope and "payload" not in envelope:
        return {**envelope, "payload": {}}
    return envelope


def decode_line(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    return value if line_shape_problem(value) is None else None


class SessionReader:
    """Checks one session's lines in order from ``from_seq`` (see the module docstring)."""

    __slots__ = ("expected", "problems", "session", "strict")

    def __init__(self, session: str, from_seq: int, *, strict: bool, problems: dict[int, str] | None = None) -> None:
        self.session = session
        self.expected = from_seq
        self.strict = strict
        self.problems = problems if problems is not None else {}

    def decode(self, line: bytes) -> dict[str, Any] | None:
        """The readable envelope of the next line, or ``None`` when that event is excluded (non-strict)."""
        seq = self.expected
        envelope = decode_line(line)
        if envelope is None or envelope.get("seq") != seq or envelope.get("session") != self.session:
            found = "not an event envelope" if envelope is None else f"seq {envelope.get('seq')!r}"
            raise IntegrityError(
                f"session {self.session!r} is damaged at event {seq}: the line there is {found}",
                field="session",
                remediation=repair_hint(self.session),
                details={"session": self.session, "seq": seq},
            )
        self.expected = seq + 1
        problem = line_problem(line, envelope)
        if problem is None:
            return readable(envelope)
        self.problems[seq] = problem
        if self.strict:
            raise IntegrityError(
                f"event {seq} of session {self.session!r} is not served: {problem}",
                field="session",
                remediation=f"Read around it (from_seq {seq + 1}); " + repair_hint(self.session),
                details={"session": self.session, "seq": seq},
            )
        return None


class CitedCheck:
    """The outcome of :func:`check_cited`: which cited events may be served, and why the others may not."""

    def __init__(self) -> None:
        self.envelopes: dict[tuple[str, int], dict[str, Any]] = {}  # readable envelopes of the servable events
        self.problems: dict[tuple[str, int], str] = {}  # integrity problems (warned about)
        self.erased: set[tuple[str, int]] = set()  # erased on purpose (excluded silently)

    def servable(self, session: str, seq: int, digest: str | None = None) -> bool:
        key = (session, seq)
        envelope = self.envelopes.get(key)
        return envelope is not None and (digest is None or envelope["hash"].startswith(digest))

    def warnings(self) -> list[str]:
        return [
            f"integrity_error: session {session} event {seq} excluded: {reason}"
            for (session, seq), reason in sorted(self.problems.items())
        ]


def check_cited(
    lines_at: Callable[[list[tuple[str, int]]], dict[tuple[str, int], bytes]],
    cited: Iterable[tuple[str, int, str]],
    *,
    sha: Any = None,
) -> CitedCheck:
    """Re-read cited ``(session, seq, hash or hash prefix)`` events and their successors in one call.

    An event is servable when its line decodes at its place, its bytes match its hash, that hash is the one
    cited, and the next event (when there is one) chains from it: so a rewritten-and-rehashed event is caught
    even after the derived state was rebuilt from the rewritten log.
    """
    wanted = {(session, seq): digest for session, seq, digest in cited}
    result = CitedCheck()
    if not wanted:
        return result
    keys = sorted({key for session, seq in wanted for key in ((session, seq), (session, seq + 1))})
    found = lines_at(keys)
    decoded: dict[tuple[str, int], dict[str, Any] | None] = {}  # each line decoded once (as cited or successor)

    for (session, seq), digest in wanted.items():
        key = (session, seq)
        line = found.get(key)
        if key in decoded:
            envelope = decoded[key]
        else:
            envelope = decoded[key] = None if line is None else decode_line(line)
        if envelope is None or envelope["seq"] != seq or envelope["session"] != session:
            result.problems[key] = "the cited event cannot be read at its place in the log"
            continue
        problem = line_problem(line, envelope, sha)  # type: ignore[arg-type]
        if problem is None and digest and not str(envelope.get("hash") or "").startswith(digest):
            problem = "the log holds a different event at that seq than the one cited"
        after = found.get((session, seq + 1))
        if problem is None and after is not None:
            following = (session, seq + 1)
            if following in decoded:
                successor = decoded[following]
            else:
                successor = decoded[following] = decode_line(after)
            linked = successor is None or "tombstone" in successor or successor.get("prev_hash") == envelope["hash"]
            if not linked:
                problem = "the next event does not chain from it (the event was rewritten)"
        if problem is not None:
            result.problems[key] = problem
        elif "erased" in envelope or "tombstone" in envelope:
            result.erased.add(key)
        else:
            result.envelopes[key] = envelope
    return result
