"""Procedural memory read from the projection: skills and procedure candidates, classified for planning.

Seed 002 beta.2: validated, revised or accepted *cited* procedures are applicable planning guidance; proposed,
pending or deferred ones are diagnostic; rejected, conflicted, deprecated, contradicted, stale, superseded,
closed or uncited ones are excluded (with the reason). A skill is cited when its evidence citations exist and
all still resolve; a procedure candidate when its source events do. Analytics come from the skill's recorded
outcomes and versions: outcome counts and mean success score, contradiction counts, read-only promotion
candidates (a proposed skill whose outcomes succeed) and rollback candidates (a revision whose outcomes fail
while an earlier version exists). Everything is read-only: a revision is a new memory_skill event.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from zaxy_agents.consolidation.status import candidate_records
from zaxy_agents.errors import ZaxyError
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.eventloom.protocol import EventLog
from zaxy_agents.projection.catalog import EntityCatalog
from zaxy_agents.projection.session_memo import SessionMemo
from zaxy_agents.retrieval.text import Analyzer

EvidenceCheck = Callable[[str, int, str], bool]
APPLICABLE_SKILL = ("validated", "revised")
DIAGNOSTIC_SKILL = ("proposed",)
EXCLUDED_SKILL = ("deprecated", "contradicted")
APPLICABLE_CANDIDATE = ("accepted",)
DIAGNOSTIC_CANDIDATE = ("pending", "deferred")
SCAN = 200  # most recently asserted skills / outcomes read per session
PROMOTION_SCORE = 0.7
ROLLBACK_SCORE = 0.5
MIN_OUTCOMES = 2
_ANALYZER = Analyzer()


@dataclass
class Procedure:
    """A skill or a procedure candidate, with its steps, citations, class and (for skills) analytics."""

    kind: str  # "skill" | "procedure_candidate"
    procedure_id: str
    session: str
    title: str
    status: str
    steps: list[str]
    citation: str
    evidence: list[str]
    applicability: str | None = None
    version: str | None = None
    klass: str = "excluded"  # applicable | diagnostic | excluded
    reason: str = ""
    outcomes: list[float] = field(default_factory=list)
    applications: int = 0
    contradictions: int = 0
    versions: list[str] = field(default_factory=list)
    failure_modes: list[str] = field(default_factory=list)
    rollback: str | None = None
    supersedes_version: str | None = None
    terms: set[str] = field(default_factory=set)

    @property
    def mean_score(self) -> float | None:
        return round(sum(self.outcomes) / len(self.outcomes), 3) if self.outcomes else None

    def item(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "skill_id" if self.kind == "skill" else "candidate_id": self.procedure_id,
            "session": self.session,
            "title": self.title,
            "version": self.version,
            "status": self.status,
            "class": self.klass,
            "reason": self.reason,
            "procedure": self.steps,
            "applicability": self.applicability,
            "citation": self.citation,
            "citations": self.evidence,
            "outcome_count": len(self.outcomes),
            "mean_success_score": self.mean_score,
            "application_count": self.applications,
            "contradiction_count": self.contradictions,
            **({"failure_modes": self.failure_modes} if self.failure_modes else {}),
            **({"rollback": self.rollback} if self.rollback else {}),
            "authority_status": "non_authoritative",
        }


def _properties(version: Any) -> dict[str, Any]:
    return json.loads(version.properties_json or "{}")


_RESOLVED: dict[tuple[int, str], weakref.ref[EventLog]] = {}  # positive answers (the log is append-only)
_RESOLVED_SIZE = 4096


def _resolves(citations: list[str], log: EventLog) -> bool:
    for citation in citations:
        known = _RESOLVED.get((id(log), citation))
        if known is not None and known() is log:
            continue
        try:
            log.resolve(parse_citation(citation))
            if len(_RESOLVED) >= _RESOLVED_SIZE:
                _RESOLVED.pop(next(iter(_RESOLVED)))
            _RESOLVED[(id(log), citation)] = weakref.ref(log)
        except ZaxyError:
            return False
    return True


def _observations(catalog: EntityCatalog, session: str, as_of: str | None) -> tuple[dict, dict]:
    """Outcome scores (per skill id: ``(version, score)``) and application counts of the session's skills."""
    outcomes: dict[str, list[tuple[str | None, float]]] = {}
    applications: dict[str, int] = {}
    for version in catalog.recent_versions(session, "skill_outcome", SCAN * 5, as_of):
        data = _properties(version)
        score = data.get("success_score")
        if isinstance(score, int | float) and not isinstance(score, bool):
            outcomes.setdefault(str(data.get("skill_id")), []).append((data.get("version"), float(score)))
    for version in catalog.recent_versions(session, "skill_application", SCAN * 5, as_of):
        skill_id = str(_properties(version).get("skill_id"))
        applications[skill_id] = applications.get(skill_id, 0) + 1
    return outcomes, applications


def _skill_terms(skill_id: str, data: dict[str, Any]) -> set[str]:
    steps = [str(step) for step in data.get("procedure") or []]
    text = [skill_id, str(data.get("name") or ""), str(data.get("summary") or ""), str(data.get("applicability") or "")]
    return set(_ANALYZER(" ".join([*text, *steps])))


MAX_MATCHED = 20  # skills read in full per session and question (the best term matches)
# a session's ``(key, skill id, terms)``, re-read only when the session changed (its catalog epoch)
_INDEX: SessionMemo[list[tuple[str, str, set[str]]]] = SessionMemo()


def _read_index(catalog: EntityCatalog, session: str, as_of: str | None) -> list[tuple[str, str, set[str]]]:
    """``(key, skill id, terms)`` of the session's skills (latest version, or the one valid at ``as_of``)."""
    entries = []
    for key in catalog.recent_keys(session, "skill", SCAN):
        latest = catalog.version_at(key, as_of) if as_of is not None else catalog.latest(key)
        if latest is None:
            continue
        data = _properties(latest)
        skill_id = str(data.get("skill_id") or latest.name)
        entries.append((key, skill_id, _skill_terms(skill_id, data)))
    return entries


def _skills(
    catalog: EntityCatalog,
    session: str,
    as_of: str | None,
    log: EventLog,
    terms: set[str] | None,
    entries: list[tuple[str, str, set[str]]],
) -> list[Procedure]:
    """The session's skills (``entries``: its ``(key, skill id, terms)``, :func:`_read_index`); with ``terms``,
    only the (at most ``MAX_MATCHED``) best sharing a term with them."""
    if terms is not None:
        scored = sorted(
            ((len(terms & skill_terms), index) for index, (_, _, skill_terms) in enumerate(entries)),
            key=lambda pair: (-pair[0], pair[1]),
        )
        entries = [entries[index] for shared, index in scored[:MAX_MATCHED] if shared]
    if not entries:
        return []
    outcomes, applications = _observations(catalog, session, as_of)
    found = []
    for key, skill_id, skill_terms in entries:
        history = [v for v in catalog.history(key) if as_of is None or v.valid_from <= as_of]
        if not history:
            continue
        latest, data = history[-1], _properties(history[-1])
        version = data.get("version")
        procedure = Procedure(
            kind="skill",
            procedure_id=skill_id,
            session=session,
            title=str(data.get("name") or data.get("summary") or skill_id),
            status=str(data.get("status") or data.get("state") or "proposed"),
            steps=[str(step) for step in data.get("procedure") or []],
            citation=latest.citation,
            evidence=[str(c) for c in data.get("citations") or []],
            applicability=data.get("applicability"),
            version=str(version) if version is not None else None,
            outcomes=[score for v, score in outcomes.get(skill_id, []) if v in (None, version)],
            applications=applications.get(skill_id, 0),
            contradictions=sum(1 for v in history if _properties(v).get("status") == "contradicted"),
            versions=[str(_properties(v).get("version")) for v in history if _properties(v).get("version")],
            failure_modes=[str(m) for m in data.get("failure_modes") or []],
            rollback=data.get("rollback"),
            supersedes_version=data.get("supersedes_version"),
            terms=skill_terms,
        )
        _classify_skill(procedure, latest.valid_to is not None or latest.invalidated, log)
        found.append(procedure)
    return found


def _classify_skill(procedure: Procedure, closed: bool, log: EventLog) -> None:
    status = procedure.status
    if closed:
        procedure.klass, procedure.reason = "excluded", "closed: the skill's current version was retired"
    elif status in EXCLUDED_SKILL:
        procedure.klass, procedure.reason = "excluded", f"{status}"
    elif not procedure.evidence:
        procedure.klass, procedure.reason = "excluded", "uncited: no evidence citations"
    elif not _resolves(procedure.evidence, log):
        procedure.klass, procedure.reason = "excluded", "stale: a cited event no longer resolves"
    elif status in APPLICABLE_SKILL:
        procedure.klass, procedure.reason = "applicable", f"{status} and cited"
    else:
        procedure.klass, procedure.reason = "diagnostic", f"{status}: not validated yet"


def _candidates(
    catalog: EntityCatalog,
    sessions: list[str],
    as_of: str | None,
    log: EventLog,
    check: EvidenceCheck,
    terms: set[str] | None,
) -> list[Procedure]:
    found = []
    for record in candidate_records(catalog, sessions, as_of, check):
        if record.candidate_type != "procedure":
            continue
        if terms is not None and not terms & set(_ANALYZER(f"{record.title} {record.summary}")):
            continue
        try:
            details = log.resolve(parse_citation(record.citation)).payload.get("details") or {}
        except ZaxyError:
            details = {}
        steps = [str(step) for step in details.get("steps") or []] or [record.summary]
        evidence = [
            f"eventloom://{source.get('session') or record.session}/events/{source['seq']}#{str(source['hash'])[:12]}"
            for source in record.source_events
            if isinstance(source, dict) and "seq" in source and "hash" in source
        ]
        procedure = Procedure(
            kind="procedure_candidate",
            procedure_id=record.candidate_id,
            session=record.session,
            title=record.title,
            status=record.review_status,
            steps=steps,
            citation=record.citation,
            evidence=evidence,
        )
        if record.superseded_by:
            procedure.klass, procedure.reason = "excluded", f"superseded by {record.superseded_by}"
        elif record.stale:
            procedure.klass, procedure.reason = "excluded", "stale: " + "; ".join(record.stale_reasons)
        elif not evidence:
            procedure.klass, procedure.reason = "excluded", "uncited: no source events"
        elif record.review_status in APPLICABLE_CANDIDATE:
            procedure.klass, procedure.reason = "applicable", "accepted in review and cited"
        elif record.review_status in DIAGNOSTIC_CANDIDATE:
            procedure.klass, procedure.reason = "diagnostic", f"{record.review_status}: awaiting review"
        else:
            procedure.klass, procedure.reason = "excluded", record.review_status
        procedure.terms = set(_ANALYZER(" ".join([record.title, record.summary, *steps])))
        found.append(procedure)
    return found


def procedures(
    catalog: EntityCatalog,
    sessions: Iterable[str],
    as_of: str | None,
    log: EventLog,
    check: EvidenceCheck,
    query: str | None = None,
) -> list[Procedure]:
    """Every skill and procedure candidate of ``sessions``, classified (with ``query``: only those sharing a term
    with it are read further, so a checkout's cost follows the procedures it matches)."""
    names = sorted(sessions)
    terms = set(_ANALYZER(query)) if query is not None else None
    if as_of is None:  # each session's skill index, kept until the session changes
        indexes = _INDEX.many(catalog, names, lambda session: _read_index(catalog, session, None), types=("skill",))
    else:
        indexes = [_read_index(catalog, session, as_of) for session in names]
    skills = [
        procedure
        for session, entries in zip(names, indexes, strict=True)
        if entries
        for procedure in _skills(catalog, session, as_of, log, terms, entries)
    ]
    return skills + _candidates(catalog, names, as_of, log, check, terms)


def relevant(items: list[Procedure], query: str) -> list[tuple[float, Procedure]]:
    """``(match, procedure)`` for procedures sharing terms with ``query``, best first (then better outcomes)."""
    terms = set(_ANALYZER(query))
    scored = []
    for procedure in items:
        shared = terms & procedure.terms
        if shared:
            match = round(len(shared) / len(terms), 3)
            scored.append((match, procedure))
    scored.sort(key=lambda pair: (-pair[0], -(pair[1].mean_score or 0.0), pair[1].procedure_id))
    return scored


def analytics(items: Iterable[Procedure]) -> dict[str, Any]:
    """``skill_analytics``: outcome and contradiction counts, scores, promotion and rollback candidates."""
    skills = [procedure for procedure in items if procedure.kind == "skill"]
    promotion, rollback = [], []
    for skill in skills:
        scored = len(skill.outcomes) >= MIN_OUTCOMES and skill.mean_score is not None
        if skill.status == "proposed" and scored and skill.mean_score >= PROMOTION_SCORE:
            promotion.append(
                {
                    "skill_id": skill.procedure_id,
                    "version": skill.version,
                    "mean_success_score": skill.mean_score,
                    "outcome_count": len(skill.outcomes),
                    "citation": skill.citation,
                    "action": "memory_skill(action='validated') after review (read-only suggestion)",
                }
            )
        earlier = [v for v in skill.versions if v != skill.version]
        if skill.klass == "applicable" and scored and skill.mean_score < ROLLBACK_SCORE and earlier:
            rollback.append(
                {
                    "skill_id": skill.procedure_id,
                    "version": skill.version,
                    "back_to": skill.supersedes_version or earlier[-1],
                    "mean_success_score": skill.mean_score,
                    "citation": skill.citation,
                    "action": "memory_skill(action='revised') to restore the earlier procedure (read-only suggestion)",
                }
            )
    return {
        "skill_count": len(skills),
        "outcome_count": sum(len(skill.outcomes) for skill in skills),
        "application_count": sum(skill.applications for skill in skills),
        "contradiction_count": sum(skill.contradictions for skill in skills),
        "scores": {skill.procedure_id: skill.mean_score for skill in skills if skill.mean_score is not None},
        "promotion_candidates": promotion,
        "rollback_candidates": rollback,
        "authority_status": "non_authoritative",
    }


def classified(items: Iterable[Procedure]) -> dict[str, Any]:
    """``procedural_memory``: applicable, diagnostic and excluded procedures (ids, citations, reasons)."""
    out: dict[str, list[dict[str, Any]]] = {"applicable": [], "diagnostic": [], "excluded": []}
    for procedure in items:
        out[procedure.klass].append(
            {
                "kind": procedure.kind,
                "id": procedure.procedure_id,
                "status": procedure.status,
                "reason": procedure.reason,
                "citation": procedure.citation,
            }
        )
    return {
        **out,
        **{f"{name}_count": len(rows) for name, rows in out.items()},
        "authority_status": "non_authoritative",
    }
