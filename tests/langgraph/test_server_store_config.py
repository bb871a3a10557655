"""docs/langgraph.md "LangGraph's Agent Server": the store factory "takes `index` and `ttl` from the `store`
section of `langgraph.json`". LangGraph's CLI hands that section to the server as the `LANGGRAPH_STORE`
environment variable (langgraph_api/cli.py); the factory is entered here exactly as the server enters it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from zaxy_agents.langgraph import server


def test_the_server_store_takes_index_and_ttl_from_langgraph_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = {
        "path": "zaxy_agents.langgraph.server.store",
        "index": {"embed": "hashing", "dims": 64, "fields": ["text"]},
        "ttl": {"default_ttl": 5, "refresh_on_read": False},
    }
    monkeypatch.setenv("LANGGRAPH_STORE", json.dumps(section))
    monkeypatch.setenv("ZAXY_EVENTLOOM_PATH", str(tmp_path / "eventloom"))
    monkeypatch.delenv("ZAXY_BACKEND", raising=False)

    async def run() -> None:
        async with server.store() as store:
            assert store.ttl_config == section["ttl"]
            await store.aput(("notes",), "release", {"text": "the release ships on friday", "owner": "ana"})
            [hit] = await store.asearch(("notes",), query="when does the release ship")
            assert hit.key == "release" and hit.score is not None  # searched by vector: the index is on
            [put] = [e for e in store.fabric.replay(store.session) if e.type == "store.item.put"]
            assert put.payload["ttl_minutes"] == 5  # default_ttl applied
            assert put.payload["texts"] == [{"path": "text", "text": "the release ships on friday"}]  # fields

    asyncio.run(run())
