"""The causal taxonomy and how its relations are named in the graph (``caused`` -> ``causal_caused``)."""

from __future__ import annotations

from typing import Literal, get_args

from zaxy_agents.errors import InvalidRequestError

CausalRelation = Literal["caused", "enabled", "blocked", "prevented", "regressed", "fixed", "explained"]
CAUSAL_RELATIONS: tuple[str, ...] = get_args(CausalRelation)
GRAPH_PREFIX = "causal_"
REVIEW_STATUS = "proposed"  # causal edges are hypotheses: nothing promotes them
AUTHORITY_STATUS = "non_authoritative"
WEAK_CONFIDENCE = 0.5  # below this an edge is flagged as weak


def graph_relation(relation: str) -> str:
    """The graph relation type of a taxonomy relation (the typed Kuzu table is its upper-case form)."""
    return GRAPH_PREFIX + check_relation(relation)


def taxonomy_relation(graph_relation_type: str) -> str | None:
    """``causal_fixed`` -> ``fixed``; ``None`` for a relation that is not causal."""
    if not graph_relation_type.startswith(GRAPH_PREFIX):
        return None
    relation = graph_relation_type[len(GRAPH_PREFIX) :]
    return relation if relation in CAUSAL_RELATIONS else None


def check_relation(relation: object, *, field: str = "relation_type") -> str:
    if relation not in CAUSAL_RELATIONS:
        raise InvalidRequestError(
            f"{relation!r} is not a causal relation",
            field=field,
            remediation=f"Use one of {', '.join(CAUSAL_RELATIONS)}.",
        )
    return str(relation)
