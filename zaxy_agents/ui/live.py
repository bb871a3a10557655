"""Live: server-sent events telling the page that a session grew while an agent works.

The stream polls the session's head through the fabric (one O(1) tail read) twice a second and sends
``event: head`` with ``{"head_seq": N}`` whenever it moved; the page then asks the timeline for the events after
the last one it shows, with its filters, so what appears live is exactly what a reload would show. A comment
line every 15 s keeps proxies from closing an idle stream.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import StreamingResponse

from zaxy_agents.errors import ZaxyError

from .api import int_param, session_of
from .runner import InspectorRunner

POLL_SECONDS = 0.5
KEEPALIVE_SECONDS = 15.0


async def live(request: Request, runner: InspectorRunner) -> StreamingResponse:
    session = session_of(request)
    after = int_param(request, "after_seq", 0) or 0
    stopping: asyncio.Event = request.app.state.stopping

    async def stream() -> AsyncIterator[str]:
        last, quiet = after, 0.0
        yield "retry: 2000\n\n"
        while not stopping.is_set():
            try:
                head: Any = await runner.run(lambda fabric: fabric.head(session))
            except ZaxyError as exc:
                yield f"event: problem\ndata: {json.dumps(exc.to_dict())}\n\n"
                return
            seq = head.seq if head is not None else 0
            if seq != last:
                last, quiet = seq, 0.0
                yield f"event: head\ndata: {json.dumps({'session': session, 'head_seq': seq})}\n\n"
            elif quiet >= KEEPALIVE_SECONDS:
                quiet = 0.0
                yield ": keep-alive\n\n"
            try:
                await asyncio.wait_for(stopping.wait(), POLL_SECONDS)
            except TimeoutError:
                quiet += POLL_SECONDS

    return StreamingResponse(
        stream(), media_type="text/event-stream", headers={"cache-control": "no-store", "x-accel-buffering": "no"}
    )
