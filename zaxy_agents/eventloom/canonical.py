"""Canonical JSON and the event hash: the exact bytes an outside tool must reproduce to verify a log.

Specification (mirrored in docs/eventloom.md):

* canonical JSON = ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
  allow_nan=False)`` encoded as UTF-8. Keys sort by Unicode code point; no insignificant whitespace;
  non-ASCII characters are written raw (never ``\\u`` escapes, except the control characters JSON requires
  to be escaped); NaN and infinities are rejected.
* hash spec 1 (events without a ``spec`` key): the hashed object is the event envelope **without** its
  ``hash`` key; ``hash`` = lowercase hex SHA-256 of its canonical JSON.
* hash spec 2 (``"spec": 2``, every event sealed since): the payload is committed through a salted digest,
  ``content_digest`` = SHA-256 of canonical ``{"payload", "salt", ["security"]}``, and ``hash`` = SHA-256 of
  canonical ``{"actor", ["batch"], "content_digest", "id", "prev_hash", "seq", "session", "spec",
  "timestamp", "type"}``. Erasing the event removes payload, salt and security and keeps ``content_digest``:
  the hash still recomputes, and the 128-bit random salt makes the digest useless for guessing the content.
* ``prev_hash`` of seq 1 is 64 zeros (:data:`GENESIS_HASH`); of seq n > 1 it is the ``hash`` of seq n - 1.
* each stored line is the canonical JSON of the whole envelope (hash included) followed by ``\\n``; a line
  whose bytes differ from that re-encoding is treated as tampered.

Stdlib only: the hook fast path imports this module.
"""

from __future__ import annotations

import json

try:  # the interpreter's builtin SHA-256: same digest as hashlib's, without loading OpenSSL (~3 ms at start-up)
    from _sha2 import sha256  # CPython >= 3.12
except ImportError:  # pragma: no cover - depends on the interpreter version
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:
        from hashlib import sha256

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from typing import Any

GENESIS_HASH = "0" * 64
HASH_HEX_LENGTH = 64
CITATION_HASH_PREFIX_LENGTH = 12
HASH_SPEC = 2  # the spec new events are sealed with (1: the original, still verified)
_V1_KEYS = frozenset({"actor", "hash", "id", "payload", "prev_hash", "seq", "session", "timestamp", "type"})
_V2_LIVE_REQUIRED = frozenset({*_V1_KEYS, "salt", "spec"})
_V2_LIVE_ALLOWED = frozenset({*_V2_LIVE_REQUIRED, "batch", "security"})
_V2_ERASED_REQUIRED = frozenset({*(_V1_KEYS - {"payload"}), "content_digest", "erased", "spec"})
_V2_ERASED_ALLOWED = frozenset({*_V2_ERASED_REQUIRED, "batch"})
_TOMBSTONE_REQUIRED = frozenset({"hash", "prev_hash", "seq", "session", "timestamp", "tombstone", "type"})
_V2_HASHED = ("actor", "batch", "id", "prev_hash", "seq", "session", "spec", "timestamp", "type")


def canonical_json(value: Any) -> str:
    """Encode ``value`` as canonical JSON text (see module docstring)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_bytes(value: Any) -> bytes:
    """Canonical JSON as UTF-8 bytes."""
    return canonical_json(value).encode("utf-8")


def content_digest(envelope: dict[str, Any]) -> str:
    """Spec 2: SHA-256 over the canonical ``{"payload", "salt", ["security"]}`` (what erasure removes)."""
    content = {"payload": envelope["payload"], "salt": envelope["salt"]}
    if envelope.get("security") is not None:
        content["security"] = envelope["security"]
    return sha256(canonical_bytes(content)).hexdigest()


def event_hash(envelope: dict[str, Any]) -> str:
    """The hash an event's envelope must carry, by its hash spec (``spec`` key; absent = 1).

    Spec 1: SHA-256 over the canonical envelope minus ``hash``. Spec 2: SHA-256 over the canonical
    ``{actor, [batch], content_digest, id, prev_hash, seq, session, spec, timestamp, type}``, where
    ``content_digest`` is recomputed from payload, salt and security, or taken from an erased event.
    """
    spec = envelope.get("spec")
    if spec is None:
        hashed = {key: value for key, value in envelope.items() if key != "hash"}
        if hashed.get("security") is None:
            hashed.pop("security", None)
        return sha256(canonical_bytes(hashed)).hexdigest()
    if spec != 2:
        raise ValueError(f"unknown hash spec {spec!r}")
    hashed = {key: envelope[key] for key in _V2_HASHED if key in envelope}
    hashed["content_digest"] = envelope["content_digest"] if "erased" in envelope else content_digest(envelope)
    return sha256(canonical_bytes(hashed)).hexdigest()


def line_shape_problem(envelope: Any) -> str | None:
    """Why a decoded line is not a well-formed envelope of a known kind (fields only; hashes are checked apart)."""
    if not isinstance(envelope, dict):
        return "line is not a JSON object"
    keys = envelope.keys()
    if "tombstone" in envelope:
        required, allowed = _TOMBSTONE_REQUIRED, _TOMBSTONE_REQUIRED
    elif "spec" not in envelope:
        required, allowed = _V1_KEYS, None
    elif envelope["spec"] != 2:
        return f"unknown hash spec {envelope['spec']!r}"
    elif "erased" in envelope:
        required, allowed = _V2_ERASED_REQUIRED, _V2_ERASED_ALLOWED
    else:
        required, allowed = _V2_LIVE_REQUIRED, _V2_LIVE_ALLOWED
    missing = required - keys
    if missing:
        return f"missing envelope fields: {', '.join(sorted(missing))}"
    marker = envelope.get("erased") or envelope.get("tombstone")
    if isinstance(marker, dict) and "pad" in marker and not _only_spaces(marker["pad"]):
        return "an erased line's pad holds something else than spaces"
    if allowed is not None and not keys <= allowed:
        return f"unexpected envelope fields: {', '.join(sorted(keys - allowed))}"
    if not isinstance(envelope["seq"], int) or isinstance(envelope["seq"], bool):
        return "seq is not an integer"
    return None


def _only_spaces(pad: Any) -> bool:
    """The ``pad`` an in-place erase leaves in an erased line's marker (not hashed): spaces only, so it can carry
    nothing (see :mod:`zaxy_agents.storage.files.jsonl_scrub_journal`)."""
    return isinstance(pad, str) and pad.strip(" ") == ""


def encode_line(envelope: dict[str, Any]) -> bytes:
    """The stored form of one event: canonical JSON of the full envelope plus a newline."""
    if envelope.get("security") is None:
        envelope = {key: value for key, value in envelope.items() if key != "security"}
    return canonical_bytes(envelope) + b"\n"


_HASH_KEY = b',"hash":"'
_ID_KEY = b',"id":'
_PAYLOAD_KEY = b',"payload":'
_PREV_KEY = b',"prev_hash":"'
_SALT_KEY = b',"salt":"'
_SEQ_KEY = b',"seq":'


def stored_line_hash(line: bytes, sha: Any = sha256) -> str | None:
    """The hash the bytes of a stored (canonical) event line commit to, computed on the bytes themselves.

    Reading a line for use only needs to know that the bytes it serves are the bytes the hash commits to; that
    costs one SHA-256 here (two for spec 2) instead of re-encoding the envelope. Keys of a canonical line come
    in a fixed order and an unescaped ``,"key":`` cannot occur inside a JSON string, so the fields are found by
    search (the payload's end by the *last* ``,"prev_hash":"``, since only the payload can nest that key).
    Returns ``None`` for a layout this does not handle (erased events, tombstones, anything unexpected): the
    caller then falls back to :func:`event_hash` + :func:`encode_line`. ``sha``: the SHA-256 constructor
    (readers pass hashlib's, ~3x faster than the builtin one this module uses to keep hook start-up light).
    """
    if not line.startswith(b'{"actor":"') or not line.endswith(b"}\n"):
        return None
    start = line.find(_HASH_KEY)
    if start < 0 or line[start + 73 : start + 74] != b'"':
        return None
    digest_end = start + 74
    if line.rfind(b',"spec":2,', digest_end) < 0:  # spec 1: the hashed object is the line minus its hash
        return sha(line[:start] + line[digest_end:-1]).hexdigest()
    payload = line.find(_PAYLOAD_KEY, digest_end)
    prev = line.rfind(_PREV_KEY)
    if line[digest_end : digest_end + 6] != _ID_KEY or payload < 0 or prev < payload:
        return None
    salt = prev + 79
    if line[prev + 78 : salt + 9] != b'"' + _SALT_KEY or line[salt + 41 : salt + 42] != b'"':
        return None
    seq = line.find(_SEQ_KEY, salt + 42)
    if seq < 0:
        return None
    content = b'{"payload":' + line[payload + 11 : prev] + b',"salt":"' + line[salt + 9 : salt + 41] + b'"'
    content += line[salt + 42 : seq] + b"}"  # the security block, when there is one
    content_digest = sha(content).hexdigest().encode()
    hashed = line[:start] + b',"content_digest":"' + content_digest + b'"' + line[digest_end:payload]
    return sha(hashed + line[prev : prev + 79] + line[seq:-1]).hexdigest()


def stored_line_sound(line: bytes, envelope: dict[str, Any], sha: Any = sha256) -> bool:
    """Whether the decoded ``envelope`` of a stored ``line`` may be served: its bytes match its hash.

    Tombstones (content gone, hash vouched for by a record) pass; their readers see no content.
    """
    if "tombstone" in envelope:
        return True
    fast = None if "erased" in envelope else stored_line_hash(line, sha)
    if fast is not None:
        return fast == envelope.get("hash")
    try:
        return event_hash(envelope) == envelope.get("hash") and encode_line(envelope) == line
    except (TypeError, ValueError, KeyError):
        return False
