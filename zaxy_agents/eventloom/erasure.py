"""Erasure in an append-only, hash-chained log: the content goes, the chain still verifies, the act is recorded.

How an event's content is removed depends on the hash spec it was sealed with (see :mod:`.canonical`):

* **spec 2** (every event written since erasure exists): ``payload``, ``salt`` and ``security`` are removed and
  ``content_digest`` is kept; the event's hash still recomputes from the digest, and without the 128-bit salt the
  digest cannot be used to test guesses of the content. The line keeps ``erased: {"record_seq": R}``.
* **spec 1** (events written before): the hash covers the payload itself, so the line becomes a *tombstone*
  (seq, hash, prev_hash, type, timestamp) and its ``id`` is dropped too: the hash, still visible as the next
  event's ``prev_hash``, can then not be brute-forced from a guessed payload (the 128-bit id is unknown). The
  erasure record vouches for each tombstone run with the hashes around it (:mod:`.verifier`).

* **a spec-2 event too short for its erased form** (the digest is longer than the payload and salt it replaces, e.g.
  a store delete) becomes a tombstone as well, so the embedded log can overwrite its line in place (same length,
  padded with spaces in the marker's ``pad``; :func:`erasure_form` chooses, the record lists the choice as each
  range's ``form`` so every backend and a later repair scrub to the same form).

The record is an ``eventloom.erased`` event appended to the same session *before* the lines are scrubbed:
``{"ranges": [{"from_seq", "to_seq", "prev_hash", "last_hash", "spec", "form"}], "event_count", "reason"?}`` plus the
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
_MIN_PAD = len(b'"pad":"",')  # what a pad adds to a marker before its first space
_V2_ERASED_KEEP = ("actor", "batch", "hash", "id", "prev_hash", "seq", "session", "spec", "timestamp", "type")


def is_erased(envelope: dict[str, Any]) -> bool:
    return "erased" in envelope or "tombstone" in envelope


def erased_line(envelope: dict[str, Any], record_seq: int, form: str | None = None, size: int | None = None) -> bytes:
    """The stored line that replaces a live event once its content is erased (see the module docstring).

    ``form``: ``"erased"`` or ``"tombstone"``, as the erasure record lists the event (:func:`listed_form`); default
    by the event's spec. ``size``: make the line exactly that many bytes (newline included), with a ``pad`` of
    spaces in its marker when it is shorter, so it can overwrite the old line in place; a ``ValueError`` when it
    cannot (longer, or shorter by less than the smallest pad, :data:`_MIN_PAD`)."""
    if form is None:
        form = "erased" if envelope.get("spec") == 2 else "tombstone"
    if form == "erased" and envelope.get("spec") != 2:
        raise ValueError("only a spec-2 event keeps its hash when erased")
    line = _form_line(envelope, record_seq, form, None)
    if size is None or size == len(line):
        return line
    slack = size - len(line) - _MIN_PAD
    if slack < 0:
        raise ValueError(f"the erased form of event {envelope.get('seq')} does not fit its line of {size} bytes")
    return _form_line(envelope, record_seq, form, " " * slack)


def _form_line(envelope: dict[str, Any], record_seq: int, form: str, pad: str | None) -> bytes:
    marker: dict[str, Any] = {"record_seq": record_seq} if pad is None else {"pad": pad, "record_seq": record_seq}
    if form == "erased":
        erased = {key: envelope[key] for key in _V2_ERASED_KEEP if key in envelope}
        erased["content_digest"] = content_digest(envelope)
        erased["erased"] = marker
        return canonical_bytes(erased) + b"\n"
    tombstone = {
        "hash": envelope["hash"],
        "prev_hash": envelope["prev_hash"],
        "seq": envelope["seq"],
        "session": envelope["session"],
        "timestamp": envelope["timestamp"],
        "tombstone": {"kind": "erased", **marker},
        "type": envelope["type"],
    }
    return canonical_bytes(tombstone) + b"\n"


def erasure_form(envelope: dict[str, Any], size: int | None, record_seq: int) -> str | None:
    """How an event whose line is ``size`` bytes is erased by a record at ``record_seq``: ``"erased"`` (spec 2:
    its hash still recomputes) when that form fits the line exactly or with a pad, else ``"tombstone"`` when that
    fits (a small spec-2 event, e.g. a store delete, whose digest is longer than its payload and salt), else
    ``None`` (it cannot be overwritten in place). ``size`` None (not known): the form by spec."""
    spec2 = envelope.get("spec") == 2
    if size is None:
        return "erased" if spec2 else "tombstone"
    for form in ("erased", "tombstone") if spec2 else ("tombstone",):
        length = len(_form_line(envelope, record_seq, form, None))
        if length == size or length + _MIN_PAD <= size:
            return form
    return None


def erasure_ranges(
    targets: dict[int, dict[str, Any]],
    hash_before: dict[int, str],
    sizes: dict[int, int] | None = None,
    record_seq: int = 0,
) -> list[dict[str, Any]]:
    """Contiguous runs of ``targets`` (seq -> live envelope) of one erased form, with the hashes around each run.

    ``hash_before[seq]`` is the hash of event ``seq - 1`` for each run start (64 zeros for seq 1). ``sizes``: each
    target's stored line length, which decides its form with ``record_seq``, the seq the record is expected to get
    (:func:`erasure_form`; when no form fits, or the record gets a longer seq: by spec, and the embedded log then
    rewrites the file). A run of tombstones is accepted by the verifier only when a record lists
    exactly that run with these hashes; erased spec-2 runs are listed the same way for a uniform record. Each
    range names its ``form`` and the ``spec`` of its first event.
    """
    ranges: list[dict[str, Any]] = []
    for seq in sorted(targets):
        envelope = targets[seq]
        size = None if sizes is None else sizes.get(seq)
        form = erasure_form(envelope, size, record_seq) or erasure_form(envelope, None, record_seq)
        last = ranges[-1] if ranges else None
        if last is not None and last["to_seq"] == seq - 1 and last["form"] == form:
            last["to_seq"], last["last_hash"] = seq, envelope["hash"]
            continue
        ranges.append(
            {
                "from_seq": seq,
                "to_seq": seq,
                "prev_hash": GENESIS_HASH if seq == 1 else hash_before[seq],
                "last_hash": envelope["hash"],
                "spec": envelope.get("spec", 1),
                "form": form,
            }
        )
    return ranges


def listed_form(forms: dict[int, str], seq: int, envelope: dict[str, Any]) -> str:
    """The form event ``seq`` is scrubbed to: as its record lists it (``forms``, :func:`range_forms`), a tombstone
    for any event that is not spec 2, by spec when the record does not list it."""
    if envelope.get("spec") != 2:
        return "tombstone"
    return forms.get(seq) or "erased"


def range_forms(record_payload: Any) -> dict[int, str]:
    """seq -> the form (``"erased"`` / ``"tombstone"``) an erasure record's ranges give each listed event. Records
    written before ranges named their form: by the range's spec (2: erased, else tombstone)."""
    forms: dict[int, str] = {}
    ranges = record_payload.get("ranges") if isinstance(record_payload, dict) else None
    for item in ranges if isinstance(ranges, list) else ():
        if not (
            isinstance(item, dict) and isinstance(item.get("from_seq"), int) and isinstance(item.get("to_seq"), int)
        ):
            continue
        form = item.get("form")
        if form not in ("erased", "tombstone"):
            form = "erased" if item.get("spec") == 2 else "tombstone"
        for seq in range(item["from_seq"], item["to_seq"] + 1):
            forms[seq] = form
    return forms


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
