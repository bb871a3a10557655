"""The cue-overlap lane of seed 004 (encoding specificity): does blending the caller's context cues with the cues
recorded on append find the right memory, and does it ever push out one the question's words point at?

One scratch memory, built deterministically: ``workspaces`` repositories share the same topics (services), and
each records how to deploy each service with a command of its own, cues ``{workspace, tool}`` on the note. Three
question sets, each asked with the caller's cues and without any, under every retrieval profile:

* ``context_only``: "how do I deploy the <service> service?" from one workspace: the notes differ only in the
  workspace they were written in, so only the cue can tell them apart (words alone tie: recall@1 ~ 1/workspaces);
* ``uncued``: "who owns the <service> service?": the answer was recorded without cues; the caller's workspace cue
  boosts other notes about the service, which must not push the answer out;
* ``misleading``: "when does the <w> release train leave?" asked from *another* workspace: the words name the
  answer's workspace, the cue names the wrong one; the cue must not override the words.

Reports recall@1 and recall@5 per set with and without cues, per profile (``plain`` first; cues are blended only
where the profile's ``cue_weight`` > 0; while the default profile has none, a ``<default>+cues`` column shows
the candidate a default change would ship). ``cues_help`` says whether cues lift ``context_only``
without costing ``uncued`` or ``misleading`` any recall@1 (``worst_loss@1``: the largest such loss). Passes when
the default profile loses no recall with cues (what a caller passing cues gets without choosing a profile).
"""

from __future__ import annotations

import random
import time
from dataclasses import replace
from typing import Any

from zaxy_agents.fabric import MemoryFabric

from .checkout_lanes import lane_report, scratch_fabric
from .ranking_fixtures import PROFILES_COMPARED, Question, names_for, recall_at

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday")
TOOLS = ("make", "just", "tox", "nox", "bazel", "cargo")
COMMAND_WORDS = ("ship", "launch", "release", "roll", "push", "promote", "publish", "cut", "land", "send")


def cue_memory(fabric: MemoryFabric, workspaces: int, services: int, *, session: str = "lane-cues", seed: int = 29):
    """The scratch memory and its three question sets."""
    rng = random.Random(seed)
    spaces = [f"repo-{name}" for name in names_for(workspaces)]
    topics = names_for(workspaces + services)[workspaces:]
    drafts: list[dict[str, Any]] = []
    where: list[tuple[str, str, str]] = []  # (set, workspace, topic) per draft
    for index, space in enumerate(spaces):
        tool = TOOLS[index % len(TOOLS)]
        cues = {"workspace": space, "tool": tool}
        for topic in topics:
            command = f"{tool} {rng.choice(COMMAND_WORDS)}-{topic}-{rng.randint(10, 99)}"
            text = f"To deploy the {topic} service run {command}"
            drafts.append({"type": "note.recorded", "payload": {"text": text, "cues": cues}})
            where.append(("context_only", space, topic))
        day = rng.choice(DAYS)
        drafts.append(
            {"type": "note.recorded", "payload": {"text": f"The {space} release train leaves on {day}", "cues": cues}}
        )
        where.append(("misleading", space, ""))
    for topic in topics:
        owner = {"key": f"{topic} owner", "fact": f"The {topic} service is owned by team {rng.randint(1, 40)}"}
        drafts.append({"type": "fact.asserted", "payload": owner})
        where.append(("uncued", "", topic))
    events = fabric.append_many(session, drafts)
    cited = {key: event.citation for key, event in zip(where, events, strict=True)}
    sets: dict[str, list[Question]] = {"context_only": [], "uncued": [], "misleading": []}
    for index, space in enumerate(spaces):
        here = {"workspace": space}
        for topic in topics[index % 2 :: 2]:  # half the topics per workspace keeps the lane small
            gold = [cited[("context_only", space, topic)]]
            sets["context_only"].append(Question(f"How do I deploy the {topic} service?", gold, cues=here))
            owner = [cited[("uncued", "", topic)]]
            sets["uncued"].append(Question(f"Who owns the {topic} service?", owner, cues=here))
        other = spaces[(index + 1) % len(spaces)]
        gold = [cited[("misleading", other, "")]]
        sets["misleading"].append(Question(f"When does the {other} release train leave?", gold, cues=here))
    fabric.project([session])
    return session, sets


def run_cue_lane(workspaces: int = 6, services: int = 10) -> dict[str, Any]:
    from zaxy_agents.retrieval.ranking import DEFAULT_RETRIEVAL_PROFILE, RETRIEVAL_PROFILES

    started = time.perf_counter()
    names = list(PROFILES_COMPARED)
    candidate = None
    if not RETRIEVAL_PROFILES[DEFAULT_RETRIEVAL_PROFILE].cue_weight:  # the change a lane win would ship
        candidate = replace(
            RETRIEVAL_PROFILES[DEFAULT_RETRIEVAL_PROFILE],
            name=f"{DEFAULT_RETRIEVAL_PROFILE}+cues",
            cue_weight=RETRIEVAL_PROFILES["full"].cue_weight,
        )
        names.append(candidate.name)
        RETRIEVAL_PROFILES[candidate.name] = candidate  # for the lane's run only (the fabric takes names)
    try:
        profiles, sets = _measure(workspaces, services, names)
    finally:
        if candidate is not None:
            del RETRIEVAL_PROFILES[candidate.name]
    default = profiles[DEFAULT_RETRIEVAL_PROFILE]  # what a caller passing cues gets without choosing a profile
    passed = all(
        default[f"{kind}.recall@{k}_with_cues"] >= default[f"{kind}.recall@{k}_without_cues"]
        for kind in sets
        for k in (1, 5)
    )
    verdicts = {}
    for name, figures in profiles.items():
        lift = figures["context_only.recall@1_with_cues"] - figures["context_only.recall@1_without_cues"]
        kept = all(
            figures[f"{kind}.recall@1_with_cues"] >= figures[f"{kind}.recall@1_without_cues"]
            for kind in ("uncued", "misleading")
        )
        harm = max(
            figures[f"{kind}.recall@1_without_cues"] - figures[f"{kind}.recall@1_with_cues"]
            for kind in ("uncued", "misleading")
        )
        verdicts[name] = {
            "context_only_lift@1": round(lift, 4),
            "worst_loss@1": round(max(harm, 0.0), 4),
            "cues_help": lift > 0 and kept,
        }
        figures.update(verdicts[name])
    return lane_report(
        "cues",
        profiles,
        passed,
        started,
        workspaces=workspaces,
        services=services,
        questions={kind: len(questions) for kind, questions in sets.items()},
    )


def _measure(workspaces: int, services: int, names: list[str]) -> tuple[dict[str, Any], dict[str, list[Question]]]:
    with scratch_fabric("cues") as fabric:
        session, sets = cue_memory(fabric, workspaces, services)
        profiles = {
            name: {
                f"{kind}.{metric}_{side}": value
                for kind, questions in sets.items()
                for side, use in (("with_cues", True), ("without_cues", False))
                for metric, value in _recall(fabric, session, questions, name, use).items()
            }
            for name in names
        }
    return profiles, sets


def _recall(
    fabric: MemoryFabric, session: str, questions: list[Question], policy: str, use_cues: bool
) -> dict[str, float]:
    at1 = at5 = 0.0
    for question in questions:
        hits = fabric.query(
            question.text,
            sessions=[session],
            k=5,
            retrieval_profile=policy,
            cues=question.cues if use_cues else None,
        ).hits
        citations = [hit.citation for hit in hits]
        at1 += recall_at(citations, question.gold, 1)
        at5 += recall_at(citations, question.gold, 5)
    return {"recall@1": round(at1 / len(questions), 4), "recall@5": round(at5 / len(questions), 4)}
