"""The local derived-state cache every backend shares: one SQLite database per memory (``derived.sqlite``).

It holds what reads are served from — projection cursors, the entity catalog, the retrieval indexes — so that
opening a memory costs O(1) and closing costs nothing: every batch commits its rows and the cursors it covers
in one transaction. It is never the source of truth: damage, another format version or a missing file means
it is thrown away (with a warning naming the file) and rebuilt from the log.
"""

from .store import DERIVED_FILE, DerivedStateWarning, DerivedStore, DerivedStoreBusy

__all__ = ["DERIVED_FILE", "DerivedStateWarning", "DerivedStore", "DerivedStoreBusy"]
