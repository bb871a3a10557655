"""Reading ``outcome.explained`` payloads strictly: a cause, an effect, a taxonomy relation, a confidence and
evidence. Two shapes are read (logs exist in both):

- the seeds' (seed 000 task 3, what the fabric writes): ``relation_type``, ``evidence: {source_event_seq,
  source_event_hash (64 hex), reason?, session?}``;
- this project's earlier one: ``relation``, ``evidence: {seq, hash, session?}`` or an ``eventloom://`` citation
  (its hash prefix pins the event), ``explanation``.

Anything less is free-form text and justifies no causal edge."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.projection.model import normalise_name

from .taxonomy import CAUSAL_RELATIONS

HASH_RE = re.compile(r"^[0-9a-f]{64}$")
SESSION_RE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


@dataclass(frozen=True, slots=True)
class Endpoint:
    name: str
    entity_type: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "entity_type": self.entity_type}


@dataclass(frozen=True, slots=True)
class Explanation:
    cause: Endpoint
    effect: Endpoint
    relation: str
    confidence: float
    evidence_seq: int
    evidence_hash: str | None  # the full hash, or None when the evidence is a citation (prefix-pinned)
    evidence_session: str | None
    text: str
    evidence_citation: str | None = None


def endpoint(value: Any) -> Endpoint | None:
    """``{"name": ..., "entity_type": ...}`` with non-empty, bounded strings, else ``None``."""
    if not isinstance(value, dict):
        return None
    name, entity_type = value.get("name"), value.get("entity_type")
    if not isinstance(name, str) or not isinstance(entity_type, str):
        return None
    name, entity_type = name.strip(), entity_type.strip()
    if not (0 < len(name) <= 500 and 0 < len(entity_type) <= 64):
        return None
    return Endpoint(name, entity_type)


def parse_explanation(payload: dict[str, Any]) -> Explanation | None:
    """The structured explanation in an ``outcome.explained`` payload, or ``None`` when anything is missing."""
    cause, effect = endpoint(payload.get("cause")), endpoint(payload.get("effect"))
    relation = payload.get("relation_type", payload.get("relation"))
    confidence, evidence = payload.get("confidence"), payload.get("evidence")
    if cause is None or effect is None or relation not in CAUSAL_RELATIONS:
        return None
    if (cause.entity_type, normalise_name(cause.name)) == (effect.entity_type, normalise_name(effect.name)):
        return None
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0.0 <= confidence <= 1.0:
        return None
    citation = (
        evidence if isinstance(evidence, str) else evidence.get("citation") if isinstance(evidence, dict) else None
    )
    if isinstance(citation, str):
        try:
            parsed = parse_citation(citation)
        except InvalidRequestError:
            return None
        seq, digest, session = parsed.seq, None, parsed.session
    elif isinstance(evidence, dict):
        seq = evidence.get("source_event_seq", evidence.get("seq"))
        digest = evidence.get("source_event_hash", evidence.get("hash"))
        session = evidence.get("session")
        if not isinstance(digest, str) or not HASH_RE.fullmatch(digest):
            return None
        if session is not None and (not isinstance(session, str) or not SESSION_RE.fullmatch(session)):
            return None
    else:
        return None
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        return None
    text = payload.get("explanation")
    if not isinstance(text, str) and isinstance(evidence, dict):
        text = evidence.get("reason")
    return Explanation(
        cause,
        effect,
        str(relation),
        float(confidence),
        seq,
        digest,
        session,
        text.strip()[:2000] if isinstance(text, str) else "",
        citation if isinstance(citation, str) else None,
    )
