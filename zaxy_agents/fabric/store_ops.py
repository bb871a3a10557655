"""Fabric operations for the LangGraph store: open an :class:`~zaxy_agents.itemstore.ItemStore` on this log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .service import FabricService

if TYPE_CHECKING:
    from zaxy_agents.itemstore import ItemStore


class StoreService(FabricService):
    """Service: the item-store part of :class:`~zaxy_agents.fabric.MemoryFabric`."""

    def item_store(
        self,
        session: str | None = None,
        *,
        index: Any = None,
        ttl: Any = None,
        actor: str = "langgraph",
    ) -> ItemStore:
        """A store view over ``session`` (default ``langgraph-store``): derived state under
        ``<eventloom>/.zaxy/itemstore`` kept current with the log (opening does not replay the history).

        ``index`` is LangGraph's ``IndexConfig`` (``dims``, ``embed``, ``fields``); ``ttl`` its ``TTLConfig``.
        Embeddings are cached under ``<eventloom>/.zaxy/embeddings`` so a restart does not re-embed.
        """
        from zaxy_agents.itemstore import DEFAULT_STORE_SESSION, ItemStore

        derived = self.backend.derived_path  # per deployment (a server's schema has its own)
        store = ItemStore(
            self.log,
            session or DEFAULT_STORE_SESSION,
            index=index,
            ttl=ttl,
            # Only a store with an index embeds (each path costs a fresh process's open some pathlib work).
            cache_dir=self.settings.derived_path / "embeddings" if index is not None else None,
            state_dir=derived / "itemstore",
            identity=str(derived),
            actor=actor,
        )
        self._closers.append(store.close)
        self.core.erase_hooks.append(store.on_erased)  # EraseService.on_erase, without building it
        self.core.erase_locators.append(store.locate)  # EraseService.on_locate, likewise
        return store
