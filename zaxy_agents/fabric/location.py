"""Where a memory lives, for surfaces that must decide before opening it (stdlib only, like ``fabric.light``).

A surface that finds the Eventloom folder the way git finds ``.git`` (walking up from the working directory)
does so only when the memory *is* that folder; a server backend's location is its URI.
"""

from __future__ import annotations

from zaxy_agents.storage.registry import DEFAULT_REGISTRY

TYPE_CHECKING = False  # keep `typing` off the hook fast path
if TYPE_CHECKING:
    from zaxy_agents.config import ZaxySettings


def memory_in_folder(settings: ZaxySettings) -> bool:
    """True when the configured backend keeps the memory in the Eventloom folder itself (the files backend)."""
    return DEFAULT_REGISTRY.location_of(settings) == settings.eventloom_dir


def printable_location(settings: ZaxySettings) -> str:
    """Where ``settings`` keep memory, safe to print (no password), without opening anything: for surfaces that
    say where they serve from before a fabric is open."""
    return DEFAULT_REGISTRY.describe(settings)[1]
