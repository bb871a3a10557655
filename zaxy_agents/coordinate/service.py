"""Coordinate: the operations behind the ``coordination_*`` tools (seed 003).

Writes check the mission's authority rules before anything is appended (a refused call writes nothing) and
the fold re-checks them on read (:mod:`.mission`), so hand-written events cannot forge accepted state. Reads
replay the mission's parent session and its workers' sessions: no graph is needed, and the cost grows with the
mission, not with the rest of the memory.
"""

from __future__ import annotations

import json
from typing import Any

from zaxy_agents.errors import ConflictError, InvalidRequestError, NotFoundError, UnauthorizedError
from zaxy_agents.eventloom.models import Event

from . import views
from .access import check_id, digest, slug, written
from .contracts import (
    ASSIGNMENT_CREATED,
    FINDING_PROMOTED,
    FINDING_REPORTED,
    FINDING_REVIEWED,
    HANDOFF_CREATED,
    MISSION_STARTED,
    WORKER_CREATED,
    parent_session,
    worker_session,
)
from .mission import ref_of, same_ref
from .proof_ops import ProofOperations


class CoordinateService(ProofOperations):
    """Mission, workers, assignments, findings, review, promotion, handoff, proof packets, and the reads over them."""

    # ------------------------------------------------------------------ writes
    def start(
        self,
        title: str,
        objective: str,
        *,
        mission_id: str | None = None,
        coordinator: str = "coordinator",
        reviewers: list[str] | None = None,
        dispatchers: list[str] | None = None,
    ) -> dict[str, Any]:
        """Open a mission in its own parent session; ``coordinator`` holds every right, ``reviewers`` may review,
        promote, apply approvals and hand off, ``dispatchers`` may only create and assign workers (IDE subagent
        hooks)."""
        mission_id = mission_id or slug(title)
        check_id(mission_id, "mission_id")
        session = parent_session(mission_id)
        if self.log.has_session(session):
            raise ConflictError(
                f"mission {mission_id!r} already exists",
                field="mission_id",
                remediation="Pick another mission_id, or continue this one with coordination_checkout.",
            )
        payload = {
            "mission_id": mission_id,
            "title": title,
            "objective": objective,
            "coordinator": coordinator,
            "reviewers": list(reviewers or []),
            **({"dispatchers": list(dispatchers)} if dispatchers else {}),
        }
        event = self._write(session, [(MISSION_STARTED, payload, coordinator)])[0]
        return {"mission_id": mission_id, "session": session, **written(event)}

    def worker_create(
        self, mission_id: str, worker_id: str, *, purpose: str = "", actor: str | None = None
    ) -> dict[str, Any]:
        mission = self._mission(mission_id)
        actor = actor or mission.coordinator
        self._require(mission, actor, "assign")
        check_id(worker_id, "worker_id")
        if worker_id in mission.workers or worker_id in {mission.coordinator, *mission.reviewers, *mission.dispatchers}:
            raise ConflictError(
                f"{worker_id!r} is already part of mission {mission_id!r}",
                field="worker_id",
                remediation="Use another worker_id; a reviewer or coordinator cannot also be a worker.",
            )
        session = worker_session(mission_id, worker_id)
        payload = {"mission_id": mission_id, "worker_id": worker_id, "worker_session": session, "purpose": purpose}
        event = self._write(mission.session, [(WORKER_CREATED, payload, actor)])[0]
        return {"mission_id": mission_id, "worker_id": worker_id, "worker_session": session, **written(event)}

    def assign(
        self, mission_id: str, worker_id: str, task: str, *, assignment_id: str | None = None, actor: str | None = None
    ) -> dict[str, Any]:
        mission = self._mission(mission_id)
        actor = actor or mission.coordinator
        self._require(mission, actor, "assign")
        self._worker(mission, worker_id)
        assignment_id = assignment_id or "a-" + digest(mission_id, worker_id, task)[:12]
        check_id(assignment_id, "assignment_id")
        payload = {"mission_id": mission_id, "assignment_id": assignment_id, "worker_id": worker_id, "task": task}
        event = self._write(mission.session, [(ASSIGNMENT_CREATED, payload, actor)])[0]
        return {"mission_id": mission_id, "assignment_id": assignment_id, "worker_id": worker_id, **written(event)}

    def report_finding(
        self,
        mission_id: str,
        worker_id: str,
        subject: str,
        claim: str,
        *,
        evidence: list[str | dict[str, Any]] | None = None,
        confidence: float = 0.5,
        test_backed: bool = False,
        assignment_id: str | None = None,
        actor: str | None = None,
    ) -> dict[str, Any]:
        """A worker-local finding: pending and non-authoritative until reviewed and promoted."""
        mission = self._mission(mission_id)
        worker = self._worker(mission, worker_id)
        if actor is not None and actor != worker_id:
            raise UnauthorizedError(
                f"{actor!r} may not report findings as worker {worker_id!r}",
                field="actor",
                remediation="Report as the worker itself (actor = worker_id).",
            )
        if assignment_id is not None and assignment_id not in {a["assignment_id"] for a in worker.assignments}:
            raise NotFoundError(
                f"worker {worker_id!r} has no assignment {assignment_id!r}",
                field="assignment_id",
                remediation="Omit it, or use an assignment_id coordination_assign returned for this worker.",
            )
        refs = [self._ref(item, f"evidence[{i}]", worker.session) for i, item in enumerate(evidence or [])]
        finding_id = "fnd_" + digest(mission_id, worker_id, subject, claim, json.dumps(refs, sort_keys=True))[:16]
        if finding_id in mission.findings:
            existing = mission.findings[finding_id]
            return {"mission_id": mission_id, "created": False, **existing.to_dict(with_reviews=False)}
        payload = {
            "mission_id": mission_id,
            "finding_id": finding_id,
            "worker_id": worker_id,
            **({"assignment_id": assignment_id} if assignment_id is not None else {}),
            "subject": subject,
            "claim": claim,
            "evidence": refs,
            "confidence": confidence,
            "test_backed": test_backed,
            "review_status": "pending",
            "authority_status": "non_authoritative",
        }
        event = self._write(worker.session, [(FINDING_REPORTED, payload, worker_id)])[0]
        return {
            "mission_id": mission_id,
            "finding_id": finding_id,
            "created": True,
            "review_status": "pending",
            "authority_status": "non_authoritative",
            **written(event),
        }

    def review_finding(
        self, mission_id: str, finding_id: str, status: str, rationale: str, *, reviewer: str
    ) -> dict[str, Any]:
        """A disposition by a reviewer the mission granted (never the finding's own worker)."""
        mission = self._mission(mission_id)
        finding = self._finding(mission, finding_id)
        self._check_review(mission, finding_id, status, rationale, reviewer)
        payload = _review_payload(mission_id, finding.event, status, rationale, reviewer)
        event = self._write(mission.session, [(FINDING_REVIEWED, payload, reviewer)])[0]
        return {"mission_id": mission_id, "finding_id": finding_id, "status": status, **written(event)}

    def promote(self, mission_id: str, finding_id: str, *, promoted_by: str) -> dict[str, Any]:
        """Make an accepted finding mission state; it must be accepted by its latest review."""
        mission = self._mission(mission_id)
        finding = self._finding(mission, finding_id)
        self._require(mission, promoted_by, "promote", field="promoted_by")
        latest = finding.reviews[-1] if finding.reviews else None
        if finding.promotion is not None:
            raise ConflictError(
                f"finding {finding_id} is already promoted",
                field="finding_id",
                remediation="Nothing to do; it is in the accepted mission state.",
            )
        if latest is None or latest.status != "accepted":
            raise ConflictError(
                f"finding {finding_id} is {finding.review_status}; only an accepted finding can be promoted",
                field="finding_id",
                remediation="Review it first (coordination_review_finding status=accepted) by a reviewer.",
            )
        event = self._write(
            mission.session,
            [(FINDING_PROMOTED, _promotion(mission_id, finding, latest.event, promoted_by), promoted_by)],
        )[0]
        return {
            "mission_id": mission_id,
            "finding_id": finding_id,
            "authority_status": "accepted_mission_state",
            **written(event),
            **self._reinforced(event, finding),
        }

    def apply_approval(
        self, mission_id: str, packet_id: str, decisions: list[dict[str, Any]], *, actor: str
    ) -> dict[str, Any]:
        """Apply a remote reviewer's decisions as ordinary review events (promotion only where a decision sets
        ``promote``). The packet must describe the current mission state; every decision is checked before any
        is written."""
        mission = self._mission(mission_id)
        self._require(mission, actor, "approve")
        current = views.packet_id(mission)
        if packet_id != current:
            raise ConflictError(
                "the approval packet is stale: the mission changed since it was exported",
                field="packet_id",
                remediation="Export a fresh packet with coordination_approval_packet and decide on that one.",
            )
        if not isinstance(decisions, list) or not decisions:
            raise InvalidRequestError(
                "decisions must be a non-empty list", field="decisions", remediation="Send one decision per finding."
            )
        seen: set[str] = set()
        for index, decision in enumerate(decisions):
            where = f"decisions[{index}]"
            if not isinstance(decision, dict):
                raise InvalidRequestError(
                    f"{where} must be an object", field=where, remediation="See decision_template."
                )
            finding_id = decision.get("finding_id")
            if not isinstance(finding_id, str) or finding_id in seen:
                raise InvalidRequestError(
                    f"{where}.finding_id is missing or repeated",
                    field=f"{where}.finding_id",
                    remediation="One decision per finding of the packet.",
                )
            seen.add(finding_id)
            self._finding(mission, finding_id, field=f"{where}.finding_id")
            self._check_review(
                mission, finding_id, decision.get("status"), decision.get("rationale"), actor, field=where
            )
            if decision.get("promote"):
                self._require(mission, actor, "promote")
                if decision.get("status") != "accepted":
                    raise InvalidRequestError(
                        f"{where}: promote needs status accepted",
                        field=f"{where}.promote",
                        remediation="Accept the finding to promote it, or drop promote.",
                    )
        reviews = self._write(
            mission.session,
            [
                (
                    FINDING_REVIEWED,
                    _review_payload(
                        mission_id,
                        mission.findings[d["finding_id"]].event,
                        d["status"],
                        d["rationale"],
                        actor,
                        packet_id,
                    ),
                    actor,
                )
                for d in decisions
            ],
        )
        promote = [(d, review) for d, review in zip(decisions, reviews, strict=True) if d.get("promote")]
        promotions = (
            self._write(
                mission.session,
                [
                    (FINDING_PROMOTED, _promotion(mission_id, mission.findings[d["finding_id"]], review, actor), actor)
                    for d, review in promote
                ],
            )
            if promote
            else []
        )
        return {
            "mission_id": mission_id,
            "packet_id": packet_id,
            "reviews": [written(event) | {"finding_id": event.payload["finding_id"]} for event in reviews],
            "promotions": [
                written(event)
                | {"finding_id": event.payload["finding_id"]}
                | self._reinforced(event, mission.findings[event.payload["finding_id"]])
                for event in promotions
            ],
        }

    def handoff(
        self,
        mission_id: str,
        summary: str,
        *,
        next_steps: list[str] | None = None,
        risks: list[str] | None = None,
        to: str | None = None,
        promoted_refs: list[str | dict[str, Any]] | None = None,
        actor: str | None = None,
    ) -> dict[str, Any]:
        """A replayable handoff citing exactly the promotion events it hands over (default: all of them)."""
        mission = self._mission(mission_id)
        actor = actor or mission.coordinator
        self._require(mission, actor, "handoff")
        promotions = [f.promotion for f in mission.promoted() if f.promotion is not None]
        if promoted_refs is None:
            refs = [ref_of(p) for p in promotions]
        else:
            refs = []
            for index, item in enumerate(promoted_refs):
                ref = self._ref(item, f"promoted_refs[{index}]", mission.session)
                if not any(same_ref(ref, p) for p in promotions):
                    raise InvalidRequestError(
                        f"promoted_refs[{index}] cites an event that is no promotion of mission {mission_id!r}",
                        field=f"promoted_refs[{index}]",
                        remediation="Cite the promotion_citation of a promoted finding (coordination_merge_brief).",
                    )
                refs.append(ref)
        handoff_id = "hnd_" + digest(mission_id, str(mission.head.seq), summary)[:16]
        payload = {
            "mission_id": mission_id,
            "handoff_id": handoff_id,
            "summary": summary,
            "next_steps": list(next_steps or []),
            "risks": list(risks or []),
            "to": to,
            "promoted_refs": refs,
            "created_by": actor,
        }
        event = self._write(mission.session, [(HANDOFF_CREATED, payload, actor)])[0]
        return {
            "mission_id": mission_id,
            "handoff_id": handoff_id,
            "handoff_event_ref": ref_of(event),
            "promoted_refs": refs,
            **written(event),
        }

    # ------------------------------------------------------------------ reads
    def merge_brief(self, mission_id: str) -> dict[str, Any]:
        return views.brief(self._mission(mission_id))

    def checkout(
        self,
        mission_id: str,
        *,
        worker_id: str | None = None,
        include_diagnostics: bool = False,
        actor: str | None = None,
    ) -> dict[str, Any]:
        """Promoted mission state for a member; a worker sees its own assignment. Pending findings only as
        labelled diagnostics, and only for members of this mission."""
        mission = self._mission(mission_id)
        if worker_id is not None:
            self._worker(mission, worker_id)
            if actor is not None and actor != worker_id and mission.role_of(actor) not in {"coordinator", "reviewer"}:
                raise UnauthorizedError(
                    f"{actor!r} may not read worker {worker_id!r}'s checkout",
                    field="actor",
                    remediation="Check out as yourself (worker_id = your own worker id).",
                )
        reader = actor or worker_id
        if include_diagnostics and (reader is None or mission.role_of(reader) is None):
            raise UnauthorizedError(
                f"pending findings of mission {mission_id!r} are visible to its members only",
                field="include_diagnostics",
                remediation="Pass worker_id or actor of a member of this mission, or drop include_diagnostics.",
            )
        return views.checkout(mission, worker_id, include_diagnostics)

    def performance_ledger(self, mission_id: str) -> dict[str, Any]:
        return views.ledger(self._mission(mission_id))

    def approval_packet(self, mission_id: str) -> dict[str, Any]:
        return views.approval_packet(self._mission(mission_id))


def _review_payload(
    mission_id: str, finding: Event, status: str, rationale: str, reviewer: str, packet_id: str | None = None
) -> dict[str, Any]:
    payload = {
        "mission_id": mission_id,
        "finding_id": finding.payload["finding_id"],
        "finding_ref": ref_of(finding),
        "status": status,
        "rationale": rationale,
        "reviewer": reviewer,
    }
    if packet_id is not None:
        payload["approval_packet_id"] = packet_id
    return payload


def _promotion(mission_id: str, finding: Any, review: Event, promoted_by: str) -> dict[str, Any]:
    return {
        "mission_id": mission_id,
        "finding_id": finding.finding_id,
        "finding_ref": ref_of(finding.event),
        "review_ref": ref_of(review),
        "subject": finding.subject,
        "claim": finding.claim,
        "promoted_by": promoted_by,
        "authority_status": "accepted_mission_state",
    }
