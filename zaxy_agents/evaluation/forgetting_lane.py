"""The forgetting lane of seed 004: attenuation by salience, never a recall loss for explicit queries.

Fixture (deterministic): services with a current fact each (appended now), an *old* fact each (``valid_from``
in 2024, never used since), and among the old memories some that are exempt from the floor -- reinforced by
``memory_feedback``, pinned (``memory.pinned``), authority-bearing (decisions) -- plus imported conversation
turns dated 2023 (history brought in from elsewhere: old by the clock, never used here).

Per profile:

- ``explicit_recall@10``: ``memory_query`` for each old memory finds it (must equal ``plain``: zero loss);
- ``attenuated_labelled``: share of the unused old facts labelled ``attenuated`` by the query;
- ``exempt_kept``: share of reinforced, pinned and authority-bearing old memories *not* attenuated (must be 1.0);
- ``checkout_recall_old`` / ``checkout_recall_imported``: what default ranking (checkout) still shows of the old
  facts and of the imported turns -- the cost of the floor;
- ``checkout_recall_current``: the current facts in checkout (must not fall below ``plain``);
- ``restored``: after ``memory.restored`` on each attenuated fact, the share that checkout shows again (1.0).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval.ranking import RETRIEVAL_PROFILES

from .checkout_lanes import lane_report, scratch_fabric
from .ranking_fixtures import PROFILES_COMPARED, Question, names_for

SESSION = "lane-forgetting"
OLD = "2024-01-15T09:00:00Z"
IMPORTED = "2023-05-0{day}T10:00:00Z"


def run_forgetting_lane(services: int = 16) -> dict[str, Any]:
    started = time.perf_counter()
    profiles: dict[str, Any] = {}
    with scratch_fabric("forgetting") as fabric:
        probes = _fixture(fabric, services)
        for profile in PROFILES_COMPARED:
            profiles[profile] = _measure(fabric, probes, profile)
        for profile in PROFILES_COMPARED:  # restoring changes memory: measured after every read above
            if RETRIEVAL_PROFILES[profile].attenuation_floor:
                profiles[profile]["restored"] = _restore(fabric, probes, profile)
    plain = profiles["plain"]
    passed = all(
        figures["explicit_recall@10"] >= plain["explicit_recall@10"]
        and figures["exempt_kept"] == 1.0
        and figures["checkout_recall_current"] >= plain["checkout_recall_current"]
        and figures.get("restored", 1.0) == 1.0
        for figures in profiles.values()
    )
    return lane_report("forgetting", profiles, passed, started, services=services)


def _fixture(fabric: MemoryFabric, services: int) -> dict[str, list[Question]]:
    names = names_for(services)
    drafts: list[dict[str, Any]] = []
    kinds: list[str] = []
    for index, name in enumerate(names):
        drafts.append(
            {
                "type": "fact.asserted",
                "payload": {
                    "key": f"{name} endpoint",
                    "fact": f"{name} serves on https://{name}.internal:{8000 + index}",
                },
            }
        )
        kinds.append("current")
        old = {
            "key": f"{name} archive",
            "fact": f"{name} archives nightly to vault bucket {name}-cold-{index}",
            "valid_from": OLD,
        }
        drafts.append({"type": "fact.asserted", "payload": old})
        kinds.append(("reinforced", "pinned", "old", "old")[index % 4])
        if index % 4 == 3:
            drafts.append(
                {
                    "type": "decision.recorded",
                    "payload": {
                        "topic": f"{name} retention",
                        "decision": f"{name} retention stays at ninety days for audit",
                        "valid_from": OLD,
                    },
                }
            )
            kinds.append("authority")
        drafts.append(
            {
                "type": "transcript.turn",
                "payload": {
                    "role": "user",
                    "speaker": "Dana",
                    "text": f"Back then the {name} team adopted a tabletop exercise ritual",
                    "occurred_at": IMPORTED.format(day=1 + index % 9),
                },
            }
        )
        kinds.append("imported")
    events = fabric.append_many(SESSION, drafts)
    probes: dict[str, list[Question]] = {
        kind: [] for kind in ("current", "old", "reinforced", "pinned", "authority", "imported")
    }
    for event, kind in zip(events, kinds, strict=True):
        name = event.payload.get("key") or event.payload.get("topic") or ""
        if kind == "reinforced":
            fabric.feedback(SESSION, name, "fact", "used")
        elif kind == "pinned":
            fabric.append(SESSION, "memory.pinned", {"entity_name": name, "entity_type": "fact", "reason": "audit"})
        probes[kind].append(
            Question(_question(event.type, event.payload), [event.citation], kind=kind, cues={"name": name})
        )
    fabric.project([SESSION])
    return probes


def _question(event_type: str, payload: dict[str, Any]) -> str:
    if event_type == "decision.recorded":
        return f"What did we decide about {payload['topic']}?"
    if event_type == "transcript.turn":
        return "Which team adopted a tabletop exercise ritual? " + payload["text"].split()[3]
    return f"Where is the {payload['key']}?"


def _measure(fabric: MemoryFabric, probes: dict[str, list[Question]], profile: str) -> dict[str, Any]:
    explicit: list[float] = []
    labelled: list[float] = []
    exempt: list[float] = []
    for kind in ("old", "reinforced", "pinned", "authority", "imported"):
        for question in probes[kind]:
            hits = fabric.query(question.text, sessions=[SESSION], k=10, retrieval_profile=profile).hits
            found = [hit for hit in hits if hit.citation in question.gold]
            explicit.append(float(bool(found)))
            attenuated = bool(found) and found[0].attenuated
            if kind == "old":
                labelled.append(float(attenuated))
            elif kind != "imported":
                exempt.append(float(not attenuated))
    return {
        "explicit_recall@10": _mean(explicit),
        "attenuated_labelled": _mean(labelled),
        "exempt_kept": _mean(exempt),
        "checkout_recall_old": _checkout_recall(fabric, probes["old"], profile),
        "checkout_recall_imported": _checkout_recall(fabric, probes["imported"], profile),
        "checkout_recall_current": _checkout_recall(fabric, probes["current"], profile),
    }


def _checkout_recall(fabric: MemoryFabric, questions: list[Question], profile: str) -> float:
    shown = []
    for question in questions:
        packet = fabric.checkout(question.text, session=SESSION, max_tokens=2048, retrieval_profile=profile)
        shown.append(float(question.gold[0] in {item.citation for item in packet.provenance}))
    return _mean(shown)


def _restore(fabric: MemoryFabric, probes: dict[str, list[Question]], profile: str) -> float:
    for question in probes["old"]:
        fabric.append(SESSION, "memory.restored", {"entity_name": question.cues["name"], "entity_type": "fact"})
    return _checkout_recall(fabric, probes["old"], profile)


def _mean(values: list[float]) -> float:
    return round(statistics.fmean(values), 4) if values else 0.0
