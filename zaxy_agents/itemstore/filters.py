"""Filter semantics of ``search(filter=...)``: InMemoryStore's operators, with JSON-sane edge cases.

Where LangGraph's backends agree we match them; where they disagree we choose (and document in
docs/langgraph.md):

* equality is JSON equality: ``1 == 1.0`` but ``true != 1`` (InMemoryStore uses Python ``==``, where
  ``True == 1``); a missing field reads as ``null`` for ``$eq``/``$ne``/plain equality, as in InMemoryStore;
* ranges (``$gt``/``$gte``/``$lt``/``$lte``) compare numbers numerically and strings lexicographically (ISO
  dates work); a missing field, ``null``, a boolean or a mixed-type pair never matches (InMemoryStore raises
  on a missing field and ``float()``-casts strings; PostgreSQL compares as text);
* nested objects match as subsets and lists element by element, exactly as InMemoryStore does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zaxy_agents.errors import InvalidRequestError

OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})
RANGE_OPERATORS = frozenset({"$gt", "$gte", "$lt", "$lte"})


class InvalidFilterError(InvalidRequestError, ValueError):
    """A search filter uses an unsupported operator or shape (also a ``ValueError``, as in LangGraph)."""


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def validate_filter(filter: Mapping[str, Any] | None) -> None:
    """Reject unknown ``$`` operators before anything runs (InMemoryStore raises lazily, per item)."""
    if not filter:
        return
    if not isinstance(filter, Mapping):
        raise InvalidFilterError(
            f"filter must be a mapping, got {type(filter).__name__}",
            field="filter",
            remediation='Pass a dict such as {"status": "active", "score": {"$gte": 3}}.',
        )
    for value in filter.values():
        _validate_filter_value(value)


def _validate_filter_value(value: Any) -> None:
    if isinstance(value, Mapping):
        operator_keys = [k for k in value if isinstance(k, str) and k.startswith("$")]
        if operator_keys and len(operator_keys) != len(value):
            raise InvalidFilterError(
                f"filter object mixes operators and fields: {sorted(map(str, value))}",
                field="filter",
                remediation='Use either operators ({"$gte": 3}) or nested fields ({"a": 1}) in one object.',
            )
        for key, inner in value.items():
            if isinstance(key, str) and key.startswith("$") and key not in OPERATORS:
                raise InvalidFilterError(
                    f"unsupported filter operator {key!r}",
                    field="filter",
                    remediation=f"Use one of {', '.join(sorted(OPERATORS))}.",
                )
            _validate_filter_value(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            _validate_filter_value(inner)


def matches(value: Mapping[str, Any], filter: Mapping[str, Any]) -> bool:
    """True when an item's value satisfies every top-level condition of ``filter``."""
    get = value.get
    return all(compare(get(key, MISSING), expected) for key, expected in filter.items())


def compare(actual: Any, expected: Any) -> bool:
    """One condition: operators, nested subset match, element-wise lists, or JSON equality."""
    if isinstance(expected, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in expected):
            return all(apply_operator(actual, op, operand) for op, operand in expected.items())
        if not isinstance(actual, Mapping):
            return False
        return all(compare(actual.get(k, MISSING), v) for k, v in expected.items())
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(expected)
            and all(compare(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return json_equal(actual, expected)


def json_equal(actual: Any, expected: Any) -> bool:
    """JSON equality of scalars (and deep equality of containers); a missing value equals ``null``."""
    if actual is MISSING:
        actual = None
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual == expected
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        return actual.keys() == expected.keys() and all(json_equal(actual[k], expected[k]) for k in actual)
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        return len(actual) == len(expected) and all(json_equal(a, e) for a, e in zip(actual, expected, strict=True))
    if isinstance(actual, (Mapping, list, tuple)) or isinstance(expected, (Mapping, list, tuple)):
        return False
    return bool(actual == expected)


def apply_operator(actual: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return json_equal(actual, operand)
    if operator == "$ne":
        return not json_equal(actual, operand)
    if operator in RANGE_OPERATORS:
        return range_holds(actual, operator, operand)
    raise InvalidFilterError(
        f"unsupported filter operator {operator!r}",
        field="filter",
        remediation=f"Use one of {', '.join(sorted(OPERATORS))}.",
    )


def range_holds(actual: Any, operator: str, operand: Any) -> bool:
    """Numeric or lexicographic comparison; anything else (missing, null, bool, mixed types) is no match."""
    if is_number(actual) and is_number(operand):
        pass
    elif not (isinstance(actual, str) and isinstance(operand, str)):
        return False
    if operator == "$gt":
        return bool(actual > operand)
    if operator == "$gte":
        return bool(actual >= operand)
    if operator == "$lt":
        return bool(actual < operand)
    return bool(actual <= operand)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
