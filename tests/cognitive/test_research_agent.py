"""examples/research-agent: a real LangGraph agent (create_agent, scripted offline model) with the metacognition,
belief-update and synthesis tools; then the memory it left behind, read through the real fabric."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import run_example
from zaxy_agents.fabric import MemoryFabric


def test_research_agent_records_what_it_does_not_know(tmp_path: Path) -> None:
    root = tmp_path / "eventloom"
    out = run_example("research-agent", root)
    assert (
        "tools: memory_claim_confidence, memory_record_known_unknown, memory_propose_belief_update, "
        "memory_checkout, memory_synthesis_artifact"
    ) in out
    assert re.search(r"The launch budget totals \$17,300 \(sum of cited lines.*artifact syn_[0-9a-f]{24}\)", out)
    assert "The launch date is a known unknown" in out
    assert re.search(r"review: bel_[0-9a-f]{24} deferred \(promoted: False\)", out)
    assert "current facts: ['Launch is on April 9', 'Launch is on March 3']" in out  # nothing promoted
    assert "answerability: refresh_recommended" in out  # the open known unknown holds the answer back
    assert '"planning": 1, "execution": 1, "reflection": 2' in out
    with MemoryFabric.from_path(root) as memory:
        [unknown] = memory.known_unknowns("research")["items"]
        assert unknown["claim_key"] == "fact:launch date" and len(unknown["source_events"]) == 2
        artifact_id = re.search(r"artifact (syn_[0-9a-f]{24})", out).group(1)
        artifact = memory.synthesis_artifact("research", artifact_id)
        assert artifact["answer_candidates"][0]["answer_value"] == 17300
        assert [item["outcome"] for item in artifact["outcomes"]] == ["used"]
