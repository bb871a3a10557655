"""Working set: a pure, log-derived digest of "where was I" for one session, and packets rendered from it.

``build_working_set(session, envelopes)`` folds a bounded tail of the log (default
:data:`~zaxy_agents.workingset.digest.DEFAULT_WINDOW` events) into open tasks, recent decisions, accepted
facts, known unknowns, files edited, commands run and the last prompts, every item citing its event.
``render_packet(working_set, kind, max_chars)`` renders a recovery or bootstrap packet under a character
budget. Stdlib only (the SessionStart hook uses it); surfaces reach it through the fabric
(``MemoryFabric.working_set`` / ``recovery_packet`` / ``bootstrap_packet``).
"""

from __future__ import annotations

from .digest import DEFAULT_WINDOW, build_working_set
from .model import WorkingItem, WorkingSet
from .packet import DEFAULT_MAX_CHARS, Packet, render_packet

__all__ = [
    "DEFAULT_MAX_CHARS",
    "DEFAULT_WINDOW",
    "Packet",
    "WorkingItem",
    "WorkingSet",
    "build_working_set",
    "render_packet",
]
