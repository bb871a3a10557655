"""Keyword lane over projected entities: BM25 over each version's name and summary, incremental.

Versions stay in the index after they are superseded; the engine filters by validity (current, or as of a
time) using the catalog, and counts what it excluded so checkout can report it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .postings import Postings, bm25
from .text import Analyzer

NAME_WEIGHT = 2.0  # a name match is worth more than a summary match
# Entities whose whole content is raw text (turns, prompts, lifecycle markers) are the verbatim lane's
# territory: indexing them here again would only duplicate that lane with a weaker scorer. Speakers are
# retrieval cues, not memories.
VERBATIM_TERRITORY = frozenset({"turn", "prompt", "hook_event", "participant", "event", "topic"})
# Generated summaries awaiting (or refused) review are not memories: they are never recalled (docs/cognitive.md).
UNREVIEWED = frozenset({"consolidation_candidate", "consolidation_review"})


class EntityKeywordIndex:
    """A projection listener indexing entity versions (``Entity`` rows) for keyword search."""

    name = "entity_keyword"

    def __init__(self) -> None:
        self.an = Analyzer()
        self.reset()

    def reset(self) -> None:
        self.version_ids: list[str] = []
        self.position: dict[str, int] = {}
        self.field = Postings()

    def __len__(self) -> int:
        return len(self.version_ids)

    def on_batch(self, batch: Any, catalog: Any) -> None:
        for row in batch.entities:
            if row["entity_type"] in VERBATIM_TERRITORY or row["entity_type"] in UNREVIEWED:
                continue  # raw text is the verbatim lane's; unreviewed summaries are not memories
            if row.get("asserted") is False:
                continue  # reference placeholders carry no content
            index = len(self.version_ids)
            self.version_ids.append(row["id"])
            self.position[row["id"]] = index
            terms = self.an(row["name"]) * int(NAME_WEIGHT) + self.an(row["summary"] or "")
            self.field.add(index, terms)

    def snapshot_state(self) -> dict[str, Any]:
        return {"version_ids": self.version_ids, "position": self.position, "field": self.field}

    def restore_state(self, state: Any) -> bool:
        if not isinstance(state, dict) or "field" not in state:
            return False
        self.version_ids, self.position, self.field = state["version_ids"], state["position"], state["field"]
        return True

    def search(self, query: str, k: int = 50) -> list[tuple[str, float]]:
        """Top-k version ids by BM25 (all versions; the caller filters by validity)."""
        n = len(self.version_ids)
        terms = list(dict.fromkeys(self.an(query)))
        if not n or not terms:
            return []
        idf = np.array([math.log(1.0 + (n - self.field.df(t) + 0.5) / (self.field.df(t) + 0.5)) for t in terms])
        scores = bm25(
            self.field.tf_matrix(terms, n),
            self.field.lens.view(),
            self.field.total / max(self.field.nonempty, 1),
            idf,
            1.2,
            0.75,
        )
        hits = np.flatnonzero(scores > 0)
        if hits.size == 0:
            return []
        top = hits[np.argsort(-scores[hits], kind="stable")[:k]]
        return [(self.version_ids[i], float(scores[i])) for i in top]
