"""What a running rebuild (`zaxy reproject`) has done so far, and how it ends when it is stopped.

The rebuild runs in one thread; :class:`RebuildStatus` is read from another (the CLI's bar, polled), so it only
holds plain counters that are written by their one owner. A stop is asked from any thread through
:meth:`~zaxy_agents.projection.projector.Projector.cancel_rebuild`; the rebuild then raises
:class:`RebuildCancelled` saying what state memory was left in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class RebuildStatus:
    """Counters of one rebuild; ``stage`` is ``indexing`` -> ``graph`` -> ``digest`` -> ``done`` (or
    ``cancelled``). Events are indexed (catalog + retrieval indexes in derived.sqlite, committed per chunk) and,
    with a graph, written to the graph too (in large transactions, by a writer thread); the digest then reads the
    graph back line by line."""

    total_events: int = 0
    indexed_events: int = 0
    uses_graph: bool = False
    graph_events: float = 0.0  # committed, plus the share of the transaction in progress that is written
    digest_lines: int = 0
    stage: str = "indexing"

    def as_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "total_events": self.total_events,
            "indexed_events": self.indexed_events,
            "uses_graph": self.uses_graph,
            "graph_events": int(self.graph_events),
            "digest_lines": self.digest_lines,
        }


class RebuildCancelled(Exception):
    """The rebuild stopped because :meth:`Projector.cancel_rebuild` was called (Ctrl-C in `zaxy reproject`).

    Nothing in the log changed. Derived state (search, checkout) holds the ``indexed`` events committed before the
    stop and catches up from the log on next use; a graph write in progress was rolled back and the graph is
    rebuilt from the log the next time something needs it.
    """

    def __init__(self, status: RebuildStatus) -> None:
        self.status = status
        graph = (
            " The graph was emptied for the rebuild and is rebuilt from the log the next time it is needed."
            if status.uses_graph
            else ""
        )
        super().__init__(
            f"stopped while {status.stage}: {status.indexed_events} of {status.total_events} events were indexed "
            f"again. The log is unchanged; search and checkout catch up from the log on next use.{graph}"
        )
