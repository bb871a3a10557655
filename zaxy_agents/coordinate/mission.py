"""The state of one mission, folded from its events by replay (no graph needed).

The fold re-checks the authority rules on every event it reads, not only when a tool writes it: a
``coordination.finding.promoted`` appended by hand (say with memory_append) without an accepted review by a
reviewer the mission granted is not promoted state; it is listed in ``ignored`` with the reason. So the rules
hold for any log, whoever wrote it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from zaxy_agents.eventloom.models import Event

from .contracts import (
    ASSIGNMENT_CREATED,
    FINDING_PROMOTED,
    FINDING_REPORTED,
    FINDING_REVIEWED,
    HANDOFF_CREATED,
    MISSION_STARTED,
    PROOF_PACKET_CREATED,
    ROLE_PERMISSIONS,
    SCOPE_PERMISSION,
    WORKER_CREATED,
)


def ref_of(event: Event) -> dict[str, Any]:
    return {"session": event.session, "seq": event.seq, "hash": event.hash}


def same_ref(ref: dict[str, Any], event: Event) -> bool:
    return ref.get("session") == event.session and ref.get("seq") == event.seq and ref.get("hash") == event.hash


@dataclass
class Review:
    status: str
    rationale: str
    reviewer: str
    event: Event
    approval_packet_id: str | None = None


@dataclass
class Finding:
    """A worker-local finding and what review and promotion made of it."""

    finding_id: str
    worker_id: str
    subject: str
    claim: str
    confidence: float
    evidence: list[dict[str, Any]]
    test_backed: bool
    assignment_id: str | None
    event: Event
    reviews: list[Review] = field(default_factory=list)
    promotion: Event | None = None

    @property
    def review_status(self) -> str:
        if self.promotion is not None:
            return "promoted"
        return self.reviews[-1].status if self.reviews else "pending"

    @property
    def authority_status(self) -> str:
        return "accepted_mission_state" if self.promotion is not None else "non_authoritative"

    def to_dict(self, *, with_reviews: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "finding_id": self.finding_id,
            "worker_id": self.worker_id,
            "assignment_id": self.assignment_id,
            "subject": self.subject,
            "claim": self.claim,
            "confidence": self.confidence,
            "test_backed": self.test_backed,
            "evidence": self.evidence,
            "review_status": self.review_status,
            "authority_status": self.authority_status,
            "citation": self.event.citation,
        }
        if self.promotion is not None:
            data["promotion_citation"] = self.promotion.citation
        if with_reviews:
            data["reviews"] = [
                {
                    "status": review.status,
                    "reviewer": review.reviewer,
                    "rationale": review.rationale,
                    "citation": review.event.citation,
                }
                for review in self.reviews
            ]
        return data


@dataclass
class Worker:
    worker_id: str
    session: str
    purpose: str
    event: Event
    assignments: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Mission:
    """Everything a mission's tools answer from; build it with :func:`fold`."""

    mission_id: str
    session: str
    title: str
    objective: str
    coordinator: str
    reviewers: list[str]
    start: Event
    head: Event
    workers: dict[str, Worker] = field(default_factory=dict)
    findings: dict[str, Finding] = field(default_factory=dict)
    handoffs: dict[str, Event] = field(default_factory=dict)
    proofs: list[Event] = field(default_factory=list)
    ignored: list[dict[str, Any]] = field(default_factory=list)
    dispatchers: list[str] = field(default_factory=list)  # may create and assign workers, nothing else

    def role_of(self, actor: str) -> str | None:
        if actor == self.coordinator:
            return "coordinator"
        if actor in self.reviewers:
            return "reviewer"
        if actor in self.dispatchers:
            return "dispatcher"
        if actor in self.workers:
            return "worker"
        return None

    def may(self, actor: str, permission: str) -> bool:
        role = self.role_of(actor)
        return role is not None and permission in ROLE_PERMISSIONS[role]

    def promoted(self) -> list[Finding]:
        found = [f for f in self.findings.values() if f.promotion is not None]
        return sorted(found, key=lambda f: f.promotion.seq if f.promotion else 0)

    def pending(self) -> list[Finding]:
        return [f for f in self.findings.values() if f.promotion is None and f.review_status in {"pending", "deferred"}]

    def conflicts(self) -> list[dict[str, Any]]:
        """Open findings (not rejected, not duplicates) that state different claims about the same subject."""
        by_subject: dict[str, list[Finding]] = {}
        for finding in self.findings.values():
            if finding.review_status in {"rejected", "duplicate"}:
                continue
            by_subject.setdefault(" ".join(finding.subject.lower().split()), []).append(finding)
        clusters = []
        for subject, findings in sorted(by_subject.items()):
            claims = {" ".join(f.claim.lower().split()) for f in findings}
            if len(claims) > 1:
                clusters.append(
                    {
                        "subject": subject,
                        "finding_ids": [f.finding_id for f in findings],
                        "statuses": {f.finding_id: f.review_status for f in findings},
                        "authority_status": "non_authoritative",
                    }
                )
        return clusters


def fold(parent_events: Iterable[Event], worker_events: dict[str, list[Event]]) -> Mission | None:
    """The mission of ``parent_events`` (its parent session), with each worker's session events.

    Returns ``None`` when the parent session does not start with ``coordination.mission.started``."""
    events = iter(parent_events)
    start = next(events, None)
    if start is None or start.type != MISSION_STARTED:
        return None
    payload = start.payload
    mission = Mission(
        mission_id=payload["mission_id"],
        session=start.session,
        title=payload["title"],
        objective=payload["objective"],
        coordinator=payload["coordinator"],
        reviewers=list(payload.get("reviewers", [])),
        start=start,
        head=start,
        dispatchers=list(payload.get("dispatchers", [])),
    )
    parent = list(events)
    for event in parent:
        mission.head = event
        if event.type == WORKER_CREATED:
            worker = event.payload["worker_id"]
            if event.actor != mission.coordinator and not mission.may(event.actor, "assign"):
                mission.ignored.append(_ignored(event, f"{event.actor!r} may not create workers"))
            elif worker not in mission.workers:
                mission.workers[worker] = Worker(
                    worker, event.payload["worker_session"], event.payload.get("purpose", ""), event
                )
    for worker in mission.workers.values():
        for event in worker_events.get(worker.worker_id, []):
            if event.type != FINDING_REPORTED:
                continue
            p = event.payload
            if p.get("mission_id") != mission.mission_id or p.get("worker_id") != worker.worker_id:
                mission.ignored.append(_ignored(event, "a finding of another mission or worker"))
                continue
            mission.findings.setdefault(
                p["finding_id"],
                Finding(
                    finding_id=p["finding_id"],
                    worker_id=worker.worker_id,
                    subject=p["subject"],
                    claim=p["claim"],
                    confidence=p["confidence"],
                    evidence=list(p.get("evidence", [])),
                    test_backed=bool(p.get("test_backed")),
                    assignment_id=p.get("assignment_id"),
                    event=event,
                ),
            )
    for event in parent:
        _apply(mission, event)
    return mission


def _apply(mission: Mission, event: Event) -> None:
    p = event.payload
    if event.type == ASSIGNMENT_CREATED:
        worker = mission.workers.get(p["worker_id"])
        if worker is None or not mission.may(event.actor, "assign"):
            mission.ignored.append(_ignored(event, "an assignment to an unknown worker or by an actor without assign"))
            return
        worker.assignments.append({"assignment_id": p["assignment_id"], "task": p["task"], "citation": event.citation})
    elif event.type == FINDING_REVIEWED:
        finding = mission.findings.get(p["finding_id"])
        reason = _review_problem(mission, finding, event)
        if reason:
            mission.ignored.append(_ignored(event, reason))
            return
        assert finding is not None
        finding.reviews.append(Review(p["status"], p["rationale"], p["reviewer"], event, p.get("approval_packet_id")))
    elif event.type == FINDING_PROMOTED:
        finding = mission.findings.get(p["finding_id"])
        reason = _promotion_problem(mission, finding, event)
        if reason:
            mission.ignored.append(_ignored(event, reason))
            return
        assert finding is not None
        finding.promotion = event
    elif event.type == HANDOFF_CREATED:
        if not mission.may(event.actor, "handoff"):
            mission.ignored.append(_ignored(event, f"{event.actor!r} may not hand off"))
            return
        promotions = [f.promotion for f in mission.findings.values() if f.promotion is not None]
        for ref in p.get("promoted_refs", []):
            if not any(same_ref(ref, promotion) for promotion in promotions):
                mission.ignored.append(
                    _ignored(event, f"the handoff cites {ref} which is no promotion of this mission")
                )
                return
        mission.handoffs[p["handoff_id"]] = event
    elif event.type == PROOF_PACKET_CREATED:
        reason = _proof_problem(mission, event)
        if reason:
            mission.ignored.append(_ignored(event, reason))
            return
        mission.proofs.append(event)


def _proof_problem(mission: Mission, event: Event) -> str | None:
    """A proof packet counts only when its author had the right its decision scope needs, every finding it
    calls accepted was promoted (by the cited promotion) before it, and a handoff it names is that handoff."""
    p = event.payload
    if p["created_by"] != event.actor or not mission.may(event.actor, SCOPE_PERMISSION[p["decision_scope"]]):
        return f"{event.actor!r} may not bind a {p['decision_scope']} proof packet"
    promotions = {f.finding_id: f.promotion for f in mission.findings.values() if f.promotion is not None}
    cited = p.get("promotion_refs", [])
    for finding_id in p.get("accepted_finding_ids", []):
        promotion = promotions.get(finding_id)
        if promotion is None or not any(same_ref(ref, promotion) for ref in cited):
            return f"the proof packet calls {finding_id} accepted without citing its promotion"
    if p.get("handoff_id") is not None:
        handoff = mission.handoffs.get(p["handoff_id"])
        if handoff is None or not same_ref(p.get("handoff_event_ref") or {}, handoff):
            return "the proof packet cites a handoff event that is not this mission's handoff"
    return None


def _review_problem(mission: Mission, finding: Finding | None, event: Event) -> str | None:
    if finding is None or not same_ref(event.payload["finding_ref"], finding.event):
        return "the review does not cite a finding of this mission"
    if event.payload["reviewer"] != event.actor or not mission.may(event.actor, "review"):
        return f"{event.actor!r} has no review right in this mission"
    if event.actor == finding.worker_id:
        return "a worker may not review its own finding"
    if finding.promotion is not None:
        return "the finding is already promoted"
    return None


def _promotion_problem(mission: Mission, finding: Finding | None, event: Event) -> str | None:
    if finding is None or not same_ref(event.payload["finding_ref"], finding.event):
        return "the promotion does not cite a finding of this mission"
    if event.payload["promoted_by"] != event.actor or not mission.may(event.actor, "promote"):
        return f"{event.actor!r} has no promote right in this mission"
    if finding.promotion is not None:
        return "the finding is already promoted"
    latest = finding.reviews[-1] if finding.reviews else None
    if latest is None or latest.status != "accepted" or not same_ref(event.payload["review_ref"], latest.event):
        return "a promotion must cite the finding's latest review, and that review must accept it"
    return None


def _ignored(event: Event, reason: str) -> dict[str, Any]:
    return {"citation": event.citation, "event_type": event.type, "actor": event.actor, "reason": reason}
