"""Logs in this project's earlier payload shapes and in the seeds' shapes project to the same graph (issue 16).

Two logs record the same history: one written the way this project wrote it before speaking the seeds'
contract (``relation`` / ``evidence: {seq, hash}`` / ``entity`` / ``signal`` / ``decision`` / ``task_id``), the
other in the seeds' shapes (``relation_type`` / ``evidence: {source_event_seq, source_event_hash, reason}`` /
``entity_name`` / ``feedback`` / ``status`` / ``taskId``). Events are appended raw (no producers, no contracts),
as they sit in existing logs; the projections, with hashes, times and ids normalised, must be identical.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from tests.projection.graph_view import graph_tables
from zaxy_agents.consolidation.candidates import candidate_payload
from zaxy_agents.fabric import MemoryFabric

SESSION = "s"
SHAPES = ("earlier", "seed")


def _write(memory: MemoryFabric, shape: str) -> None:
    log = memory.log
    seed = shape == "seed"
    task = {"taskId": "t-1"} if seed else {"task_id": "t-1"}
    failure = log.append(SESSION, "command.completed", {"command": "pytest", "exit_code": 1, **task})
    log.append(SESSION, "fact.asserted", {"key": "ci runner", "fact": "CI runs on m5"})
    ends = {
        "cause": {"name": "ci runner", "entity_type": "fact"},
        "effect": {"name": "pytest #1", "entity_type": "command_run"},
    }
    if seed:
        evidence = {"source_event_seq": failure.seq, "source_event_hash": failure.hash, "reason": "m5 was slow"}
        explained = log.append(
            SESSION, "outcome.explained", {**ends, "relation_type": "caused", "confidence": 0.9, "evidence": evidence}
        )
    else:
        evidence = {"seq": failure.seq, "hash": failure.hash, "session": SESSION}
        explained = log.append(
            SESSION,
            "outcome.explained",
            {**ends, "relation": "caused", "confidence": 0.9, "evidence": evidence, "explanation": "m5 was slow"},
        )
    log.append(
        SESSION,
        "causal.edge.generated",
        {
            "source": ends["cause"],
            "target": ends["effect"],
            "relation_type": "caused",
            "graph_relation_type": "causal_caused",
            "confidence": 0.9,
            "causal_method": "outcome_explained_v1",
            "review_status": "proposed",
            "authority_status": "non_authoritative",
            "evidence": evidence,
            "explained_by": {"seq": explained.seq, "hash": explained.hash, "session": SESSION},
            "source_event_seq": explained.seq,
        },
    )
    target = {"entity_name": "ci runner"} if seed else {"entity": "ci runner"}
    signal = {"feedback": "used"} if seed else {"signal": "used"}
    log.append(SESSION, "memory.reinforced", {**target, "entity_type": "fact", **signal, "weight": 1.0})
    created = candidate_payload(
        candidate_type="episode",
        title="Flaky runner",
        summary="pytest failed on m5.",
        sources=[failure],
        confidence=0.7,
        method="manual",
        purpose="general",
    )
    candidate = log.append(SESSION, "consolidation.candidate.created", created)
    disposition = {"status": "accepted"} if seed else {"decision": "accepted"}
    log.append(
        SESSION,
        "consolidation.candidate.reviewed",
        {
            "candidate_id": created["candidate_id"],
            "candidate": {"seq": candidate.seq, "hash": candidate.hash, "session": SESSION},
            "candidate_type": "episode",
            "title": created["title"],
            "summary": created["summary"],
            "source_events": created["source_events"],
            **disposition,
            "rationale": "matches the log",
            "authority_status": "non_authoritative",
            "revokes_acceptance": False,
            "conflicts_with": [],
        },
    )
    log.append(SESSION, "memory.invalidated", {**target, "entity_type": "fact", "reason": "moved to m6"})


def _normalised(tables: dict[str, list[dict[str, Any]]]) -> dict[str, Counter[str]]:
    """Each table as a multiset of rows, with what differs between two logs of one history blanked out."""
    out: dict[str, Counter[str]] = {}
    for table, rows in tables.items():
        texts = []
        for row in rows:
            text = json.dumps(row, sort_keys=True)
            text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z", "<time>", text)
            text = re.sub(r"\b[0-9a-f]{64}\b", "<hash>", text)
            text = re.sub(r"cand_[0-9a-f]{24}", "<candidate>", text)
            text = re.sub(r"\b[0-9a-f]{24}\b", "<id>", text)
            texts.append(text)
        out[table] = Counter(texts)
    return out


def test_an_earlier_shape_log_projects_like_a_seed_shape_log(tmp_path: Path) -> None:
    projections = {}
    for shape in SHAPES:
        with MemoryFabric.from_path(tmp_path / shape) as memory:
            _write(memory, shape)
            tables = graph_tables(memory)
            assert not tables.get("ExtractionFailure"), tables.get("ExtractionFailure")
            projections[shape] = _normalised(tables)
    earlier, seed = projections["earlier"], projections["seed"]
    assert sorted(earlier) == sorted(seed)
    for table in earlier:
        assert earlier[table] == seed[table], table
    # and the history itself is there: the causal edge, the reinforcement, the review, the closed fact
    relations = [json.loads(row) for row in earlier["RELATES"]]
    assert {r["relation_type"] for r in relations} >= {
        "causal_caused",
        "observed_command",
        "reviewed_consolidation_candidate",
    }
    assert sum(earlier["Feedback"].values()) == 1
    facts = [json.loads(row) for row in earlier["Entity"] if '"entity_type": "fact"' in row]
    assert [f["invalidated"] for f in facts] == [True]
