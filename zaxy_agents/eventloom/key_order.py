"""Key order of JSON objects across the log's canonical (sorted-key) encoding.

The log stores canonical JSON so hashes are reproducible; a caller's object comes back with sorted keys. Where
the order matters (a LangGraph store value, a framework's conversation item), the writer records
``key_order``: ``[[path, [keys...]], ...]`` for every object whose keys are not already sorted (``path`` lists
object keys and list indexes from the value's root), and the reader restores it.
"""

from __future__ import annotations

from typing import Any


def key_order(value: Any) -> list[list[Any]]:
    """``[[path, keys]]`` for every object in ``value`` whose keys are not in sorted order."""
    orders: list[list[Any]] = []
    stack: list[tuple[list[Any], Any]] = [([], value)]
    while stack:
        path, current = stack.pop()
        if isinstance(current, dict):
            keys = list(current)
            if keys != sorted(keys):
                orders.append([path, keys])
            stack.extend(([*path, key], item) for key, item in current.items() if isinstance(item, (dict, list)))
        elif isinstance(current, list):
            stack.extend(([*path, i], item) for i, item in enumerate(current) if isinstance(item, (dict, list)))
    orders.reverse()  # parents first
    return orders


def restore_key_order(value: Any, orders: Any) -> Any:
    """``value`` with the recorded key orders applied (entries that no longer fit, e.g. redacted, are skipped)."""
    if not isinstance(orders, list) or not orders:
        return value
    for entry in sorted(
        (e for e in orders if isinstance(e, list) and len(e) == 2 and isinstance(e[0], list)),
        key=lambda e: len(e[0]),
        reverse=True,  # deepest first, so a parent's reordered copy holds its reordered children
    ):
        path, keys = entry
        parent, target = None, value
        try:
            for step in path:
                parent, target = target, target[step]
        except (KeyError, IndexError, TypeError):
            continue
        if not isinstance(target, dict) or not isinstance(keys, list) or set(keys) != set(target):
            continue
        reordered = {key: target[key] for key in keys}
        if parent is None:
            value = reordered
        else:
            parent[path[-1]] = reordered
    return value
