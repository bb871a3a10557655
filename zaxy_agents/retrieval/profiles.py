"""Retrieval profiles: lane weights and boosts for weighted reciprocal-rank fusion.

Fusion (documented in docs/retrieval.md): every lane ranks event ids; an event's fused score is
``sum(weight[lane] / (RRF_K + rank[lane]))`` over the lanes that found it, then multiplied by boosts
(salience of the entity it carries, recency for the temporal profile, a penalty for superseded content).
Weights were set on the LoCoMo tuning half and sanity-checked on agent-log fixtures: the verbatim lane
carries conversational recall; entity lanes add current, structured facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zaxy_agents.errors import InvalidRequestError

RRF_K = 60.0
LANES = ("exact", "keyword", "vector", "graph", "ppr", "verbatim")


@dataclass(frozen=True)
class RetrievalProfile:
    name: str
    weights: dict[str, float] = field(default_factory=dict)
    graph_depth: int = 2
    recency_boost: float = 0.0  # multiplies by 1 + boost * recency (0..1) for the temporal profile
    salience_boost: float = 0.25  # multiplies by 1 + boost * salience (0..1) for entity-backed hits
    superseded_penalty: float = 0.5  # superseded/invalidated content is kept only as context, down-weighted
    candidates: int = 50  # per-lane depth before fusion (and how many fused hits an embedding re-rank sees)
    rerank_weight: float = 0.15  # re-rank by a "rerank"-role embedder (retrieval/rerank.py); 0 switches it off
    expansion_weight: float = 0.4  # query expansion with a "rerank"-role embedder (retrieval/expansion.py); 0: off
    # Set by the retrieval profile (retrieval/ranking.py), never by a lane preset:
    attenuation_floor: float = 0.0  # entities below this salience are labelled attenuated (0: off)
    cue_weight: float = 0.0  # blend of cue overlap with the caller's context cues (0: off)
    ranking: str = ""  # the retrieval profile applied ("" before one is)


PROFILES: dict[str, RetrievalProfile] = {
    "balanced": RetrievalProfile(
        "balanced", {"exact": 0.6, "keyword": 0.35, "vector": 0.35, "graph": 0.25, "ppr": 0.15, "verbatim": 1.0}
    ),
    "precision": RetrievalProfile(
        "precision",
        {"exact": 1.0, "keyword": 0.6, "vector": 0.2, "graph": 0.1, "ppr": 0.0, "verbatim": 1.0},
        graph_depth=1,
        candidates=30,
    ),
    "recall": RetrievalProfile(
        "recall",
        {"exact": 0.5, "keyword": 0.5, "vector": 0.5, "graph": 0.4, "ppr": 0.3, "verbatim": 1.0},
        graph_depth=3,
        candidates=100,
    ),
    "temporal": RetrievalProfile(
        "temporal",
        {"exact": 0.6, "keyword": 0.35, "vector": 0.3, "graph": 0.2, "ppr": 0.1, "verbatim": 1.0},
        recency_boost=0.5,
    ),
    "cognitive": RetrievalProfile(
        "cognitive",
        {"exact": 0.6, "keyword": 0.4, "vector": 0.35, "graph": 0.4, "ppr": 0.35, "verbatim": 0.9},
        graph_depth=3,
        salience_boost=0.6,
    ),
}


def get_profile(name: str | RetrievalProfile) -> RetrievalProfile:
    if isinstance(name, RetrievalProfile):
        return name
    profile = PROFILES.get(name)
    if profile is None:
        raise InvalidRequestError(
            f"unknown retrieval profile {name!r}",
            field="profile",
            remediation=f"Use one of: {', '.join(PROFILES)}.",
        )
    return profile
