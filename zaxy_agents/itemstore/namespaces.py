"""``list_namespaces``: prefix/suffix conditions with ``*`` wildcards, ``max_depth``, paging (as InMemoryStore)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def condition_matches(match_type: str, path: Sequence[str], namespace: tuple[str, ...]) -> bool:
    if len(namespace) < len(path):
        return False
    if match_type == "prefix":
        pairs: Iterable[tuple[str, str]] = zip(namespace, path, strict=False)
    elif match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"Unsupported match type: {match_type}")
    return all(want == "*" or have == want for have, want in pairs)


def list_namespaces(
    namespaces: Iterable[tuple[str, ...]],
    conditions: Sequence[Any] | None,
    max_depth: int | None,
    limit: int,
    offset: int,
) -> list[tuple[str, ...]]:
    """Sorted matching namespaces, truncated to ``max_depth`` (deduplicated), then paged."""
    selected = [
        namespace
        for namespace in namespaces
        if all(condition_matches(c.match_type, c.path, namespace) for c in conditions or ())
    ]
    ordered = sorted({ns[:max_depth] for ns in selected}) if max_depth is not None else sorted(selected)
    return ordered[offset : offset + limit]
