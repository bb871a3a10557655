"""The 64-bit hashes of entity keys that ``cat_refs`` stores (catalog layout 8: which events refer to each key).

Its own module because the planner (which writes the rows) and the erasure (:mod:`.erase_local`, which reads them
back) both need it, and the planner module is at its size limit."""

from __future__ import annotations

import hashlib

_HASHES: dict[str, int] = {}  # key -> key_hash(key): a session's speakers, tasks and tools recur in most events
HASH_MEMO_LIMIT = 8192


def key_hash(key: str) -> int:
    """A 64-bit (signed, as SQLite stores integers) hash of an entity key, for ``cat_refs`` (catalog_rows.py)."""
    digest = _HASHES.get(key)
    if digest is None:
        digest = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big", signed=True)
        if len(_HASHES) >= HASH_MEMO_LIMIT:
            _HASHES.clear()  # bounded: one-off keys (turns, store items) would otherwise pile up
        _HASHES[key] = digest
    return digest
