"""The personalized PageRank lane over a real projected catalog gives the ranks of the plain power iteration, bit
for bit (its loop computes the dangling nodes and the restart share once instead of at every iteration)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.retrieval import graph_lanes
from zaxy_agents.retrieval.graph_lanes import PPR_ALPHA, PPR_ITERATIONS


def _reference(seeds: dict[str, float], catalog, radius: int = 3) -> dict[str, float]:
    """The lane's power iteration as first written (every quantity recomputed at each iteration, the edges read as
    whole records)."""
    nodes: dict[str, int] = {}
    frontier = list(seeds)
    for key in frontier:
        nodes.setdefault(key, len(nodes))
    edges = []
    for _ in range(radius):
        following = []
        for key in frontier:
            if key not in seeds and graph_lanes._is_hub(key, catalog):
                continue
            ends = [(e, e.target_id) for e in catalog.out_edges(key)] + [
                (e, e.source_id) for e in catalog.in_edges(key)
            ]
            for edge, other_id in ends:
                other = catalog.version_key(other_id)
                if other is None:
                    continue
                if other not in nodes:
                    nodes[other] = len(nodes)
                    following.append(other)
                edges.append((nodes[key], nodes[other], edge.confidence))
        frontier = following
    source, target = np.array([e[0] for e in edges]), np.array([e[1] for e in edges])
    weight, size = np.array([e[2] for e in edges]), len(nodes)
    out_weight = np.bincount(source, weights=weight, minlength=size)
    restart = np.zeros(size)
    for key, value in seeds.items():
        restart[nodes[key]] = value
    restart /= restart.sum()
    rank = restart.copy()
    share = weight / np.maximum(out_weight[source], 1e-12)
    for _ in range(PPR_ITERATIONS):
        spread = np.bincount(target, weights=rank[source] * share, minlength=size)
        dangling = rank[out_weight == 0].sum()
        updated = (1 - PPR_ALPHA) * restart + PPR_ALPHA * (spread + dangling * restart)
        if np.abs(updated - rank).sum() < 1e-6:
            rank = updated
            break
        rank = updated
    keys = list(nodes)
    return {keys[i]: float(rank[i]) for i in np.flatnonzero(rank > 0) if keys[i] not in seeds}


def test_ranks_equal_the_plain_power_iteration(tmp_path: Path) -> None:
    with MemoryFabric.from_path(tmp_path) as memory:
        drafts = []
        for n in range(120):
            drafts.append(
                {
                    "type": "fact.asserted",
                    "payload": {"subject": f"service {n % 11}", "predicate": "owner", "object": f"team {n % 7}"},
                }
            )
            drafts.append(
                {"type": "decision.recorded", "payload": {"decision": f"Use option {n}", "topic": f"area {n % 5}"}}
            )
        memory.append_many("project", drafts)
        memory.checkout("who owns service 3", session="project", max_tokens=300)  # projects the log
        catalog = memory.retriever.catalog
        keys = [key for key, _ in graph_lanes.exact_matches("service 3 team 2 area 4", catalog, None).items()]
        assert keys
        for count in range(1, len(keys) + 1):
            seeds = {key: 1.0 + index for index, key in enumerate(keys[:count])}
            found = graph_lanes.personalized_pagerank(seeds, catalog)
            assert found and found == _reference(seeds, catalog)
