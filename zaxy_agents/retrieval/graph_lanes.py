"""Lanes over the catalog's graph: exact name/alias match, bounded traversal, personalized PageRank.

They work on entity identities (keys) and the catalog's key-level adjacency, so they never wait on the graph
database. Each returns ``{key: score}``; the engine maps keys to the version valid at ``as_of`` and its event.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from zaxy_agents.projection.catalog import EntityCatalog

MAX_NGRAM = 5
PPR_ALPHA = 0.85
PPR_ITERATIONS = 30
PPR_MAX_NODES = 5000
HUB_DEGREE = 50


def exact_matches(query: str, catalog: EntityCatalog, sessions: set[str] | None) -> dict[str, float]:
    """Entities whose whole name appears in the query (word n-grams up to 5), longer names scoring higher, in an
    order that does not depend on ``PYTHONHASHSEED`` (tests/retrieval/test_hash_seed_packets.py)."""
    words = "".join(c.lower() if c.isalnum() or c in "-_./#" else " " for c in query).split()
    hits: dict[str, float] = {}
    grams = [
        (size, start, " ".join(words[start : start + size]))
        for size in range(min(MAX_NGRAM, len(words)), 0, -1)
        for start in range(len(words) - size + 1)
    ]
    named = catalog.keys_named_many([gram for _, _, gram in grams])  # one read for every n-gram
    for size, start, gram in grams:
        # in key order: the lookup answers a set, whose order follows the process's string hashing, and the engine
        # keeps the first of equal scores when it cuts a lane to its depth (a name held in many sessions ties)
        for key in sorted(named[gram]):
            version = catalog.latest(key)
            if version is None:
                continue
            if sessions is not None and version.session not in sessions:
                continue
            if version.entity_type in {"participant"} or (size == 1 and len(words[start]) < 3):
                continue
            hits[key] = max(hits.get(key, 0.0), float(size))
    return hits


def traverse(
    seeds: dict[str, float], catalog: EntityCatalog, depth: int, decay: float = 0.5, limit: int = 200
) -> dict[str, float]:
    """Breadth-first over relations from seed keys: score = seed score x decay^hops x edge confidence."""
    scores: dict[str, float] = {}
    frontier = deque((key, 0, weight) for key, weight in seeds.items())
    seen = set(seeds)
    while frontier and len(scores) < limit:
        key, hops, weight = frontier.popleft()
        if hops >= depth or (hops > 0 and _is_hub(key, catalog)):
            continue
        for other, confidence in catalog.neighbour_keys(key):
            score = weight * decay * confidence
            if other in seen:
                continue
            seen.add(other)
            scores[other] = score
            frontier.append((other, hops + 1, score))
    return scores


def personalized_pagerank(seeds: dict[str, float], catalog: EntityCatalog, radius: int = 3) -> dict[str, float]:
    """Personalized PageRank from the seeds over the local subgraph (bounded), by numpy power iteration."""
    if not seeds:
        return {}
    nodes: dict[str, int] = {}
    frontier = list(seeds)
    for key in frontier:
        nodes.setdefault(key, len(nodes))
    edges: list[tuple[int, int, float]] = []
    for _ in range(radius):
        next_frontier = []
        for key in frontier:
            if key not in seeds and _is_hub(key, catalog):
                continue
            for other, confidence in catalog.neighbour_keys(key):
                if other not in nodes:
                    if len(nodes) >= PPR_MAX_NODES:
                        continue
                    nodes[other] = len(nodes)
                    next_frontier.append(other)
                edges.append((nodes[key], nodes[other], confidence))
        frontier = next_frontier
    if not edges:
        return {}
    source = np.array([e[0] for e in edges])
    target = np.array([e[1] for e in edges])
    weight = np.array([e[2] for e in edges])
    size = len(nodes)
    out_weight = np.bincount(source, weights=weight, minlength=size)
    restart = np.zeros(size)
    for key, value in seeds.items():
        restart[nodes[key]] = value
    restart /= restart.sum()
    rank = restart.copy()
    share = weight / np.maximum(out_weight[source], 1e-12)
    # What does not change between iterations is computed once (the same values: the same ranks, bit for bit).
    dangling_nodes = np.flatnonzero(out_weight == 0)
    restarted = (1 - PPR_ALPHA) * restart
    for _ in range(PPR_ITERATIONS):
        spread = np.bincount(target, weights=rank[source] * share, minlength=size)
        dangling = rank[dangling_nodes].sum()
        updated = restarted + PPR_ALPHA * (spread + dangling * restart)
        if np.abs(updated - rank).sum() < 1e-6:
            rank = updated
            break
        rank = updated
    keys = list(nodes)
    return {keys[i]: float(rank[i]) for i in np.flatnonzero(rank > 0) if keys[i] not in seeds}


def _is_hub(key: str, catalog: EntityCatalog) -> bool:
    """Speakers and very high-degree nodes connect everything to everything: never expand through them."""
    return key.split("\x1f", 2)[1] == "participant" or catalog.degree(key) > HUB_DEGREE
