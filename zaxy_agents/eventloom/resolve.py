"""Resolving a citation to its event, the same way on every backend.

Kept out of :mod:`.citations`, which the hook fast path imports and which must stay free of ``typing``.
"""

from __future__ import annotations

from collections.abc import Callable

from zaxy_agents.errors import NotFoundError

from .citations import Citation, parse_citation
from .models import Event


def resolve_citation(citation: str | Citation, get: Callable[[str, int], Event]) -> Event:
    """The event a citation names, fetched with ``get(session, seq)``; refused when the hash prefix differs.

    Every backend resolves citations this way, so a citation means the same thing on each of them.
    """
    parsed = parse_citation(citation) if isinstance(citation, str) else citation
    event = get(parsed.session, parsed.seq)
    if not parsed.matches(event.hash):
        raise NotFoundError(
            f"citation {parsed} does not match the event at that seq (hash {event.hash[:12]})",
            field="citation",
            remediation="The cited content is not in this log; re-run the query to get current citations.",
        )
    return event
