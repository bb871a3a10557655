"""#25.2 on the LangGraph surface: a checkpointer or store opened after an event was edited behind the log's back
never returns that event's content (on both backends); the intact events are still served."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import psycopg
from langgraph.checkpoint.base import empty_checkpoint

from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyStore


def _edit(eventloom: Path, old: bytes, new: bytes) -> None:
    """Replace bytes inside stored lines, as someone with access to the files or the table would."""
    dsn = os.environ.get("ZAXY_BACKEND", "")
    if dsn.startswith("postgresql"):
        schema = os.environ["ZAXY_POSTGRES_SCHEMA"]
        with psycopg.connect(dsn, autocommit=True) as conn:
            rows = conn.execute(f'SELECT session, seq, line FROM "{schema}".eventloom_events').fetchall()
            edited = [(bytes(line).replace(old, new), s, q) for s, q, line in rows if old in bytes(line)]
            assert edited, old
            for line, session, seq in edited:
                conn.execute(
                    f'UPDATE "{schema}".eventloom_events SET line = %s WHERE session = %s AND seq = %s',
                    (line, session, seq),
                )
        return
    paths = [p for p in eventloom.glob("*.jsonl") if old in p.read_bytes()]
    assert paths, old
    for path in paths:
        path.write_bytes(path.read_bytes().replace(old, new))


def _checkpoint(saver: ZaxyCheckpointer, config: dict, checkpoint_id: str, version: int, note: str) -> dict:
    checkpoint = empty_checkpoint()
    checkpoint["id"] = checkpoint_id
    checkpoint["channel_values"] = {"note": note}
    checkpoint["channel_versions"] = {"note": version}
    return saver.put(config, checkpoint, {"source": "loop", "step": version, "label": note}, {"note": version})


def test_checkpointer_and_store_never_return_an_edited_event(eventloom: Path) -> None:
    config = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}
    first_id, second_id = "1f0a0000-0000-6000-8000-000000000001", "1f0a0000-0000-6000-8000-000000000002"
    with ZaxyCheckpointer.from_path(eventloom) as saver:
        after_first = _checkpoint(saver, config, first_id, 1, "draft the report")
        _checkpoint(saver, after_first, second_id, 2, "send it to finance")
        assert saver.get_tuple(config).checkpoint["id"] == second_id
    with ZaxyStore.from_path(eventloom) as store:
        store.put(("users", "u1"), "profile", {"plan": "free tier"})
        store.put(("users", "u1"), "prefs", {"tone": "formal"})
    _edit(eventloom, b'"label":"send it to finance"', b'"label":"wire it to mallory"')
    _edit(eventloom, b"free tier", b"gold tier")
    with ZaxyCheckpointer.from_path(eventloom) as saver:
        latest = saver.get_tuple(config)
        assert latest is not None and latest.checkpoint["id"] == first_id
        assert [t.checkpoint["id"] for t in saver.list(config)] == [first_id]
        assert latest.metadata["label"] == "draft the report"
    with ZaxyStore.from_path(eventloom) as store:
        # The store's derived index was built while the event was intact: it may still hold the value the hash
        # commits to, never the edited one; rebuilt from the log, the edited event is left out.
        profile = store.get(("users", "u1"), "profile")
        assert profile is None or profile.value == {"plan": "free tier"}
        assert store.get(("users", "u1"), "prefs").value == {"tone": "formal"}
    shutil.rmtree(eventloom / ".zaxy", ignore_errors=True)  # derived state is rebuilt from the log
    with ZaxyStore.from_path(eventloom) as store:
        assert store.get(("users", "u1"), "profile") is None
        assert "gold tier" not in repr(store.search(("users",)))
