"""The chain verifier: one pass over a session's stored lines, the same on every backend and in exports/imports.

Besides sealed events (hash specs 1 and 2, see :mod:`.canonical`) a log may hold two kinds of lines whose
content is gone on purpose, and the verifier accepts them only when the log itself says why:

* an **erased** event (spec 2): payload, salt and security removed, ``content_digest`` kept, so its hash still
  recomputes; it must name (``erased.record_seq``) a later ``eventloom.erased`` record covering its seq;
* a **tombstone** (an erased spec-1 event, whose hash covers the payload itself, or bytes ``zaxy repair`` could
  not read): no hash can be recomputed, so each run of consecutive tombstones must be vouched for by a later
  ``eventloom.erased`` / ``eventloom.repaired`` record listing the run with the hash before it (``prev_hash``)
  and the hash the line after it chains from (``last_hash``).

Records come after what they cover, so those checks are settled when the record is read (or at the end).
Stdlib only.
"""

from __future__ import annotations

import json

from .canonical import GENESIS_HASH, encode_line, event_hash, line_shape_problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ERASURE_TYPE = "eventloom.erased"
_UNKNOWN_BATCH = (-1, -1)
REPAIR_TYPE = "eventloom.repaired"
VOUCHING_TYPES = (ERASURE_TYPE, REPAIR_TYPE)


class ChainVerifier:
    """Feed a session's lines in order; the first problem stops it (``problem``, ``broken_seq``)."""

    def __init__(self, session: str) -> None:
        self.session = session
        self.count = 0  # lines accepted so far
        self.prev = GENESIS_HASH  # hash the next line must chain from (None: unknown, inside a damaged run)
        self.problem: str | None = None
        self.broken_seq: int | None = None
        self.last_envelope: dict[str, Any] | None = None
        self._run: list[Any] | None = None  # [from, to, prev_hash, record_seq] of the tombstone run being read
        self._runs: dict[tuple[int, int], tuple[str, str | None]] = {}  # unvouched runs -> (prev, last)
        self._erased: dict[int, int] = {}  # erased seq -> record seq it names (until that record is read)
        self._batch: tuple[int, int] | None = None  # (position, size) of an unfinished multi-event write

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def head_hash(self) -> str | None:
        return None if self.count == 0 else self.prev

    def feed(self, line: bytes) -> bool:
        """Check the next stored line (newline included); False (and ``problem`` set) when it breaks the chain."""
        if self.problem is not None:
            return False
        seq = self.count + 1
        problem, envelope = _decode(line, seq, self.session)
        if problem is None and envelope is not None:
            problem = self._accept(envelope, line, seq)
        if problem is not None:
            self.problem, self.broken_seq = problem, seq
            return False
        self.count = seq
        self.last_envelope = envelope
        return True

    def finish(self) -> bool:
        """Settle what only a later record could vouch for; False when something stays unaccounted for."""
        if self.problem is not None:
            return False
        self._close_run(None)
        if self._runs:
            first = min(self._runs)
            return self._fail(first[0], f"events {first[0]}-{first[1]} are tombstones no record accounts for")
        if self._erased:
            seq = min(self._erased)
            return self._fail(seq, f"event {seq} was erased but no erasure record names it")
        return True

    # ------------------------------------------------------------------ internals
    def _accept(self, envelope: dict[str, Any], line: bytes, seq: int) -> str | None:
        if "tombstone" in envelope:
            return self._accept_tombstone(envelope, line, seq)
        if envelope["prev_hash"] != self._expected_prev(envelope["prev_hash"]):
            return "prev_hash does not match the previous event's hash (chain broken)"
        try:
            if event_hash(envelope) != envelope["hash"]:
                return "hash does not match the event content (content was modified)"
            if encode_line(envelope) != line:
                return "line bytes are not the canonical encoding (the stored text was modified)"
        except (TypeError, ValueError) as exc:
            return f"line cannot be canonically encoded: {exc}"
        problem = self._batch_problem(envelope.get("batch"))
        if problem is not None:
            return problem
        if "erased" in envelope:
            record = envelope["erased"].get("record_seq") if isinstance(envelope["erased"], dict) else None
            if not isinstance(record, int) or record <= seq:
                return "an erased event must name the later erasure record that removed its content"
            self._erased[seq] = record
        if envelope.get("type") in VOUCHING_TYPES and "erased" not in envelope:
            problem = self._settle(envelope, seq)
            if problem is not None:
                return problem
        self.prev = envelope["hash"]
        return None

    def _batch_problem(self, marker: Any) -> str | None:
        """Events of one write carry ``[1, n]`` .. ``[n, n]`` in order; nothing else may come in between."""
        open_batch, self._batch = self._batch, None
        if open_batch == _UNKNOWN_BATCH:  # after tombstones: the write a marker belongs to is not known
            valid = isinstance(marker, list) and len(marker) == 2 and all(type(n) is int for n in marker)
            open_batch = (marker[0] - 1, marker[1]) if valid else None
            if open_batch is not None and open_batch[0] == 0:
                open_batch = None
        if marker is None:
            if open_batch is not None:
                return f"a batch of {open_batch[1]} events ends after {open_batch[0]} (events are missing)"
            return None
        if not (isinstance(marker, list) and len(marker) == 2 and all(type(n) is int for n in marker)):
            return "the batch marker is not [position, size]"
        position, size = marker
        expected = 1 if open_batch is None else open_batch[0] + 1
        if position != expected or not 1 <= position <= size or (open_batch and open_batch[1] != size):
            return f"batch marker {marker} does not continue the write it belongs to"
        self._batch = (position, size) if position < size else None
        return None

    def _expected_prev(self, actual: str) -> str | None:
        """The prev_hash this line must carry; closes a tombstone run (whose last hash may be unknown: then the
        line's own prev_hash is what the vouching record must list as the run's ``last_hash``)."""
        if self._run is None:
            return self.prev
        expected = self.prev if self.prev is not None else actual
        self._close_run(expected)
        return expected

    def _accept_tombstone(self, envelope: dict[str, Any], line: bytes, seq: int) -> str | None:
        self._batch = _UNKNOWN_BATCH  # what stood here is unknown: the next marker may continue any batch
        if encode_line(envelope) != line:
            return "line bytes are not the canonical encoding (the stored text was modified)"
        known_prev, known_hash = envelope.get("prev_hash"), envelope.get("hash")
        tombstone = envelope["tombstone"]
        record = tombstone.get("record_seq") if isinstance(tombstone, dict) else None
        if self._run is not None and self._run[3] != record:  # the next run, vouched for by another record
            self._close_run(self.prev if self.prev is not None else known_prev)
            self.prev = self.prev if self.prev is not None else known_prev
        if self._run is None:
            if known_prev is not None and self.prev is not None and known_prev != self.prev:
                return "prev_hash does not match the previous event's hash (chain broken)"
            self._run = [seq, seq, self.prev, record]
        elif known_prev is not None and self.prev is not None and known_prev != self.prev:
            return "prev_hash does not match the previous tombstone's hash (chain broken)"
        self._run[1] = seq
        self.prev = known_hash  # None when unknown (a damaged run): the next line's prev_hash closes the run
        return None

    def _close_run(self, next_prev: str | None) -> None:
        if self._run is None:
            return
        first, last, before, _record = self._run
        self._runs[(first, last)] = (before, next_prev if next_prev is not None else self.prev)
        self._run = None

    def _settle(self, record: dict[str, Any], seq: int) -> str | None:
        """A record vouches for the tombstone runs and erased events it lists (never for later seqs)."""
        payload = record.get("payload") or {}
        ranges = payload.get("ranges") if isinstance(payload, dict) else None
        for item in ranges if isinstance(ranges, list) else []:
            if not isinstance(item, dict):
                continue
            first, last = item.get("from_seq"), item.get("to_seq")
            if not (isinstance(first, int) and isinstance(last, int) and 1 <= first <= last < seq):
                continue
            for run, (before, after) in list(self._runs.items()):
                if first <= run[0] and run[1] <= last:
                    if item.get("prev_hash") != before or (after is not None and item.get("last_hash") != after):
                        return f"record {seq} lists events {first}-{last} with hashes the chain does not have"
                    del self._runs[run]
            for erased, named in list(self._erased.items()):
                if first <= erased <= last and named == seq and record.get("type") == ERASURE_TYPE:
                    del self._erased[erased]
        return None

    def _fail(self, seq: int, problem: str) -> bool:
        self.problem, self.broken_seq = problem, seq
        return False


def _decode(line: bytes, seq: int, session: str) -> tuple[str | None, dict[str, Any] | None]:
    try:
        envelope = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        return f"line is not valid JSON: {exc}", None
    problem = line_shape_problem(envelope)
    if problem is not None:
        return problem, envelope if isinstance(envelope, dict) else None
    if envelope["seq"] != seq:
        return f"seq is {envelope['seq']!r}, expected {seq} (missing, duplicated or reordered event)", envelope
    if envelope["session"] != session:
        return f"session field is {envelope['session']!r}, expected {session!r}", envelope
    return None, envelope
