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
import sys

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
        marker = envelope["erased"]
        if isinstance(marker, dict) and "pad" in marker:  # spaces an in-place erase kept the line's length with
            return {**envelope, "payload": {}, "erased": {key: value for key, value in marker.items() if key != "pad"}}
        return {**envelope, "payload": {}}
    return envelope


def loads(line: bytes) -> Any:
    """``json.loads(line)``, by pydantic-core's parser (~5x faster on a log line) when it accepts the line: on every
    line it accepts it gives the same value (duplicate keys: the last; NaN / Infinity / 1e400; big integers;
    tests/eventloom/test_line_loads.py); what it refuses (a lone surrogate escape, a byte-order mark, anything
    malformed) goes to ``json.loads``, which answers or raises as it always did."""
    global _from_json
    if _from_json is None:  # never imported here: the hook fast path checks its packet without pydantic loaded
        core = sys.modules.get("pydantic_core")
        if core is None:
            return json.loads(line)
        _from_json = core.from_json
    try:
        return _from_json(line)
    except ValueError:
        return json.loads(line)


_from_json: Any = None


def decode_line(line: bytes) -> dict[str, Any] | None:
    try:
        value = loads(line)  # (projection's replay and rebuilds decode every line here: pydantic-core's parser)
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
    even after the derived state was rebuilt from the rewritten log. (One check on its own: a call that checks
    several sets of citations, or reads lines before checking them, shares a :class:`CallReads`.)
    """
    return CallReads(lines_at, sha=sha).check(cited)


class CallReads:
    """The log lines ONE call (a checkout, a query) reads, each read, decoded and verified at most once.

    A checkout reads the returned hits' lines to give them their text, then checks every citation of its packet,
    then a query's response reads the hits' entities' texts from the same lines: each consumer that gets this
    object from the call hands its keys to it, and a line already read (or verified) in this call is not read
    (or hashed) again. It lives as long as the call that made it and is passed explicitly: never kept across
    calls (a line must be verified by the call that serves it, so a line edited between two calls is caught by
    the second).
    """

    __slots__ = ("_envelopes", "_extracted", "_lines_at", "_parsed", "_sha", "_verified", "lines")

    def __init__(
        self, lines_at: Callable[[list[tuple[str, int]]], dict[tuple[str, int], bytes]], *, sha: Any = None
    ) -> None:
        self._lines_at = lines_at
        self._sha = sha
        self.lines: dict[tuple[str, int], bytes | None] = {}  # every line read in this call (None: not in the log)
        self._parsed: dict[tuple[str, int], Any] = {}  # json of a read line (None: not JSON)
        self._envelopes: dict[tuple[str, int], dict[str, Any] | None] = {}  # shape-checked envelopes (_envelope)
        self._extracted: dict[tuple[tuple[str, int], Any], Any] = {}  # (key, extractor) -> its extraction
        # key -> the line-level verdict of _verify (place, hash, chain), the cited digest apart
        self._verified: dict[tuple[str, int], tuple[dict[str, Any] | None, str | None, str | None]] = {}

    def lines_at(self, keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], bytes]:
        """The stored lines of ``keys`` (the log's ``lines_at``), reading only those this call has not read."""
        lines = self.lines
        wanted = list(dict.fromkeys(keys))
        self._read(wanted)
        return {key: line for key in wanted if (line := lines[key]) is not None}

    def _read(self, keys: list[tuple[str, int]]) -> None:
        lines = self.lines
        missing = [key for key in keys if key not in lines]
        if missing:
            found = self._lines_at(missing)
            for key in missing:
                lines[key] = found.get(key)

    def parsed(self, key: tuple[str, int]) -> Any:
        """The JSON value of a line read in this call (``None``: absent or not JSON); decoded once."""
        parsed = self._parsed
        if key in parsed:
            return parsed[key]
        line = self.lines.get(key)
        value = None
        if line is not None:
            try:
                value = loads(line)
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                value = None
        parsed[key] = value
        return value

    def extraction(self, key: tuple[str, int], extract: Callable[[dict[str, Any]], Any]) -> Any:
        """``extract`` run once per call on the decoded line of ``key`` (the hit's searchable text and its
        entities' summaries come from one extraction); ``None`` when the line is not a JSON object or the extractor
        refuses it (KeyError, TypeError, ValueError). Callers verify the line (:meth:`check`) before serving
        anything derived from it."""
        memo = (key, extract)
        if memo in self._extracted:
            return self._extracted[memo]
        envelope = self.parsed(key)
        extraction = None
        if isinstance(envelope, dict):
            try:
                extraction = extract(envelope)
            except (KeyError, TypeError, ValueError):
                extraction = None
        self._extracted[memo] = extraction
        return extraction

    def _envelope(self, key: tuple[str, int]) -> dict[str, Any] | None:
        """The line of ``key`` decoded as an event envelope (``None``: not one), shape-checked once per call."""
        envelopes = self._envelopes
        if key in envelopes:
            return envelopes[key]
        value = self.parsed(key)
        envelope = envelopes[key] = value if value is not None and line_shape_problem(value) is None else None
        return envelope

    def check(self, cited: Iterable[tuple[str, int, str]]) -> CitedCheck:
        """:func:`check_cited` of ``cited``, each event's line read and verified once per call."""
        wanted = {(session, seq): digest for session, seq, digest in cited}
        result = CitedCheck()
        if not wanted:
            return result
        verified = self._verified
        unverified = [key for key in wanted if key not in verified]
        if unverified:
            self._read(sorted({k for session, seq in unverified for k in ((session, seq), (session, seq + 1))}))
            for key in unverified:
                verified[key] = self._verify(key)
        for key, digest in wanted.items():
            envelope, problem, unlinked = verified[key]
            if problem is None and digest and not str(envelope.get("hash") or "").startswith(digest):  # type: ignore[union-attr]
                problem = "the log holds a different event at that seq than the one cited"
            problem = problem or unlinked
            if problem is not None:
                result.problems[key] = problem
            elif "erased" in envelope or "tombstone" in envelope:  # type: ignore[operator]
                result.erased.add(key)
            else:
                result.envelopes[key] = envelope  # type: ignore[assignment]
        return result

    def _verify(self, key: tuple[str, int]) -> tuple[dict[str, Any] | None, str | None, str | None]:
        """The line-level verdict on one read event, the cited digest apart: ``(envelope, problem, unlinked)``, the
        problem when it is not at its place or its bytes do not match its hash, ``unlinked`` when its successor
        (if any) does not chain from it."""
        session, seq = key
        envelope = self._envelope(key)
        if envelope is None or envelope["seq"] != seq or envelope["session"] != session:
            return None, "the cited event cannot be read at its place in the log", None
        problem = line_problem(self.lines[key], envelope, self._sha)  # type: ignore[arg-type]
        following = (session, seq + 1)
        unlinked = None
        if problem is None and self.lines.get(following) is not None:
            successor = self._envelope(following)
            if not (successor is None or "tombstone" in successor or successor.get("prev_hash") == envelope["hash"]):
                unlinked = "the next event does not chain from it (the event was rewritten)"
        return envelope, problem, unlinked
