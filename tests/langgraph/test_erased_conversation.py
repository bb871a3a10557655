"""An erased thread is forgotten by the process that erased it: the conversation ledger (which message ids the
session already holds) no longer answers from before the erasure, so capturing the same messages again records
them, exactly as a fresh process reading the scrubbed log does."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage

from zaxy_agents.fabric import MemoryFabric

MESSAGES = [HumanMessage("my card number is 4111", id="m-1"), AIMessage("noted", id="m-2")]


def test_capture_after_erasing_a_session_records_again_like_a_fresh_process(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path / "loom") as memory:
        assert len(memory.capture_messages("chat", MESSAGES, thread_id="t")) == 2
        assert memory.capture_messages("chat", MESSAGES, thread_id="t") == []  # idempotent while it holds them
        memory.erase_session("chat", reason="user asked")
        again = memory.capture_messages("chat", MESSAGES, thread_id="t")
    assert [event.payload["message_id"] for event in again] == ["m-1", "m-2"]
    with MemoryFabric.from_path(tmp_path / "loom") as fresh:  # a new process agrees: recorded once since
        assert fresh.capture_messages("chat", MESSAGES, thread_id="t") == []
