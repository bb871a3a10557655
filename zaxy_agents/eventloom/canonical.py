"""Canonical JSON and the event hash: the exact bytes an outside tool must reproduce to verify a log.

Specification (mirrored in docs/eventloom.md):

* canonical JSON = ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
  allow_nan=False)`` encoded as UTF-8. Keys sort by Unicode code point; no insignificant whitespace;
  non-ASCII characters are written raw (never ``\\u`` escapes, except the control characters JSON requires
  to be escaped); NaN and infinities are rejected.
* the hashed object is the event envelope **without** its ``hash`` key: ``actor``, ``id``, ``payload``,
  ``prev_hash``, ``seq``, ``session``, ``timestamp``, ``type`` and, only when present, ``security``.
* ``hash`` = lowercase hex SHA-256 of the canonical JSON of the hashed object.
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


def canonical_json(value: Any) -> str:
    """Encode ``value`` as canonical JSON text (see module docstring)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_bytes(value: Any) -> bytes:
    """Canonical JSON as UTF-8 bytes."""
    return canonical_json(value).encode("utf-8")


def event_hash(envelope: dict[str, Any]) -> str:
    """SHA-256 over the canonical encoding of ``envelope`` minus its ``hash`` key."""
    hashed = {key: value for key, value in envelope.items() if key != "hash"}
    if hashed.get("security") is None:
        hashed.pop("security", None)
    return sha256(canonical_bytes(hashed)).hexdigest()


def encode_line(envelope: dict[str, Any]) -> bytes:
    """The stored form of one event: canonical JSON of the full envelope plus a newline."""
    if envelope.get("security") is None:
        envelope = {key: value for key, value in envelope.items() if key != "security"}
    return canonical_bytes(envelope) + b"\n"
