"""Live items, ordered and indexed: the state that ``store.item.*`` events materialise into.

Ordering follows InMemoryStore: namespaces in the order they (re)appeared, items in the order their key was
first put (an update keeps its place; a delete and re-put moves it to the end). Namespaces that lose their
last item disappear (InMemoryStore keeps empty ones around and lists them; we do not).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any, Literal

from .field_index import EqualityIndex, RangeIndex
from .filters import RANGE_OPERATORS, index_key, is_number, matches
from .records import ItemRecord

# A candidate set bigger than this share of all items is cheaper to find by an in-order scan that stops early.
_SCAN_SHARE = 8


class ItemState:
    def __init__(self) -> None:
        self.namespaces: dict[tuple[str, ...], dict[str, ItemRecord]] = {}
        self.namespace_birth: dict[tuple[str, ...], int] = {}
        self.by_uid: dict[int, ItemRecord] = {}
        self._births = itertools.count(1)
        self._uids = itertools.count(1)
        self._equality: dict[str, EqualityIndex] = {}
        self._ranges: dict[str, RangeIndex] = {}

    def __len__(self) -> int:
        return len(self.by_uid)

    # ------------------------------------------------------------------ mutation
    def get(self, namespace: tuple[str, ...], key: str) -> ItemRecord | None:
        items = self.namespaces.get(namespace)
        return None if items is None else items.get(key)

    def upsert(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        at: datetime,
        *,
        index: Literal[False] | list[str] | None,
        seq: int,
        ttl_minutes: float | None,
        expires_at: float | None,
    ) -> ItemRecord:
        """Insert or update; an update keeps ``created_at``, uid and position."""
        items = self.namespaces.get(namespace)
        if items is None:
            items = self.namespaces[namespace] = {}
            self.namespace_birth[namespace] = next(self._births)
        record = items.get(key)
        if record is None:
            record = ItemRecord(
                uid=next(self._uids),
                namespace=namespace,
                key=key,
                value=value,
                created_at=at,
                updated_at=at,
                order=(self.namespace_birth[namespace], next(self._births)),
                index=index,
                seq=seq,
            )
            items[key] = record
            self.by_uid[record.uid] = record
        else:
            self._unindex(record)
            record.value, record.updated_at, record.index, record.seq = value, at, index, seq
        record.ttl_minutes = ttl_minutes
        record.expires_at = record.persisted_expires_at = expires_at
        self._index(record)
        return record

    def remove(self, namespace: tuple[str, ...], key: str) -> ItemRecord | None:
        items = self.namespaces.get(namespace)
        if items is None or key not in items:
            return None
        record = items.pop(key)
        if not items:
            del self.namespaces[namespace]
            del self.namespace_birth[namespace]
        del self.by_uid[record.uid]
        self._unindex(record)
        return record

    def _index(self, record: ItemRecord) -> None:
        for equality in self._equality.values():
            equality.add(record)
        for ranges in self._ranges.values():
            ranges.add(record)

    def _unindex(self, record: ItemRecord) -> None:
        for equality in self._equality.values():
            equality.discard(record)
        for ranges in self._ranges.values():
            ranges.discard(record)

    # ------------------------------------------------------------------ reading
    def namespaces_under(self, prefix: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        """Live namespaces starting with ``prefix``, in birth order."""
        if not prefix:
            yield from self.namespaces
            return
        size = len(prefix)
        for namespace in self.namespaces:
            if namespace[:size] == prefix:
                yield namespace

    def scan(self, prefix: tuple[str, ...]) -> Iterator[ItemRecord]:
        """Every item under ``prefix`` in order."""
        for namespace in self.namespaces_under(prefix):
            yield from self.namespaces[namespace].values()

    def select(
        self,
        prefix: tuple[str, ...],
        filter: Mapping[str, Any] | None,
        *,
        stop: int | None = None,
        keep: Callable[[ItemRecord], bool] | None = None,
    ) -> list[ItemRecord]:
        """Items under ``prefix`` matching ``filter`` (and ``keep``), in order; at most ``stop`` of them."""
        candidates = self._indexed_candidates(filter) if filter else None
        if candidates is not None and (stop is None or len(candidates) * _SCAN_SHARE <= len(self.by_uid)):
            size = len(prefix)
            chosen = [
                record
                for record in map(self.by_uid.__getitem__, candidates)
                if record.namespace[:size] == prefix
                and matches(record.value, filter or {})
                and (keep is None or keep(record))
            ]
            chosen.sort(key=_order)
            return chosen if stop is None else chosen[:stop]
        selected: list[ItemRecord] = []
        for record in self.scan(prefix):
            if (not filter or matches(record.value, filter)) and (keep is None or keep(record)):
                selected.append(record)
                if stop is not None and len(selected) >= stop:
                    break
        return selected

    def _indexed_candidates(self, filter: Mapping[str, Any]) -> set[int] | None:
        """uids that can possibly match, from the field indexes; ``None`` when no condition is indexable."""
        postings: list[set[int]] = []
        for field, expected in filter.items():
            if isinstance(expected, Mapping):
                equal = expected.get("$eq") if set(expected) == {"$eq"} else None
                if equal is not None and index_key(equal) is not None:
                    postings.append(self._equality_index(field).lookup(equal))
                    continue
                bounds = {op: v for op, v in expected.items() if op in RANGE_OPERATORS and is_number(v)}
                if bounds and all(v == v for v in bounds.values()):
                    postings.append(self._range_index(field).lookup(bounds))
            elif index_key(expected) is not None:
                postings.append(self._equality_index(field).lookup(expected))
        if not postings:
            return None
        postings.sort(key=len)
        result = set(postings[0])
        for other in postings[1:]:
            result &= other
            if not result:
                break
        return result

    def _equality_index(self, field: str) -> EqualityIndex:
        index = self._equality.get(field)
        if index is None:
            index = self._equality[field] = EqualityIndex(field, self.by_uid.values())
        return index

    def _range_index(self, field: str) -> RangeIndex:
        index = self._ranges.get(field)
        if index is None:
            index = self._ranges[field] = RangeIndex(field, self.by_uid.values())
        return index


def _order(record: ItemRecord) -> tuple[int, int]:
    return record.order
