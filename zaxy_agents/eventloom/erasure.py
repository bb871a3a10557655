"""Erasure in an append-only, hash-chained log: the content goes, the chain still verifies, the act is recorded.

How an event's content is removed depends on the hash spec it was sealed with (see :mod:`.canonical`):

* **spec 2** (every event written since erasure exists): ``payload``, ``salt`` and ``security`` are removed and
  ``content_digest`` is kept; the event's hash still recomputes from the digest, and without the 128-bit salt the
  digest cannot be used to test guesses of the content. The line keeps ``erased: {"record_seq": R}``.
* **spec 1** (events written before): the hash covers the payload itself, so the line becomes a *tombstone*
  (seq, hash, prev_hash, type, timestamp) and its ``id`` is dropped too: the hash, still visible as the next
  event's ``prev_hash``, can then not be brute-forced from a guessed payload (the 128-bit id is unknown). The
  erasure record vouches for each tombstone run with the hashes around it (:mod:`.verifier`).

The record is an ``eventloom.erased`` event appended to the same session *before* the lines are scrubbed:
``{"ranges": [{"from_seq", "to_seq", "prev_hash", "last_hash", "spec"}], "event_count", "reason"?}`` plus the
record's own actor (who) and timestamp (when) -- never any content. A crash between the two leaves a record
whose ranges still hold content; ``zaxy repair`` (and the next erase) finish it. Stdlib only.
"""

from __future__ import annotations

from .canonical import GENESIS_HASH, canonical_bytes, content_digest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ERASURE_TYPE = "eventloom.erased"
RESERVED_TYPES = frozenset({"eventloom.erased", "eventloom.repaired", "eventloom.torn_tail_recovered"})
MAX_REASON_CHARS = 500
_V2_ERASED_KEEP = ("actor", "batch", "hash", "id", "prev_hash", "seq", "session", "spec", "timestamp", "type")


def is_erased(envelope: dict[str, Any]) -> bool:
    return "erased" in envelope or "tombstone" in envelope


def erased_line(envelope: dict[str, Any], record_seq: int) -> bytes:
    """The stored line that replaces a live event once its content is erased (see the module docstring)."""
    if envelope.get("spec") == 2:
        erased = {key: envelope[key] for key in _V2_ERASED_KEEP if key in envelope}
        erased["content_digest"] = content_digest(envelope)
        erased["erased"] = {"record_seq": record_seq}
        return canonical_bytes(erased) + b"\n"
    tombstone = {
        "hash": envelope["hash"],
        "prev_hash": envelope["prev_hash"],
        "seq": envelope["seq"],
        "session": envelope["session"],
        "timestamp": envelope["timestamp"],
        "tombstone": {"kind": "erased", "record_seq": record_seq},
        "type": envelope["type"],
    }
    return canonical_bytes(tombstone) + b"\n"


def erasure_ranges(targets: dict[int, dict[str, Any]], hash_before: dict[int, str]) -> list[dict[str, Any]]:
    """Contiguous runs of ``targets`` (seq -> live envelope) of one hash spec, with the hashes around each run.

    ``hash_before[seq]`` is the hash of event ``seq - 1`` for each run start (64 zeros for seq 1). A run of spec-1
    events becomes tombstones, which the verifier accepts only when a record lists exactly that run with these
    hashes; spec-2 runs are listed the same way for a uniform record.
    """
    ranges: list[dict[str, Any]] = []
    for seq in sorted(targets):
        spec = targets[seq].get("spec", 1)
        last = ranges[-1] if ranges else None
        if last is not None and last["to_seq"] == seq - 1 and last["spec"] == spec:
            last["to_seq"], last["last_hash"] = seq, targets[seq]["hash"]
            continue
        ranges.append(
            {
                "from_seq": seq,
                "to_seq": seq,
                "prev_hash": GENESIS_HASH if seq == 1 else hash_before[seq],
                "last_hash": targets[seq]["hash"],
                "spec": spec,
            }
        )
    return ranges


def erasure_payload(ranges: list[dict[str, Any]], reason: str | None) -> dict[str, Any]:
    payload: dict[str, Any] = {"ranges": ranges, "event_count": sum(r["to_seq"] - r["from_seq"] + 1 for r in ranges)}
    if reason:
        payload["reason"] = reason[:MAX_REASON_CHARS]
    return payload


def pending_erasures(records: list[dict[str, Any]], live: set[int]) -> dict[int, int]:
    """``seq -> record seq`` of events some erasure record lists that still hold content (an interrupted erase)."""
    pending: dict[int, int] = {}
    for record in records:
        for item in (record.get("payload") or {}).get("ranges") or ():
            if isinstance(item, dict) and isinstance(item.get("from_seq"), int) and isinstance(item.get("to_seq"), int):
                for seq in range(item["from_seq"], item["to_seq"] + 1):
                    if seq in live:
                        pending[seq] = record["seq"]
    return pending
