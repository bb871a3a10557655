"""Read-side verification of a working set: every item's cited event is re-read and checked before it is served.

A working set is folded from the log (and from a cache of earlier folds), so an event edited after it was folded
could still be cited by an item. :func:`verified` re-reads the cited events (one ``lines_at`` call) and drops
the items whose event no longer matches its hash, adding an ``integrity_error`` warning that names the session
and seq; erased events drop out silently. Stdlib only (the SessionStart hook uses it).
"""

from __future__ import annotations

from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.eventloom.integrity import check_cited

from .model import WorkingSet

TYPE_CHECKING = False  # avoids importing typing on the hook fast path
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def verified(
    working: WorkingSet, lines_at: Callable[[list[tuple[str, int]]], dict[tuple[str, int], bytes]], *, sha: Any = None
) -> WorkingSet:
    """``working`` without items whose cited event fails its check, with a warning for each such event."""
    cited: dict[str, tuple[str, int, str]] = {}
    for item in working.items():
        if item.citation not in cited:
            parsed = parse_citation(item.citation)
            cited[item.citation] = (parsed.session, parsed.seq, parsed.hash_prefix)
    if not cited:
        return working
    check = check_cited(lines_at, cited.values(), sha=sha)
    rejected = {citation for citation, (s, seq, prefix) in cited.items() if not check.servable(s, seq, prefix)}
    return working.without(rejected, check.warnings())
