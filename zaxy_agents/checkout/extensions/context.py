"""What a checkout extension sees, and what it returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.retrieval.models import RetrievalHit

from ..models import FactItem


@dataclass
class CheckoutContext:
    """Everything an extension may look at to add its diagnostics block (read-only by convention)."""

    query: str
    scope: set[str] | None
    catalog: EntityCatalog
    hits: list[RetrievalHit]
    facts: list[FactItem]
    as_of: str | None
    log: EventLog
    evidence_resolves: Callable[[str, int, str], bool]  # (session, seq, full hash) -> still resolves exactly
    # An extension may append a warning: like any warning it keeps answerability below answer_from_memory.
    warnings: list[str] = field(default_factory=list)


# A function returns (diagnostics block, extra guidance lines); extensions are (name, function) pairs.
Extension = Callable[[CheckoutContext], tuple[dict[str, Any], list[str]]]
