"""Secondary indexes over top-level value fields, built the first time a filter uses the field.

``EqualityIndex`` maps a scalar (see :func:`filters.index_key`) to the items holding it; ``RangeIndex``
keeps numeric values sorted for ``$gt``/``$gte``/``$lt``/``$lte``. Both are maintained on every put and
delete once built, so a filtered search touches only matching items instead of scanning the namespace.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Any

from .filters import index_key, is_number
from .records import ItemRecord

_NO_FIELD = object()


class EqualityIndex:
    __slots__ = ("field", "postings")

    def __init__(self, field: str, records: Iterable[ItemRecord]) -> None:
        self.field = field
        self.postings: dict[tuple[str, Any], set[int]] = {}
        for record in records:
            self.add(record)

    def add(self, record: ItemRecord) -> None:
        key = index_key(record.value.get(self.field, _NO_FIELD))
        if key is not None:
            self.postings.setdefault(key, set()).add(record.uid)

    def discard(self, record: ItemRecord) -> None:
        key = index_key(record.value.get(self.field, _NO_FIELD))
        if key is not None:
            bucket = self.postings.get(key)
            if bucket is not None:
                bucket.discard(record.uid)
                if not bucket:
                    del self.postings[key]

    def lookup(self, value: Any) -> set[int]:
        key = index_key(value)
        return self.postings.get(key, set()) if key is not None else set()


class RangeIndex:
    """Numeric values of one field, sorted: ``[(value, uid), ...]``."""

    __slots__ = ("entries", "field")

    def __init__(self, field: str, records: Iterable[ItemRecord]) -> None:
        self.field = field
        self.entries: list[tuple[float, int]] = sorted(
            (record.value[field], record.uid)
            for record in records
            if is_number(record.value.get(field)) and record.value[field] == record.value[field]
        )

    def add(self, record: ItemRecord) -> None:
        value = record.value.get(self.field)
        if is_number(value) and value == value:
            bisect.insort(self.entries, (value, record.uid))

    def discard(self, record: ItemRecord) -> None:
        value = record.value.get(self.field)
        if is_number(value) and value == value:
            position = bisect.bisect_left(self.entries, (value, record.uid))
            if position < len(self.entries) and self.entries[position] == (value, record.uid):
                del self.entries[position]

    def lookup(self, bounds: dict[str, Any]) -> set[int]:
        """uids whose value satisfies every numeric bound in ``bounds`` (``{"$gt": 3, "$lte": 9}``)."""
        lo, hi = 0, len(self.entries)
        for operator, operand in bounds.items():
            if operator == "$gt":
                lo = max(lo, bisect.bisect_right(self.entries, (operand, float("inf"))))
            elif operator == "$gte":
                lo = max(lo, bisect.bisect_left(self.entries, (operand, float("-inf"))))
            elif operator == "$lt":
                hi = min(hi, bisect.bisect_left(self.entries, (operand, float("-inf"))))
            elif operator == "$lte":
                hi = min(hi, bisect.bisect_right(self.entries, (operand, float("inf"))))
        return {uid for _value, uid in self.entries[lo:hi]} if lo < hi else set()
