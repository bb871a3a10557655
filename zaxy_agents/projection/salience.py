"""Salience = recency decay x reinforcement x base importance, from events only (rebuildable by replay).

The reference time is the newest event the projection has seen (not the wall clock), so the same log always
yields the same salience.
"""

from __future__ import annotations

import math
from datetime import datetime

from .catalog import EntityCatalog
from .records import EntityVersion

HALF_LIFE_DAYS = 30.0


def _days_between(earlier: str, later: str) -> float:
    try:
        start = datetime.fromisoformat(earlier.replace("Z", "+00:00"))
        end = datetime.fromisoformat(later.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return max(0.0, (end - start).total_seconds() / 86400.0)


def salience(version: EntityVersion, catalog: EntityCatalog, reference: str | None = None) -> dict[str, float]:
    """Salience in [0, 1] and its factors (shown per fact in checkout diagnostics)."""
    feedback = catalog.feedback(version.key)
    positive_weight = feedback.weight if feedback else 0.0
    last_touch = max(version.valid_from, feedback.last_timestamp if feedback and feedback.positive else "")
    age = _days_between(last_touch, reference or catalog.latest_timestamp or last_touch)
    recency = 0.5 ** (age / HALF_LIFE_DAYS)
    reinforcement = 1.0 + math.log1p(positive_weight)  # negative feedback is audit-only by design
    value = min(1.0, version.importance * recency * reinforcement)
    return {
        "salience": round(value, 4),
        "recency": round(recency, 4),
        "reinforcement": round(reinforcement, 4),
        "importance": version.importance,
    }
