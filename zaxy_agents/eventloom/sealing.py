"""Sealing an event: the one code every backend uses to turn a validated draft into its stored line.

A line is byte-identical on every backend (the same draft, seq and previous hash give the same bytes and the same
hash), so a citation means the same thing everywhere and a log moves between backends by copying lines. A backend
validates and redacts with :func:`zaxy_agents.eventloom.drafts.prepare_draft`, then calls :func:`seal` with the
seq and previous hash it holds under its own write lock. Stdlib only: the hook fast path appends through it.
"""

from __future__ import annotations

import os
import time
from json.encoder import encode_basestring  # type: ignore[attr-defined]

from zaxy_agents.eventloom.canonical import HASH_SPEC, canonical_json, sha256
from zaxy_agents.eventloom.drafts import PreparedDraft

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

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


json_string = encode_basestring  # == json.dumps(text, ensure_ascii=False) for str, without encoder set-up


def seal(
    draft: PreparedDraft,
    seq: int,
    prev: str,
    session: str,
    session_json: str,
    batch: tuple[int, int] | None = None,
) -> tuple[dict[str, Any], bytes]:
    """Assign seq/prev_hash/id/timestamp/salt, hash (spec 2), and encode the line.

    ``batch`` = ``(position, size)`` (1-based) for the events of a multi-event write: hashed with the event, it
    lets a reader tell a whole batch from the first part of one a crash cut short.
    The canonical texts are assembled from pre-encoded parts in sorted-key order, so the payload is encoded
    once: the stored line (``actor, [batch,] hash, id, payload, prev_hash, salt, [security,] seq, session,
    spec, timestamp, type``), the hashed object (``actor, [batch,] content_digest, id, prev_hash, seq,
    session, spec, timestamp, type``) and the content (``payload, salt, [security]``). The result is
    byte-identical to :func:`encode_line` and :func:`event_hash` (``verify`` re-checks that on every line).
    """
    event_id = draft.event_id or new_event_id()
    timestamp = draft.timestamp or utc_timestamp()
    salt = draft.salt or os.urandom(16).hex()
    payload_json = draft.payload_json if draft.payload_json is not None else canonical_json(draft.payload)
    security_json = f',"security":{canonical_json(draft.security)}' if draft.security else ""
    content_digest = sha256(f'{{"payload":{payload_json},"salt":"{salt}"{security_json}}}'.encode()).hexdigest()
    head = f'{{"actor":{json_string(draft.actor)}' + (f',"batch":[{batch[0]},{batch[1]}]' if batch else "")
    id_json = json_string(event_id)
    tail = (
        f'"seq":{seq},"session":{session_json},"spec":{HASH_SPEC},"timestamp":{json_string(timestamp)},'
        f'"type":"{draft.type}"}}'
    )
    digest = sha256(
        f'{head},"content_digest":"{content_digest}","id":{id_json},"prev_hash":"{prev}",{tail}'.encode()
    ).hexdigest()
    envelope: dict[str, Any] = {"actor": draft.actor}
    if batch:
        envelope["batch"] = [batch[0], batch[1]]
    envelope.update(
        hash=digest, id=event_id, payload=draft.payload, prev_hash=prev, salt=salt, seq=seq, session=session
    )
    if draft.security:
        envelope["security"] = draft.security
    envelope.update(spec=HASH_SPEC, timestamp=timestamp, type=draft.type)
    line = (
        f'{head},"hash":"{digest}","id":{id_json},"payload":{payload_json},"prev_hash":"{prev}","salt":"{salt}"'
        f"{security_json},{tail}\n"
    )
    return envelope, line.encode()
