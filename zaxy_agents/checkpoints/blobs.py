"""Content-addressed channel values, with append-only deltas for growing lists (chat histories).

SqliteSaver re-serialises a thread's whole message list at every step. Here a list value whose previous
version (the parent checkpoint's) is a prefix of it is stored as an ``append`` blob holding only the new
elements, referring to its base by content address; any other value is a ``full`` blob. A value identical to
an existing blob is not written again.

Reading a list walks its chain back to a full blob (or a cached version) and concatenates; decoded lists are
kept as tuples in a bounded LRU shared by all threads, so a thread's latest state costs no decoding after the
first read. Returned lists are fresh, their elements shared with the cache: like LangGraph's reducers, treat
message objects from a checkpoint as immutable.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from zaxy_agents.errors import IntegrityError

from . import events as ev
from .codec import b64, blob_ref, unb64

DEFAULT_CACHE_ELEMENTS = 4_000_000


@dataclass(slots=True)
class BlobRecord:
    ref: str
    encoding: str  # "full" | "append"
    kind: str  # serde type tag
    text: str  # base64, as stored: decoded on first read, so replaying a thread decodes only what is read
    base: str | None
    container: str  # "list" | "value"
    _data: bytes | None = None

    @property
    def data(self) -> bytes:
        if self._data is None:
            self._data = unb64(self.text)
        return self._data


class ElementCache:
    """LRU of decoded list values (tuples), bounded by the total number of elements held."""

    def __init__(self, max_elements: int = DEFAULT_CACHE_ELEMENTS) -> None:
        self.max_elements = max_elements
        self._entries: OrderedDict[tuple[str, str], tuple[Any, ...]] = OrderedDict()
        self._size = 0

    def get(self, key: tuple[str, str]) -> tuple[Any, ...] | None:
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def forget_session(self, session: str) -> None:
        for key in [key for key in self._entries if key[0] == session]:
            self._size -= len(self._entries.pop(key))

    def put(self, key: tuple[str, str], value: tuple[Any, ...]) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self._size -= len(old)
        self._entries[key] = value
        self._size += len(value)
        while self._size > self.max_elements and len(self._entries) > 1:
            _, evicted = self._entries.popitem(last=False)
            self._size -= len(evicted)


class BlobTable:
    """The blobs of one thread session."""

    def __init__(self, session: str, cache: ElementCache) -> None:
        self.session = session
        self.cache = cache
        self.records: dict[str, BlobRecord] = {}
        self._parts: dict[str, list[dict[str, Any]]] = {}

    @property
    def pending_parts(self) -> bool:
        """Whether a multi-part blob has parts applied and parts still to come."""
        return bool(self._parts)

    def __contains__(self, ref: str) -> bool:
        return ref in self.records

    def clear(self) -> None:
        self.records.clear()
        self._parts.clear()

    # ------------------------------------------------------------------ applying events
    def apply(self, payload: dict[str, Any]) -> None:
        ref = payload["ref"]
        if ref in self.records:
            return
        parts = payload.get("parts")
        if parts:
            pending = self._parts.setdefault(ref, [])
            pending.append(payload)
            if len(pending) < parts:
                return
            del self._parts[ref]
            pending.sort(key=lambda p: p["part"])
            text = "".join(p["data"] for p in pending)
        else:
            text = payload["data"]
        if not isinstance(text, str):
            raise TypeError("checkpoint blob data must be base64 text")
        self.records[ref] = BlobRecord(
            ref=ref,
            encoding=payload["encoding"],
            kind=payload["type"],
            text=text,
            base=payload.get("base"),
            container=payload.get("container", "value"),
        )

    # ------------------------------------------------------------------ writing
    def encode(
        self, value: Any, base_ref: str | None, serde: SerializerProtocol, thread_id: str, chunk_chars: int
    ) -> tuple[str, list[dict[str, Any]], tuple[Any, ...] | None]:
        """``(ref, blob payloads to append, base elements)`` for storing ``value``.

        ``base elements`` is the decoded base list when ``value`` extends it (used to find new messages).
        """
        if type(value) is list and base_ref is not None:
            base = self.elements(base_ref, serde)
            if base is not None and len(value) >= len(base) and value[: len(base)] == list(base):
                if len(value) == len(base):
                    return base_ref, [], base
                kind, data = serde.dumps_typed(value[len(base) :])
                ref = blob_ref("append", kind, data, base_ref)
                self.cache.put((self.session, ref), tuple(value))
                if ref in self.records:
                    return ref, [], base
                payloads = ev.blob_payloads(
                    thread_id, ref, encoding="append", kind=kind, data=b64(data), base=base_ref,
                    container="list", chunk_chars=chunk_chars,
                )  # fmt: skip
                return ref, payloads, base
        kind, data = serde.dumps_typed(value)
        ref = blob_ref("full", kind, data)
        container = "list" if type(value) is list else "value"
        if container == "list":
            self.cache.put((self.session, ref), tuple(value))
        if ref in self.records:
            return ref, [], None
        payloads = ev.blob_payloads(
            thread_id, ref, encoding="full", kind=kind, data=b64(data), base=None, container=container,
            chunk_chars=chunk_chars,
        )  # fmt: skip
        return ref, payloads, None

    # ------------------------------------------------------------------ reading
    def value(self, ref: str, serde: SerializerProtocol) -> Any:
        record = self._record(ref)
        if record.container == "list":
            elements = self.elements(ref, serde)
            if elements is not None:
                return list(elements)
        return serde.loads_typed((record.kind, record.data))

    def elements(self, ref: str, serde: SerializerProtocol) -> tuple[Any, ...] | None:
        """The list stored at ``ref`` as a tuple (decoded once, then cached), or ``None`` if not a list."""
        cached = self.cache.get((self.session, ref))
        if cached is not None:
            return cached
        chain: list[BlobRecord] = []
        current: str | None = ref
        start: tuple[Any, ...] | None = None
        while current is not None:
            record = self._record(current)
            if record.container != "list":
                return None
            if chain and (hit := self.cache.get((self.session, current))) is not None:
                start = hit
                break
            chain.append(record)
            current = record.base if record.encoding == "append" else None
        if start is None:
            first = chain.pop()
            decoded = serde.loads_typed((first.kind, first.data))
            if not isinstance(decoded, list):
                return None
            start = tuple(decoded)
            self.cache.put((self.session, first.ref), start)
        if not chain:
            return start
        # One concatenation, and only the version asked for is cached: caching every version on the way would
        # build O(n^2) elements for an n-step history (older versions are rebuilt when time travel asks).
        elements = list(start)
        for record in reversed(chain):
            elements.extend(serde.loads_typed((record.kind, record.data)))
        result = tuple(elements)
        self.cache.put((self.session, ref), result)
        return result

    def _record(self, ref: str) -> BlobRecord:
        record = self.records.get(ref)
        if record is None:
            raise IntegrityError(
                f"checkpoint blob {ref[:12]} is missing from session {self.session}",
                field="checkpoint",
                remediation="Run `zaxy verify` on the session; a checkpoint refers to a value the log lacks.",
            )
        return record

    def closure(self, refs: set[str]) -> list[BlobRecord]:
        """``refs`` plus every base they depend on, bases first (what a copy must carry)."""
        ordered: list[BlobRecord] = []
        seen: set[str] = set()
        for ref in refs:
            chain = []
            current: str | None = ref
            while current is not None and current not in seen:
                record = self._record(current)
                seen.add(current)
                chain.append(record)
                current = record.base
            ordered.extend(reversed(chain))
        return ordered
