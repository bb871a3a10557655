"""Retrieval profiles (seed 004 "--retrieval-profile"): which of the 2.2 cognitive ranking features apply.

A *retrieval profile* is orthogonal to the lane presets of :mod:`.profiles` (``balanced``, ``precision``,
``recall``, ``temporal``, ``cognitive``: lane weights and depths, chosen per query or by a checkout purpose). It
switches the ranking features that were added after plain fused retrieval, each of which must be justified by a
measurement lane (``zaxy benchmark budget|cache|forgetting|fok|ppr|gate``) before it is on by default:

* ``salience``: multiply a hit's fused score by ``1 + salience_boost x salience`` of the entity it carries;
* ``ppr``: the bounded personalized-PageRank lane, blended into the fusion with the preset's ``ppr`` weight;
* ``attenuation_floor``: entities whose salience is below the floor leave *default* ranking (checkout) and are
  labelled ``attenuated`` where they are still returned (explicit ``memory_query``); pinned and authority-bearing
  memories are exempt, and a ``memory.restored`` event lifts one back;
* ``cue_weight``: blend the overlap of the caller's context cues with the cues recorded on append.

Profiles:

* ``plain``: none of them (pre-2.2 ranking: lane fusion, superseded penalty, the temporal preset's recency);
* ``balanced``: what the lanes justified (see docs/retrieval.md, "Retrieval profiles");
* ``full``: every 2.2 feature on, for experiments and the lanes' comparison column.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from zaxy_agents.errors import InvalidRequestError

from .profiles import RetrievalProfile


@dataclass(frozen=True)
class RankingPolicy:
    """One retrieval profile: the 2.2 ranking features it switches on."""

    name: str
    salience: bool
    ppr: bool
    attenuation_floor: float = 0.0  # 0: no attenuation
    cue_weight: float = 0.0  # 0: cue overlap not blended
    description: str = ""

    def apply(self, preset: RetrievalProfile) -> RetrievalProfile:
        """The lane preset with this profile's features (a feature that is off is zeroed, never re-tuned)."""
        weights = dict(preset.weights)
        if not self.ppr:
            weights["ppr"] = 0.0
        return replace(
            preset,
            weights=weights,
            salience_boost=preset.salience_boost if self.salience else 0.0,
            attenuation_floor=self.attenuation_floor,
            cue_weight=self.cue_weight,
            ranking=self.name,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "salience": self.salience,
            "ppr": self.ppr,
            "attenuation_floor": self.attenuation_floor,
            "cue_weight": self.cue_weight,
        }


RETRIEVAL_PROFILES: dict[str, RankingPolicy] = {
    "plain": RankingPolicy("plain", salience=False, ppr=False, description="pre-2.2 ranking: no 2.2 feature"),
    "balanced": RankingPolicy(
        "balanced",
        salience=False,
        ppr=True,
        cue_weight=0.5,
        description="the features a measurement lane justified: PPR, and cue overlap when the caller passes cues",
    ),
    "full": RankingPolicy(
        "full",
        salience=True,
        ppr=True,
        attenuation_floor=0.05,
        cue_weight=0.5,
        description="every 2.2 feature: salience, PPR, attenuation floor, cue overlap",
    ),
}
# The profile a caller gets without asking; set from the lanes' results (docs/retrieval.md).
DEFAULT_RETRIEVAL_PROFILE = "balanced"


def get_retrieval_profile(name: str | RankingPolicy | None) -> RankingPolicy:
    """The named retrieval profile (``None``: the default); an unknown name is a structured error."""
    if isinstance(name, RankingPolicy):
        return name
    policy = RETRIEVAL_PROFILES.get(name or DEFAULT_RETRIEVAL_PROFILE)
    if policy is None:
        raise InvalidRequestError(
            f"unknown retrieval profile {name!r}",
            field="retrieval_profile",
            remediation=f"Use one of: {', '.join(RETRIEVAL_PROFILES)}.",
        )
    return policy
