"""The inspector's fabric: opened once, every call run in one thread in turn (see ``FabricRunner``), awaited
from the web handlers without blocking the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from zaxy_agents.mcp.backend import FabricRunner


class InspectorRunner(FabricRunner):
    """A :class:`FabricRunner` whose calls can be awaited."""

    async def run(self, function: Callable[[Any], Any]) -> Any:
        return await asyncio.wrap_future(self._pool.submit(lambda: function(self._open())))

    def warm(self) -> None:
        """Catch the projection up in the background, so the first page is fast (no graph is opened)."""
        self._pool.submit(lambda: self._open().project())
