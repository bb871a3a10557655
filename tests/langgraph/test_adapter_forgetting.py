"""docs/frameworks.md: removing the newest item appends `transcript.item_removed` and checkout stops serving the
turn; clearing appends `transcript.cleared` — the history starts again, but the turns stay in the log and Memory
Checkout still recalls them until erased. Through Pydantic AI's real agent loop (FunctionModel, offline)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai", reason="pydantic-ai-slim is not installed: pip install -e '.[dev]'")
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel

from zaxy_agents.adapters.pydantic_ai import ZaxyMessageHistory


def test_pop_hides_the_turn_and_clear_keeps_the_turns_recallable_until_erased(tmp_path: Path) -> None:
    reply = ModelResponse(parts=[TextPart("The vault code is quartz-7731")])
    agent = Agent(FunctionModel(lambda messages, info: reply))
    with ZaxyMessageHistory("c", eventloom_path=tmp_path / "eventloom") as history:
        memory = history.memory

        def recalled(word: str, query: str) -> bool:
            return word in memory.checkout(query, scope=["pydantic-ai.*"], max_tokens=2000).prompt

        history.extend(agent.run_sync("our staging host is db-staging-2").new_messages())
        assert recalled("quartz-7731", "vault code") and recalled("db-staging-2", "staging host")

        history.pop()  # the model's reply
        assert [e.type for e in memory.replay(history.session)][-1] == "transcript.item_removed"
        assert not recalled("quartz-7731", "vault code")  # no longer current memory

        history.clear()
        events = list(memory.replay(history.session))
        assert events[-1].type == "transcript.cleared" and history.messages() == []
        turns = [e.payload["text"] for e in events if e.type == "transcript.turn"]
        assert turns[0] == "our staging host is db-staging-2"  # still in the log
        assert recalled("db-staging-2", "staging host")  # cleared from the history, not from memory

        memory.erase_session(history.session, actor="test", reason="forget the conversation")
        assert not recalled("db-staging-2", "staging host")
