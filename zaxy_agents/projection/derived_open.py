"""Opening ``.zaxy/``'s derived state: what earlier versions and killed processes left is removed, then every
component's tables are created, migrated in place or reset.

Why apart from the projector: this runs once per open (and again after damage recovery), never on the
projecting path, and is the one place that decides what survives an open — the projector only calls it.
A component reset here is rebuilt from the log by the projector's catch-up, never re-planned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zaxy_agents.storage.derived.store import DerivedStore

from .catalog_migrations import migrate as migrate_catalog
from .listeners import MemoryListeners, open_indexes
from .rebuild_worker import remove_worker_debris
from .sqlite_catalog import NAME as CATALOG_NAME
from .sqlite_catalog import SCHEMA_VERSION as CATALOG_VERSION
from .sqlite_catalog import create_tables, drop_tables
from .state_codec import remove_debris

OBSOLETE_FILES = ("projection-state.pkl",)


def remove_leftovers(derived: DerivedStore, folder: Path) -> None:
    """Delete files of obsolete formats (with a warning: one could run code when loaded), temporary files of killed
    writers and folders of killed rebuild workers."""
    for name in OBSOLETE_FILES:
        path = folder / name
        if path.exists():
            derived.warn(f"{path} was ignored (an obsolete format that could run code when loaded) and deleted")
            path.unlink(missing_ok=True)
    remove_debris(folder)
    remove_worker_debris(folder)


def open_components(derived: DerivedStore, durable: list[Any], memory: MemoryListeners) -> None:
    """Create or check the catalog's and every derived index's tables, and restore the in-memory listeners' state
    (the caller then replays what they lack from the log)."""
    migrate_catalog(derived)  # in-place layout changes first (else a version change rebuilds from the log)
    catalog_reset = derived.ensure_component(CATALOG_NAME, CATALOG_VERSION, create_tables, drop_tables)
    open_indexes(derived, durable, catalog_reset)
    memory.restore(derived.warn)
