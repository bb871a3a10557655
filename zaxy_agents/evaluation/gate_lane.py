"""The gate lane of seed 004: the share of appends the encoding gate tags redundant, and recall unchanged with
the gate on.

Two identical memories are built (the service fixture), then the same stream of new appends goes into both:
duplicates of existing notes (labelled redundant), restatements of existing decisions in other words (labelled
reinforcing) and new facts (labelled novel). One memory appends through the gate (``encoding_gate`` tag in the
payload), the other without. Reports, per retrieval profile: the share tagged redundant, the tag accuracy
against the labels, and recall@5 of the fixture's questions with the gate on and off. Passes when recall is
unchanged under every profile and no novel append is tagged redundant (a false negative would hide news).
The stream also restates some current facts under another identity with another value: the gate should flag
them (``interferes_with``) and propose a belief update for each; ``interference`` counts those and false alarms.

Folding (seed 004: redundant events are reinforcement, not new ranked entries): for each exact duplicate, a
checkout for its text in both memories counts the evidence items that repeat another item of the same packet
(``duplicate_evidence_gate_on`` / ``_off``: crowding), and ``folded_reinforced`` counts the originals whose
salience reinforcement grew in the gated memory (shown in ``memory_query``'s per-hit salience).
"""

from __future__ import annotations

import time
from contextlib import ExitStack
from typing import Any

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.salience.gate import TAGS

from .checkout_lanes import lane_report, scratch_fabric
from .ranking_fixtures import PROFILES_COMPARED, names_for, recall_at, service_memory


def run_gate_lane(services: int = 16) -> dict[str, Any]:
    started = time.perf_counter()
    with ExitStack() as stack:
        gated, ungated = (stack.enter_context(scratch_fabric(f"gate-{side}")) for side in ("on", "off"))
        memories = [service_memory(fabric, services) for fabric in (gated, ungated)]
        stream = _stream(services)
        tags = []
        interference = {"expected": 0, "flagged": 0, "false_alarms": 0}
        for event_type, payload, label in stream:
            event = gated.append_gated(memories[0].session, event_type, payload)
            gate = event.payload["encoding_gate"]
            flagged = "interferes_with" in gate
            interference["expected"] += label == "interfering"
            interference["flagged"] += flagged and label == "interfering"
            interference["false_alarms"] += flagged and label != "interfering"
            tags.append((gate["tag"], "novel" if label == "interfering" else label))
            ungated.append(memories[1].session, event_type, payload)
        interference["proposals"] = gated.belief_proposals(memories[0].session)["proposal_count"]
        duplicates = [payload["text"] for _, payload, label in stream if label == "redundant"]
        profiles = {
            profile: {
                "recall@5_gate_on": _recall(gated, memories[0], profile),
                "recall@5_gate_off": _recall(ungated, memories[1], profile),
                "duplicate_evidence_gate_on": _crowding(gated, memories[0].session, duplicates, profile),
                "duplicate_evidence_gate_off": _crowding(ungated, memories[1].session, duplicates, profile),
            }
            for profile in PROFILES_COMPARED
        }
        reinforced = _reinforced(gated, memories[0].session, duplicates)
    confusion = {label: {tag: 0 for tag in TAGS} for label in TAGS}
    for tag, label in tags:
        confusion[label][tag] += 1
    summary = {
        "appends": len(tags),
        "redundant_share": round(sum(1 for tag, _ in tags if tag == "redundant") / len(tags), 4),
        "tag_accuracy": round(sum(1 for tag, label in tags if tag == label) / len(tags), 4),
        "novel_tagged_redundant": confusion["novel"]["redundant"],
        "exact_duplicates": len(duplicates),
        "folded_reinforced": reinforced,
        "confusion": confusion,
        "interference": interference,
    }
    for figures in profiles.values():
        figures.update(summary)
    passed = (
        summary["novel_tagged_redundant"] == 0
        and reinforced == len(duplicates)
        and all(f["duplicate_evidence_gate_on"] <= f["duplicate_evidence_gate_off"] for f in profiles.values())
        and interference["false_alarms"] == 0
        and all(figures["recall@5_gate_on"] == figures["recall@5_gate_off"] for figures in profiles.values())
    )
    return lane_report("gate", profiles, passed, started, services=services)


def _stream(services: int) -> list[tuple[str, dict[str, Any], str]]:
    stream: list[tuple[str, dict[str, Any], str]] = []
    for index, name in enumerate(names_for(services)):
        if index % 3 == 0:
            note = {"text": f"Reviewed the {name} deployment checklist with the team"}
            stream.append(("note.recorded", note, "redundant"))
        elif index % 3 == 1:
            restated = {"text": f"Reminder: the {name} data stays where the load test latency put it"}
            stream.append(("note.recorded", restated, "novel"))
        else:
            fact = {"key": f"{name} owner", "fact": f"The {name} service is owned by team {index}"}
            stream.append(("fact.asserted", fact, "novel"))
        if index % 5 == 2:  # a second identity restating a current fact with another value: interference
            clash = {"key": f"{name} listener", "fact": f"service {name} port {20000 + index}"}
            stream.append(("fact.asserted", clash, "interfering"))
        if index % 4 == 0:
            again = {"text": f"The {name} deployment checklist review went well and the team signed off"}
            stream.append(("note.recorded", again, "reinforcing"))
    return stream


def _recall(fabric: MemoryFabric, memory: Any, profile: str) -> float:
    total = 0.0
    for question in [*memory.questions, *memory.overview]:
        hits = fabric.query(question.text, sessions=[memory.session], k=5, retrieval_profile=profile).hits
        total += recall_at([hit.citation for hit in hits], question.gold, 5)
    return round(total / (len(memory.questions) + len(memory.overview)), 4)


def _crowding(fabric: MemoryFabric, session: str, texts: list[str], profile: str) -> int:
    """Evidence items that repeat another item of the same packet, summed over checkouts for ``texts``."""
    repeats = 0
    for text in texts:
        packet = fabric.checkout(text, session=session, max_tokens=1200, retrieval_profile=profile)
        seen = [" ".join(item.text.lower().split()) for item in packet.evidence]
        repeats += len(seen) - len(set(seen))
    return repeats


def _reinforced(fabric: MemoryFabric, session: str, texts: list[str]) -> int:
    """How many duplicated memories show reinforcement > 1 in their salience (the folded duplicate's signal)."""
    count = 0
    for text in texts:
        hits = fabric.query(text, sessions=[session], k=1, retrieval_profile="full").hits
        salience = hits[0].salience if hits else None
        count += bool(salience and salience.get("reinforcement", 1.0) > 1.0)
    return count
