"""Deterministic fixtures for the ranking lanes (budget, cache, forgetting, FoK, PPR, gate).

Small, seeded, offline: every lane builds them in a scratch Eventloom through the real engine and asks the same
questions under each retrieval profile, so the profiles are compared on identical memory in one run. Names are
drawn from a fixed word list so questions and events share only the words a real question would.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from zaxy_agents.fabric import MemoryFabric

PROFILES_COMPARED = ("plain", "balanced", "full")
NAMES = (
    "atlas",
    "borealis",
    "cinder",
    "dynamo",
    "ember",
    "falcon",
    "glacier",
    "harbor",
    "iris",
    "juniper",
    "kestrel",
    "lumen",
    "meridian",
    "nimbus",
    "onyx",
    "pioneer",
    "quartz",
    "raven",
    "sierra",
    "tundra",
    "umber",
    "vesper",
    "willow",
    "xenon",
    "yonder",
    "zephyr",
    "aurora",
    "basalt",
    "cobalt",
    "delta",
    "fennel",
    "fjord",
    "granite",
    "helix",
    "indigo",
    "jasper",
    "krypton",
    "lotus",
    "mistral",
    "nova",
    "obsidian",
    "pulsar",
)
UNKNOWN_NAMES = ("halcyon", "zircon", "tamarind", "quokka", "marigold", "sargasso", "vermilion", "wolfram")
HOSTS = ("db-east", "db-west", "cache-1", "cache-2", "queue-a", "queue-b", "edge-3", "edge-4")


def names_for(count: int) -> list[str]:
    """``count`` distinct names: the word list, then the words again with a letter suffix (``atlasb``)."""
    return [NAMES[i % len(NAMES)] + ("" if i < len(NAMES) else "bcdefgh"[i // len(NAMES) - 1]) for i in range(count)]


@dataclass
class Question:
    text: str
    gold: list[str]  # citations that answer it ([] for an unanswerable question)
    kind: str = "single_hop"
    cues: dict[str, str] = field(default_factory=dict)


@dataclass
class ServiceMemory:
    """Services with a superseded and a current port, a decision and a note each; one question per service."""

    session: str
    questions: list[Question]
    unanswerable: list[Question]
    current: dict[str, str]  # service -> citation of its current port fact
    overview: list[Question] = field(default_factory=list)  # two gold citations each (port and storage decision)


def service_memory(fabric: MemoryFabric, services: int = 24, *, session: str = "lane-services", seed: int = 17):
    rng = random.Random(seed)
    names = names_for(services)
    drafts: list[dict[str, Any]] = []
    for name in names:
        old, new = rng.sample(range(1000, 9999), 2)
        drafts += [
            _fact(f"{name} port", f"service {name}", "port", str(old)),
            _fact(f"{name} port", f"service {name}", "port", str(new)),
            {
                "type": "decision.recorded",
                "payload": {
                    "topic": f"{name} storage",
                    "decision": f"{name} keeps its data on {rng.choice(HOSTS)}",
                    "rationale": "latency measured in the load test",
                },
            },
            {"type": "note.recorded", "payload": {"text": f"Reviewed the {name} deployment checklist with the team"}},
        ]
    events = fabric.append_many(session, drafts)
    current = {name: events[index * 4 + 1].citation for index, name in enumerate(names)}
    decisions = {name: events[index * 4 + 2].citation for index, name in enumerate(names)}
    questions = [Question(f"What port does service {name} use?", [current[name]]) for name in names]
    overview = [
        Question(
            f"What do we know about the {name} service and its storage?", [current[name], decisions[name]], "overview"
        )
        for name in names[::2]
    ]
    unanswerable = [Question(f"What port does service {name} use?", [], kind="unanswerable") for name in UNKNOWN_NAMES]
    unanswerable += [
        Question(f"Who approved the {name} budget increase?", [], kind="unanswerable") for name in UNKNOWN_NAMES[:4]
    ]
    fabric.project([session])
    return ServiceMemory(session, questions, unanswerable, current, overview)


def _fact(key: str, subject: str, predicate: str, value: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "fact.asserted",
        "payload": {"key": key, "subject": subject, "predicate": predicate, "object": value, **extra},
    }


@dataclass
class GraphMemory:
    session: str
    multi_hop: list[Question]
    single_hop: list[Question]


def graph_memory(fabric: MemoryFabric, projects: int = 8, *, session: str = "lane-graph", seed: int = 23):
    """Projects that depend on components (inferred edges), components with facts of their own.

    Multi-hop: "What does project P rely on?" -- the answers are facts about P's components, which share no
    word with the question; only the graph connects them. Single-hop: "Where does component C run?".
    """
    rng = random.Random(seed)
    names = iter(names_for(4 * projects))
    drafts: list[dict[str, Any]] = []
    plan: list[tuple[str, list[str]]] = []
    for _ in range(projects):
        project = next(names)
        components = [next(names) + "-svc" for _ in range(3)]
        plan.append((project, components))
        for component in components:
            drafts.append(
                {
                    "type": "inference.edge.generated",
                    "payload": {
                        "source": {"name": f"project {project}", "entity_type": "topic"},
                        "target": {"name": component, "entity_type": "topic"},
                        "relation_type": "depends_on",
                        "confidence": 0.9,
                        "inference_method": "dependency manifest",
                    },
                }
            )
            host = rng.choice(HOSTS)
            drafts.append(
                _fact(
                    f"{component} host",
                    component,
                    "runs on",
                    host,
                    fact=f"{component} runs on {host} behind the gateway",
                )
            )
        drafts.append(
            {"type": "note.recorded", "payload": {"text": f"Kick-off notes for project {project}: scope agreed"}}
        )
    events = fabric.append_many(session, drafts)
    by_component = {event.payload["subject"]: event.citation for event in events if event.type == "fact.asserted"}
    multi = [
        Question(f"What does project {project} rely on?", [by_component[c] for c in components], kind="multi_hop")
        for project, components in plan
    ]
    single = [
        Question(f"Where does {component} run?", [by_component[component]])
        for _, components in plan
        for component in components[:1]
    ]
    fabric.project([session])
    return GraphMemory(session, multi, single)


def recall_at(citations: list[str], gold: list[str], k: int) -> float:
    if not gold:
        return 0.0
    top = set(citations[:k])
    return sum(1 for citation in gold if citation in top) / len(gold)
