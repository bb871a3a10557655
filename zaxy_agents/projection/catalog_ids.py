"""The catalog writer's integer ids, remembered between its transactions: session and type ids, identity ids
(``kid``) and the next version number (``vid``).

Projecting one event at a time looked each of them up again at every event (a session and a type lookup, the
largest ``vid``, a join per identity key: four statements of the ~25 an event's transaction runs). Ids only
change when rows are deleted (an erasure or a session reset: the commit then drops every catalog cache, this one
included) or when another process writes (the catalog drops its caches when it sees another connection's commit,
checked inside the write transaction before any cached id is used: :meth:`SqliteCatalog.apply`'s ``generation``).
What one transaction learns is staged (:class:`StagedIds`) and adopted only when it commits: a rolled-back
transaction (a rebuild group, a failed write) leaves no id of its rows behind.
"""

from __future__ import annotations

from dataclasses import dataclass, field

LIMIT = 50_000  # identity ids remembered at most (dropped all at once beyond: they are looked up again)


@dataclass
class StagedIds:
    """Ids one write transaction looked up or created, and the next ``vid`` after its inserts."""

    names: dict[str, dict[str, int]] = field(default_factory=lambda: {"cat_sessions": {}, "cat_types": {}})
    kids: dict[str, int] = field(default_factory=dict)
    next_vid: int | None = None


class CatalogIds:
    """Committed ids: name -> id for ``cat_sessions`` / ``cat_types``, identity key -> ``kid``, the next ``vid``."""

    def __init__(self) -> None:
        self.names: dict[str, dict[str, int]] = {"cat_sessions": {}, "cat_types": {}}
        self.kids: dict[str, int] = {}
        self.next_vid: int | None = None

    def name_id(self, staged: StagedIds, table: str, name: str) -> int | None:
        found = staged.names[table].get(name)
        return self.names[table].get(name) if found is None else found

    def kid(self, staged: StagedIds, key: str) -> int | None:
        found = staged.kids.get(key)
        return self.kids.get(key) if found is None else found

    def vid(self, staged: StagedIds) -> int | None:
        return self.next_vid if staged.next_vid is None else staged.next_vid

    def adopt(self, staged: StagedIds) -> None:
        """``staged``'s transaction committed: its ids hold from now on."""
        for table, found in staged.names.items():
            self.names[table].update(found)
        if len(self.kids) + len(staged.kids) > LIMIT:
            self.kids = {}
        self.kids.update(staged.kids)
        if staged.next_vid is not None:
            self.next_vid = staged.next_vid
