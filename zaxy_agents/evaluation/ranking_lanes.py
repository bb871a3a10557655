"""The ranking measurement lanes of seed 004: ``fok`` (calibration) and ``ppr`` (graph-walk lift), ``plain``
beside every other retrieval profile in the same run.

- **fok**: ``memory_feeling_of_knowing`` predictions on a labelled set (questions about services in memory, and
  about services never mentioned) scored against what a checkout under each profile actually returned (the gold
  citation in the packed prompt). Brier score of the verdict (``likely`` 0.9, ``possible`` 0.5, ``unlikely``
  0.1) and of the raw score, against a base-rate predictor (the outcome rate of the same set, an in-sample
  baseline that favours it). Must beat the base rate to ship; passes when it does under every profile.
- **ppr**: Recall@5 of ``memory_query`` on a graph-shaped set (multi-hop: "What does project P rely on?",
  answered only by facts about P's components, linked by inferred edges; single-hop: "Where does component C
  run?") and, with ``locomo=PATH``, on LoCoMo categories. Reports the lift of each profile over ``plain``;
  passes when no profile loses single-hop recall.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval.ranking import RankingPolicy

from .checkout_lanes import lane_report, scratch_fabric
from .ranking_fixtures import PROFILES_COMPARED, Question, graph_memory, recall_at, service_memory

VERDICT_PROBABILITY = {"likely": 0.9, "possible": 0.5, "unlikely": 0.1}
PPR_K = 5


def run_fok_lane(services: int = 16) -> dict[str, Any]:
    started = time.perf_counter()
    profiles: dict[str, Any] = {}
    with scratch_fabric("fok") as fabric:
        memory = service_memory(fabric, services)
        labelled = [*memory.questions, *memory.unanswerable]
        predictions = [fabric.feeling_of_knowing(q.text, session=memory.session, record=False) for q in labelled]
        for profile in PROFILES_COMPARED:
            outcomes = [_outcome(fabric, memory.session, question, profile) for question in labelled]
            base_rate = statistics.fmean(outcomes)
            verdict_brier = _brier([VERDICT_PROBABILITY[p["verdict"]] for p in predictions], outcomes)
            score_brier = _brier([float(p["score"]) for p in predictions], outcomes)
            base_brier = _brier([base_rate] * len(outcomes), outcomes)
            profiles[profile] = {
                "questions": len(labelled),
                "outcome_rate": round(base_rate, 4),
                "brier_verdict": round(verdict_brier, 4),
                "brier_score": round(score_brier, 4),
                "brier_base_rate": round(base_brier, 4),
                "beats_base_rate": verdict_brier < base_brier,
                "verdicts": {v: sum(1 for p in predictions if p["verdict"] == v) for v in VERDICT_PROBABILITY},
            }
    passed = all(result["beats_base_rate"] for result in profiles.values())
    return lane_report("fok", profiles, passed, started, verdict_probability=VERDICT_PROBABILITY)


def _outcome(fabric: MemoryFabric, session: str, question: Question, profile: str) -> float:
    """1.0 when the checkout's packed prompt holds an answer the label accepts, else 0.0."""
    packet = fabric.checkout(question.text, session=session, max_tokens=1024, retrieval_profile=profile)
    shown = {item.citation for item in packet.provenance}
    return float(bool(question.gold) and all(citation in shown for citation in question.gold))


def _brier(probabilities: list[float], outcomes: list[float]) -> float:
    return statistics.fmean((p - o) ** 2 for p, o in zip(probabilities, outcomes, strict=True))


# Ablations beside the named profiles: which feature of a profile made the difference.
ABLATIONS = {
    "plain+ppr": RankingPolicy("plain+ppr", salience=False, ppr=True),
    "plain+salience": RankingPolicy("plain+salience", salience=True, ppr=False),
}


def run_ppr_lane(projects: int = 30, locomo: str | Path | None = None, conversations: int = 1) -> dict[str, Any]:
    started = time.perf_counter()
    compared: dict[str, str | RankingPolicy] = {**{p: p for p in PROFILES_COMPARED}, **ABLATIONS}
    profiles: dict[str, dict[str, Any]] = {profile: {} for profile in compared}
    with scratch_fabric("ppr") as fabric:
        memory = graph_memory(fabric, projects)
        for name, profile in compared.items():
            for kind, questions in (("multi_hop", memory.multi_hop), ("single_hop", memory.single_hop)):
                profiles[name][f"graph_{kind}_recall@{PPR_K}"] = _recall(fabric, memory.session, questions, profile)
        if locomo is not None:
            _locomo(fabric, Path(locomo), conversations, compared, profiles)
    plain = profiles["plain"]
    for figures in profiles.values():
        figures["lift_vs_plain"] = {
            name: round(value - plain[name], 4) for name, value in figures.items() if isinstance(value, float)
        }
    single = [name for name in plain if "single_hop" in name]
    passed = all(profiles[p][name] >= plain[name] for p in compared for name in single)
    return lane_report("ppr", profiles, passed, started, k=PPR_K, locomo=str(locomo) if locomo else None)


def _recall(fabric: MemoryFabric, session: str, questions: list[Question], profile: str | RankingPolicy) -> float:
    scores = []
    for question in questions:
        hits = _search(fabric, question.text, session, PPR_K, profile)
        scores.append(recall_at([hit.citation for hit in hits], question.gold, PPR_K))
    return round(statistics.fmean(scores), 4)


def _search(fabric: MemoryFabric, text: str, session: str, k: int, profile: str | RankingPolicy) -> list[Any]:
    """``memory_query``'s search (the ablations are policies, not public profile names, so the retriever is
    asked directly; the session is projected first as ``fabric.query`` does)."""
    fabric.project([session])
    return fabric.retriever.search(text, sessions=[session], k=k, retrieval_profile=profile).hits


def _locomo(
    fabric: MemoryFabric,
    dataset: Path,
    conversations: int,
    compared: dict[str, str | RankingPolicy],
    profiles: dict[str, dict[str, Any]],
) -> None:
    """LoCoMo R@10 per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop) per profile."""
    from .locomo import _ingest, session_for
    from .locomo_data import CATEGORIES, load_conversations

    rows: dict[str, dict[int, list[float]]] = {profile: {} for profile in profiles}
    for conversation in load_conversations(dataset)[:conversations]:
        session = session_for(conversation.sample_id)
        dia_of_seq = _ingest(fabric, session, conversation)
        for question in conversation.questions:
            if question.category not in (1, 2, 3, 4) or not question.gold:
                continue
            for profile, policy in compared.items():
                hits = _search(fabric, question.text, session, 10, policy)
                ranked = [dia_of_seq[hit.seq] for hit in hits if hit.seq in dia_of_seq]
                top = set(ranked[:10])
                share = sum(1 for gold in question.gold if gold in top) / len(question.gold)
                rows[profile].setdefault(question.category, []).append(share)
    for profile, by_category in rows.items():
        for category, shares in sorted(by_category.items()):
            name = CATEGORIES[category].replace("-", "_")
            key = f"locomo_{'single_hop' if category == 4 else name}_recall@10"
            profiles[profile][key] = round(statistics.fmean(shares), 4)
