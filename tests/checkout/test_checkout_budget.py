"""Token budgets (tiktoken, offline): citations survive, degradation is graceful, prefixes are stable."""

from __future__ import annotations

import re

from zaxy_agents.checkout.tokens import count_tokens, get_encoding
from zaxy_agents.fabric import MemoryFabric

CITATION = re.compile(r"eventloom://[A-Za-z0-9_.-]+/events/\d+#[0-9a-f]{12}")


def _content_lines(prompt: str) -> list[str]:
    """Memory item lines (everything listed before the guidance section)."""
    body = prompt.split("## How to use this memory")[0]
    return [line for line in body.splitlines() if line.startswith("- ")]


def test_tiktoken_works_offline() -> None:
    assert get_encoding("cl100k_base").encode("hello world") == [15339, 1917]
    assert get_encoding("o200k_base").encode("hello world") == [24912, 2375]
    assert count_tokens("The quick brown fox") == 4


def test_budget_is_respected_and_citations_survive(project: MemoryFabric) -> None:
    for budget in (2000, 600, 300, 160, 64):
        packet = project.checkout("billing db host pooling", session="proj", max_tokens=budget)
        used = packet.diagnostics.budget_used
        assert packet.diagnostics.budget_requested == budget
        assert used == count_tokens(packet.prompt)
        assert used <= budget
        assert "answerability:" in packet.prompt
        for line in _content_lines(packet.prompt):
            assert CITATION.search(line), line  # an included item always carries its full citation
        elided = packet.diagnostics.elided
        assert elided["count"] == packet.retention.elided_by_budget
        assert all(CITATION.fullmatch(c) for c in elided["citations"])


def test_degradation_is_a_curve_not_a_cliff(project: MemoryFabric) -> None:
    counts = []
    for budget in (4000, 1000, 500, 350, 250):
        packet = project.checkout("billing db host pooling", session="proj", max_tokens=budget)
        counts.append(len(_content_lines(packet.prompt)))
    assert counts == sorted(counts, reverse=True)
    assert counts[0] > counts[-1] >= 1


def test_truncated_recall_is_not_reported_as_empty(project: MemoryFabric) -> None:
    packet = project.checkout("billing db host pooling runbook", session="proj", max_tokens=200)
    assert packet.diagnostics.elided["count"] > 0
    assert "raise the budget" in packet.diagnostics.elided["note"]


def test_repeated_checkouts_share_a_byte_identical_prefix(project: MemoryFabric) -> None:
    first = project.checkout("billing db host", session="proj", max_tokens=1500)
    second = project.checkout("who edited billing/db.py", session="proj", max_tokens=1500)
    third = project.checkout("billing db host", session="proj", max_tokens=1500)
    prefix = first.diagnostics.stable_prefix_chars
    assert prefix > len("# Memory Checkout\n")
    assert first.prompt[:prefix] == second.prompt[:prefix] == third.prompt[:prefix]
    assert first.diagnostics.stable_prefix_sha256 == second.diagnostics.stable_prefix_sha256
    assert not re.search(r"\d{4}-\d{2}-\d{2}T", first.prompt[:prefix])  # no timestamps in the stable tier


def test_configurable_encoding(project: MemoryFabric) -> None:
    packet = project.checkout("billing", session="proj", max_tokens=500, encoding="o200k_base")
    assert packet.diagnostics.encoding == "o200k_base"
    assert packet.diagnostics.budget_used == count_tokens(packet.prompt, "o200k_base")
