"""Checkout correctness (issue 17, section 1) through the real MCP client: what the packet says matches what its
prompt holds, at every budget."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.mcp.conftest import connected, make_app, ok

CITATION = re.compile(r"eventloom://[A-Za-z0-9_.-]+/events/[1-9][0-9]*#[0-9a-f]{12,64}")
PROJECT = [
    ("session.started", {"goal": "move billing to Postgres"}),
    ("task.created", {"task_id": "T-7", "title": "Migrate billing to Postgres"}),
    ("decision.recorded", {"decision": "Use pgbouncer for connection pooling", "topic": "pooling", "task_id": "T-7"}),
    ("fact.asserted", {"subject": "billing db", "predicate": "host", "object": "db-new.internal"}),
    ("command.completed", {"command": "alembic upgrade head", "exit_code": 0, "task_id": "T-7"}),
]


@pytest.fixture
def app(tmp_path: Path):
    server = make_app(tmp_path / "eventloom", profile="full", capture=False)
    yield server
    server.close()


async def _project(client) -> None:
    for kind, payload in PROJECT:
        await ok(client, "memory_append", {"type": kind, "payload": payload})


def _prompt_citations(prompt: str) -> list[str]:
    return CITATION.findall(prompt)


async def test_answerability_and_counts_describe_the_packed_prompt_at_tight_budgets(app) -> None:
    async with connected(app) as client:
        await _project(client)
        for budget in (64, 96, 128, 400):
            arguments = {"query": "which connection pooling do we use for billing?", "max_tokens": budget}
            packet = await ok(client, "memory_checkout", arguments)
            shown = set(_prompt_citations(packet["prompt"]))
            quality, diagnostics = packet["quality"], packet["diagnostics"]
            assert diagnostics["budget_used"] <= budget
            if not shown:
                assert quality["answerability"] != "answer_from_memory", (budget, packet["prompt"])
                assert quality["required_action"]["tool"] == "memory_checkout"
            assert diagnostics["citation_count"] == len(shown), budget
            assert {p["citation"] for p in packet["provenance"]} == shown
            listed = [*packet["current_facts"], *packet["evidence"], *packet["reviewed_memory"]]
            assert {item["citation"] for item in listed} <= shown, budget
            assert diagnostics["current_fact_count"] == len(packet["current_facts"])
            rendered = (await client.call_tool("memory_checkout", arguments)).content[0].text
            assert f"; {len(shown)} citations;" in rendered.splitlines()[-1]
        assert quality["answerability"] == "answer_from_memory" and shown  # 400 tokens hold the answer


async def test_one_item_appears_once_per_packet(app) -> None:
    async with connected(app) as client:
        await _project(client)
        packet = await ok(client, "memory_checkout", {"query": "connection pooling decision", "max_tokens": 400})
        cited = _prompt_citations(packet["prompt"])
        assert cited and len(cited) == len(set(cited)), packet["prompt"]
        assert packet["prompt"].count("Use pgbouncer for connection pooling") == 1
        assert len(packet["evidence"]) == len({e["citation"] for e in packet["evidence"]})


async def test_context_assemble_cites_only_events(app) -> None:
    async with connected(app) as client:
        await _project(client)
        bundle = await ok(client, "context_assemble", {"query": ["which pooling?", "where is the billing db?"]})
        assert bundle["citations"], bundle
        for citation in bundle["citations"]:
            assert CITATION.fullmatch(citation), citation
        replayed = {e["citation"] for e in (await ok(client, "memory_replay", {"limit": 50}))["events"]}
        assert set(bundle["citations"]) <= replayed
        assert "Trust current facts" in bundle["prompt"]  # the guidance is there, and was not parsed as a citation


async def test_accepted_consolidation_is_a_disposition_not_a_current_fact(tmp_path: Path) -> None:
    app = make_app(tmp_path / "eventloom", profile="full", capture=False)
    try:
        async with connected(app) as client:
            for kind, payload in [
                ("tool.call.completed", {"tool": "read_file"}),
                ("file.edit.applied", {"path": "x.py"}),
                ("command.completed", {"command": "pytest -q", "exit_code": 0}),
                ("task.completed", {"task_id": "T"}),
            ]:
                await ok(client, "memory_append", {"type": kind, "payload": payload})
            await ok(client, "memory_append", {"type": "decision.recorded", "payload": {"decision": "ship on Fridays"}})
            proposed = await ok(client, "memory_consolidation_propose_from_log", {})
            procedure = next(p for p in proposed["proposals"] if p["candidate_type"] == "procedure")
            await ok(
                client,
                "memory_consolidation_review",
                {"candidate_id": procedure["candidate_id"], "decision": "accepted", "rationale": "our loop"},
            )
            packet = await ok(client, "memory_checkout", {"query": "how do we ship a change?", "max_tokens": 2000})
        assert not [f for f in packet["current_facts"] if f["entity_type"] == "procedure"]
        assert [(f["name"], f["review_status"], f["authority_status"]) for f in packet["reviewed_memory"]] == [
            (procedure["title"], "accepted", "non_authoritative")
        ]
        stable = packet["prompt"].split("## Stable memory", 1)[1].split("\n\n", 1)[0]
        assert "ship on Fridays" in stable and procedure["title"] not in stable
        assert f"- [procedure, accepted, non-authoritative] {procedure['title']}" in packet["prompt"]
        assert (
            "## Reviewed consolidation (accepted dispositions: non-authoritative, not current facts)"
            in (packet["prompt"])
        )
    finally:
        app.close()
