"""Event types that project nothing (checkpoints, checkout records, refs, markers) take a short path: their
extractor is never called (its label says it returns nothing) and the planner writes only their Event rows. Most
of a LangGraph turn is such events (3 ``checkpoint.saved``, 2 ``checkpoint.writes``, 1 ``metacognition.checkout``
for 2 ``transcript.turn``). These tests hold the short path to the long one: a memory written by a real
``create_agent`` with the middleware projects to the same derived rows and graph one event at a time, in one
batch, and with the short path switched off; and no extractor that can produce something carries the label.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage

from tests.retrieval.test_ingest_fast_paths import _drafts, _tables
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.langgraph import ZaxyCheckpointer, ZaxyMemoryMiddleware
from zaxy_agents.langgraph.scripted import ScriptedChatModel
from zaxy_agents.projection import planner
from zaxy_agents.projection.model import Extraction
from zaxy_agents.projection.registry import PRODUCES_NOTHING, ExtractorTable

SILENT_TYPES = ("checkpoint.saved", "checkpoint.writes", "metacognition.checkout")


@pytest.fixture(scope="module")
def agent_log(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[bytes]]:
    """The log lines of a memory seeded with facts and turns, then used by a create_agent for four turns."""
    root = tmp_path_factory.mktemp("agent")
    model = ScriptedChatModel(policy=lambda messages: AIMessage("Noted; port 8080 for service 3 it is."))
    with MemoryFabric.from_path(root, durability="batch", use_graph=False) as memory:
        memory.append_many("project", _drafts(40))
        agent = create_agent(
            model,
            [],
            middleware=[ZaxyMemoryMiddleware(memory, scope=["project"])],
            checkpointer=ZaxyCheckpointer(memory),
        )
        for turn in range(4):
            agent.invoke(
                {"messages": [HumanMessage(f"Which port does service {turn} use?")]},
                {"configurable": {"thread_id": "t"}},
            )
    return {log.stem: log.read_bytes().splitlines(keepends=True) for log in sorted(root.glob("*.jsonl"))}


def _types(lines: dict[str, list[bytes]]) -> Counter[str]:
    return Counter(json.loads(line)["type"] for session in lines.values() for line in session)


def _table(tmp_path: Path) -> ExtractorTable:
    """The built-in extractor table, as a memory builds it."""
    with MemoryFabric.from_path(tmp_path / "table", use_graph=False) as memory:
        return memory.features.extractors


def _project(root: Path, lines: dict[str, list[bytes]], *, one_at_a_time: bool) -> tuple[dict, str]:
    """Derived rows and graph digest after projecting ``lines`` written into a fresh memory at ``root``."""
    root.mkdir()
    with MemoryFabric.from_path(root, durability="batch") as memory:
        for session, session_lines in lines.items():
            if not one_at_a_time:
                (root / f"{session}.jsonl").write_bytes(b"".join(session_lines))
                continue
            pending: list[bytes] = []
            for line in session_lines:  # one append at a time (a multi-event append is one atomic batch)
                pending.append(line)
                marker = json.loads(line).get("batch")
                if marker is not None and marker[0] < marker[1]:  # (position, size), from 1
                    continue
                with open(root / f"{session}.jsonl", "ab") as handle:  # another process's append
                    handle.write(b"".join(pending))
                assert memory.project([session]) == len(pending)
                pending = []
        memory.project()
        digest = memory.projection_digest()
    tables = _tables(root)  # (the graph file's inode and mtime, kept in meta to trust it, differ by nature)
    tables["meta"] = [row for row in tables["meta"] if row[0] != "graph:state"]
    return tables, digest


def test_a_langgraph_memory_projects_alike_one_event_at_a_time_in_one_batch_and_without_the_short_path(
    tmp_path: Path, agent_log: dict[str, list[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    types = _types(agent_log)
    assert all(types[name] >= 4 for name in (*SILENT_TYPES, "transcript.turn")), types
    stepped = _project(tmp_path / "stepped", agent_log, one_at_a_time=True)
    batched = _project(tmp_path / "batched", agent_log, one_at_a_time=False)
    # The long path: every extractor called, every extraction planned in full.
    monkeypatch.setattr(ExtractorTable, "_lookup", lambda table, event_type: (table._find(event_type), False))
    monkeypatch.setattr(planner, "_plans_rows", lambda extraction: True)
    assert not any(_table(tmp_path).produces_nothing(name) for name in SILENT_TYPES)
    stepped_long = _project(tmp_path / "stepped-long", agent_log, one_at_a_time=True)
    batched_long = _project(tmp_path / "batched-long", agent_log, one_at_a_time=False)
    assert stepped[0]["cat_versions"] and stepped == stepped_long and batched == batched_long
    # One event at a time and one batch: the same catalog and graph (the verbatim index lays its segments and
    # term ids out by how the events came, by design; the one-event-path tests hold that part).
    assert stepped[1] == batched[1]
    assert {k: v for k, v in stepped[0].items() if not k.startswith("verbatim_")} == {
        k: v for k, v in batched[0].items() if not k.startswith("verbatim_")
    }


def test_only_extractors_that_never_produce_anything_are_labelled(
    tmp_path: Path, agent_log: dict[str, list[bytes]]
) -> None:
    """The label is checked against the extractors themselves: each labelled one returns an empty extraction for
    the agent's real events and for payloads shaped like every producing type's; the producing types of a turn
    and of the seeds are not labelled and do produce entities."""
    table = _table(tmp_path)
    envelopes = [json.loads(line) for session in agent_log.values() for line in session]
    labelled = {event_type for event_type in {e["type"] for e in envelopes} if table.produces_nothing(event_type)}
    assert labelled == set(SILENT_TYPES)
    payloads = [e["payload"] for e in envelopes] + [
        {},
        {"text": "deploy on friday", "role": "user", "summary": "s", "name": "n", "title": "t", "decision": "d"},
        {"subject": "service 1", "predicate": "port", "object": "8080", "fact": "port 8080", "task_id": "T-1"},
    ]
    silent_patterns = []
    for pattern in table.registered_types():
        event_type = pattern.replace("*", "x")
        function = table.extractor_for(event_type)
        if function is None or not getattr(function, PRODUCES_NOTHING, False):
            assert not table.produces_nothing(event_type), pattern
            continue
        silent_patterns.append(pattern)
        for payload in payloads:
            envelope = {**envelopes[0], "type": event_type, "payload": payload}
            assert function(envelope) == Extraction(), (pattern, payload)
    assert {"checkpoint.*", "metacognition.*"} <= set(silent_patterns)
    for envelope in envelopes:
        if envelope["type"] in ("transcript.turn", "fact.asserted"):
            assert not table.produces_nothing(envelope["type"])
            assert table.extract(envelope).entities, envelope["type"]
