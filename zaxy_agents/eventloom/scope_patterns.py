"""Session scopes written as session ids or ``fnmatch`` patterns (``"langgraph.*"``, ``"*"``).

One definition for every surface that takes a recall scope (the LangGraph middleware, nodes and tools, and
``MemoryFabric.checkout``), so a pattern accepted by one is accepted by all.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from typing import Any

from zaxy_agents.errors import InvalidRequestError

from .validation import validate_session_id

PATTERN_CHARS = frozenset("*?[")


def is_pattern(value: str) -> bool:
    return bool(PATTERN_CHARS.intersection(value))


def check_patterns(values: Any, where: str) -> tuple[str, ...]:
    """Validate a list of session ids / patterns (literal ids must be valid session ids)."""
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InvalidRequestError(
            f"{where} must be a list of session ids or patterns, got {values!r}",
            field=where,
            remediation='Pass a list such as ["langgraph.*", "langgraph-store"].',
        )
    checked = []
    for index, value in enumerate(values):
        if not isinstance(value, str) or not value:
            raise InvalidRequestError(f"{where}[{index}] must be a non-empty string", field=f"{where}[{index}]")
        if not is_pattern(value):
            validate_session_id(value, field=f"{where}[{index}]")
        checked.append(value)
    return tuple(checked)


def expand(patterns: Iterable[str], existing: Iterable[str]) -> set[str]:
    """Literal ids as given, patterns matched against the sessions that exist."""
    patterns = list(patterns)
    sessions = {p for p in patterns if not is_pattern(p)}
    wildcards = [p for p in patterns if is_pattern(p)]
    if wildcards:
        names = list(existing)
        for pattern in wildcards:
            sessions.update(fnmatch.filter(names, pattern))
    return sessions
