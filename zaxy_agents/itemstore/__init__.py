"""Item state behind the LangGraph store: namespaced JSON items with filters, TTL and a vector index.

The log's ``store.item.*`` events are the source of truth; :class:`ItemStore` materialises them. Surfaces
reach it through ``MemoryFabric.item_store()``.
"""

from .events import DEFAULT_STORE_SESSION, ITEM_DELETED, ITEM_PUT, ITEM_TOUCHED, STORE_EVENT_TYPES
from .service import ItemStore

__all__ = [
    "DEFAULT_STORE_SESSION",
    "ITEM_DELETED",
    "ITEM_PUT",
    "ITEM_TOUCHED",
    "STORE_EVENT_TYPES",
    "ItemStore",
]
