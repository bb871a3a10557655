"""A merge tree of per-session partials (the whole-memory memo after a change merges only the changed sessions'
paths) has, after any sequence of replacements, the root a merge of every partial in session order gives: a
stable top-k with many ties keeps the tie order, and a sum counts everything."""

from __future__ import annotations

import functools
import heapq
import random

from zaxy_agents.projection.session_memo import MergeTree


def _top(earlier: list[tuple[int, str]], later: list[tuple[int, str]]) -> list[tuple[int, str]]:
    return heapq.nlargest(3, earlier + later, key=lambda item: item[0])


def test_root_equals_the_merge_in_order_after_replacements() -> None:
    rng = random.Random(5)
    for sessions in (0, 1, 2, 3, 7, 16, 33):
        partials = [[(rng.randrange(4), f"s{n}-{i}") for i in range(rng.randrange(4))] for n in range(sessions)]
        tree = MergeTree([_top(p, []) for p in partials], _top)
        sums = MergeTree([len(p) for p in partials], lambda a, b: a + b)
        for _ in range(12):
            flat = heapq.nlargest(3, [item for p in partials for item in p], key=lambda item: item[0])
            assert tree.root == (flat if sessions else None)
            assert sums.root == (sum(map(len, partials)) if sessions else None)
            if sessions:
                assert tree.root == functools.reduce(_top, [_top(p, []) for p in partials])
                changed = {rng.randrange(sessions): None for _ in range(rng.randrange(1, 4))}
                for position in changed:
                    partials[position] = [(rng.randrange(4), f"new-{position}-{i}") for i in range(rng.randrange(4))]
                tree.update({position: _top(partials[position], []) for position in changed})
                sums.update({position: len(partials[position]) for position in changed})
