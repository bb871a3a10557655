"""A small memory for the inspector tests: two workspaces, superseded and invalidated facts, a causal edge, a
consolidation candidate awaiting review, and a payload carrying markup that must render as text."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from zaxy_agents.fabric import MemoryFabric

SHOP = "claude-code.shop-1a2b3c4d"  # workspace shop-1a2b3c4d
OTHER = "codex.billing-9f8e7d6c"  # another workspace
SCRIPT_TITLE = 'ship <script>document.title="pwned"</script><img src=x onerror=alert(1)>'
OTHER_SECRET = "billing-only-words-zq7"


UNKNOWN_QUESTION = "Which region hosts the prod replica?"
BELIEF_CLAIM = "Staging is no longer a deploy target"


@dataclass
class Seeded:
    path: Path
    shop: str
    other: str
    first_fact: str  # citation of the superseded version
    current_fact: str  # citation of the current version
    candidate_id: str
    explained_entity: str


def seed_memory(path: Path) -> Seeded:
    with MemoryFabric.from_path(path) as fabric:
        first = fabric.append(
            SHOP,
            "fact.asserted",
            {"subject": "deploy", "predicate": "target", "object": "staging", "fact": "the deploy target is staging"},
        )
        current = fabric.append(
            SHOP,
            "fact.asserted",
            {"subject": "deploy", "predicate": "target", "object": "prod", "fact": "the deploy target is prod"},
        )
        fabric.append(SHOP, "fact.asserted", {"key": "db engine", "fact": "the database is postgres 15"})
        fabric.invalidate(SHOP, "db engine", "fact", reason="we moved to postgres 16")
        fabric.append(SHOP, "task.created", {"task_id": "T-1", "title": SCRIPT_TITLE})
        run = fabric.append(SHOP, "command.completed", {"command": "pytest -q", "exit_code": 1, "output": "2 failed"})
        fabric.append(SHOP, "task.updated", {"task_id": "T-1", "status": "in_progress", "description": "fixing tests"})
        chain = [("flaky fixture", "problem", 0.8), ("red build", "outcome", 0.6), ("release delay", "outcome", 0)]
        for (cause, cause_type, confidence), (effect, effect_type, _) in pairwise(chain):
            fabric.explain_outcome(
                SHOP,
                cause={"name": cause, "entity_type": cause_type},
                effect={"name": effect, "entity_type": effect_type},
                relation="caused",
                confidence=confidence,
                evidence=run.citation,
            )
        candidate = fabric.consolidation_candidate(
            SHOP,
            candidate_type="claim",
            title="Deploys go to prod",
            summary="The deploy target moved from staging to prod.",
            source_events=[first.citation, current.citation],
            confidence=0.7,
        )
        fabric.record_known_unknown(
            SHOP,
            question=UNKNOWN_QUESTION,
            reason="no event names the replica's region",
            source_events=[current.citation],
        )
        fabric.propose_belief_update(
            SHOP, claim=BELIEF_CLAIM, rationale="the deploy moved to prod", confidence=0.6, citations=[current.citation]
        )
        fabric.append(OTHER, "fact.asserted", {"key": "invoice rule", "fact": f"invoices are net 30 {OTHER_SECRET}"})
        fabric.append(OTHER, "task.created", {"task_id": "B-1", "title": "send invoices"})
    return Seeded(path, SHOP, OTHER, first.citation, current.citation, candidate["candidate_id"], "red build")


TAMPERED = "notes"


def add_tampered_session(path: Path) -> str:
    """A third session, outside any workspace, whose event 2 was edited by hand after it was written."""
    with MemoryFabric.from_path(path) as fabric:
        for index in range(3):
            fabric.append(TAMPERED, "note.recorded", {"text": f"note number {index}"})
    log = path / f"{TAMPERED}.jsonl"
    log.write_bytes(log.read_bytes().replace(b"note number 1", b"note number 9", 1))
    return TAMPERED
