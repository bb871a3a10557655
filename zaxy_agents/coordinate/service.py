"""Coordinate: the operations behind the ``coordination_*`` tools (seed 003).

Writes check the mission's authority rules before anything is appended (a refused call writes nothing) and
the fold re-checks them on read (:mod:`.mission`), so hand-written events cannot forge accepted state. Reads
replay the mission's parent session and its workers' sessions: no graph is needed, and the cost grows with the
mission, not with the rest of the memory.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from zaxy_agents.errors import ConflictError, InvalidRequestError, NotFoundError, UnauthorizedError, ZaxyError
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.eventloom.models import Event, EventDraft
from zaxy_agents.eventloom.protocol import EventLog

from . import views
from .contracts import (
    ASSIGNMENT_CREATED,
    FINDING_PROMOTED,
    FINDING_REPORTED,
    FINDING_REVIEWED,
    HANDOFF_CREATED,
    ID_PATTERN,
    MISSION_STARTED,
    REVIEW_STATUSES,
    WORKER_CREATED,
    parent_session,
    worker_session,
)
from .mission import Mission, fold, ref_of, same_ref

AppendMany = Callable[[str, Iterable[EventDraft | dict[str, Any]]], list[Event]]
_ID = re.compile(ID_PATTERN)


class CoordinateService:
    """Mission, workers, assignments, findings, review, promotion, handoff, and the reads over them."""

    def __init__(self, log: EventLog, append_many: AppendMany) -> None:
        self.log = log
        self._append_many = append_many

    # ------------------------------------------------------------------ writes
    def start(
        self,
        title: str,
        objective: str,
        *,
        mission_id: str | None = None,
        coordinator: str = "coordinator",
        reviewers: list[str] | None = None,
    ) -> dict[str, Any]:
        """Open a mission in its own parent session; ``coordinator`` holds every right, ``reviewers`` may review,
        promote, apply approvals and hand off."""
        mission_id = mission_id or _slug(title)
        _check_id(mission_id, "mission_id")
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
        }
        event = self._write(session, [(MISSION_STARTED, payload, coordinator)])[0]
        return {"mission_id": mission_id, "session": session, **_written(event)}

    def worker_create(
        self, mission_id: str, worker_id: str, *, purpose: str = "", actor: str | None = None
    ) -> dict[str, Any]:
        mission = self._mission(mission_id)
        actor = actor or mission.coordinator
        self._require(mission, actor, "assign")
        _check_id(worker_id, "worker_id")
        if worker_id in mission.workers or worker_id in {mission.coordinator, *mission.reviewers}:
            raise ConflictError(
                f"{worker_id!r} is already part of mission {mission_id!r}",
                field="worker_id",
                remediation="Use another worker_id; a reviewer or coordinator cannot also be a worker.",
            )
        session = worker_session(mission_id, worker_id)
        payload = {"mission_id": mission_id, "worker_id": worker_id, "worker_session": session, "purpose": purpose}
        event = self._write(mission.session, [(WORKER_CREATED, payload, actor)])[0]
        return {"mission_id": mission_id, "worker_id": worker_id, "worker_session": session, **_written(event)}

    def assign(
        self, mission_id: str, worker_id: str, task: str, *, assignment_id: str | None = None, actor: str | None = None
    ) -> dict[str, Any]:
        mission = self._mission(mission_id)
        actor = actor or mission.coordinator
        self._require(mission, actor, "assign")
        self._worker(mission, worker_id)
        assignment_id = assignment_id or "a-" + _digest(mission_id, worker_id, task)[:12]
        _check_id(assignment_id, "assignment_id")
        payload = {"mission_id": mission_id, "assignment_id": assignment_id, "worker_id": worker_id, "task": task}
        event = self._write(mission.session, [(ASSIGNMENT_CREATED, payload, actor)])[0]
        return {"mission_id": mission_id, "assignment_id": assignment_id, "worker_id": worker_id, **_written(event)}

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
        finding_id = "fnd_" + _digest(mission_id, worker_id, subject, claim, json.dumps(refs, sort_keys=True))[:16]
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
            **_written(event),
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
        return {"mission_id": mission_id, "finding_id": finding_id, "status": status, **_written(event)}

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
            **_written(event),
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
            "reviews": [_written(event) | {"finding_id": event.payload["finding_id"]} for event in reviews],
            "promotions": [_written(event) | {"finding_id": event.payload["finding_id"]} for event in promotions],
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
        handoff_id = "hnd_" + _digest(mission_id, str(mission.head.seq), summary)[:16]
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
            **_written(event),
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

    def proof_trace(
        self,
        mission_id: str,
        *,
        handoff_id: str | None = None,
        finding_id: str | None = None,
        proof_seq: int | None = None,
    ) -> dict[str, Any]:
        """Replay how promoted claims came to be, every step cited and re-verified against the log."""
        mission = self._mission(mission_id)
        given = [
            name
            for name, value in (("handoff_id", handoff_id), ("finding_id", finding_id), ("proof_seq", proof_seq))
            if value is not None
        ]
        if len(given) != 1:
            raise InvalidRequestError(
                "name exactly one of handoff_id, finding_id, proof_seq",
                field="handoff_id",
                remediation="handoff_id traces a handoff, finding_id one finding, proof_seq a promotion/handoff seq.",
            )
        handoff = None
        if proof_seq is not None:
            handoff = next((e for e in mission.handoffs.values() if e.seq == proof_seq), None)
            promoted = next((f for f in mission.promoted() if f.promotion and f.promotion.seq == proof_seq), None)
            if handoff is None and promoted is None:
                raise NotFoundError(
                    f"event {proof_seq} of {mission.session} is no promotion or handoff",
                    field="proof_seq",
                    remediation="Use the seq of a promotion or handoff event (coordination_merge_brief lists them).",
                )
            finding_ids = [promoted.finding_id] if promoted else []
        elif handoff_id is not None:
            handoff = mission.handoffs.get(handoff_id)
            if handoff is None:
                raise NotFoundError(
                    f"mission {mission_id!r} has no handoff {handoff_id!r}",
                    field="handoff_id",
                    remediation="Use a handoff_id coordination_handoff returned.",
                )
        else:
            assert finding_id is not None
            self._finding(mission, finding_id)
            finding_ids = [finding_id]
        if handoff is not None:
            finding_ids = [
                f.finding_id
                for ref in handoff.payload.get("promoted_refs", [])
                for f in mission.promoted()
                if f.promotion is not None and same_ref(ref, f.promotion)
            ]
        return views.proof_trace(mission, finding_ids, handoff, self._resolves)

    # ------------------------------------------------------------------ helpers
    def _mission(self, mission_id: str) -> Mission:
        _check_id(mission_id, "mission_id")
        session = parent_session(mission_id)
        if not self.log.has_session(session):
            raise NotFoundError(
                f"no mission {mission_id!r}",
                field="mission_id",
                remediation="Start it with coordination_start, or check the mission_id.",
            )
        parent = list(self.log.replay(session))
        started = parent[0] if parent and parent[0].type == MISSION_STARTED else None
        worker_ids = [e.payload.get("worker_id") for e in parent if e.type == WORKER_CREATED]
        workers = {
            w: list(self.log.replay(worker_session(mission_id, w)))
            for w in worker_ids
            if isinstance(w, str) and self.log.has_session(worker_session(mission_id, w))
        }
        mission = fold(parent, workers) if started is not None else None
        if mission is None:
            raise NotFoundError(
                f"session {session!r} holds no mission",
                field="mission_id",
                remediation="Start the mission with coordination_start.",
            )
        return mission

    def _worker(self, mission: Mission, worker_id: str) -> Any:
        worker = mission.workers.get(worker_id) if isinstance(worker_id, str) else None
        if worker is None:
            raise NotFoundError(
                f"mission {mission.mission_id!r} has no worker {worker_id!r}",
                field="worker_id",
                remediation="Create it with coordination_worker_create, or use a worker of this mission.",
            )
        return worker

    def _finding(self, mission: Mission, finding_id: str, *, field: str = "finding_id") -> Any:
        finding = mission.findings.get(finding_id) if isinstance(finding_id, str) else None
        if finding is None:
            raise NotFoundError(
                f"mission {mission.mission_id!r} has no finding {finding_id!r}",
                field=field,
                remediation="Use a finding_id from coordination_merge_brief of this mission.",
            )
        return finding

    def _require(self, mission: Mission, actor: str, permission: str, *, field: str = "actor") -> None:
        if not mission.may(actor, permission):
            role = mission.role_of(actor) or "not a member"
            raise UnauthorizedError(
                f"{actor!r} ({role}) has no {permission} right in mission {mission.mission_id!r}",
                field=field,
                remediation=f"Act as the coordinator ({mission.coordinator!r}) or a reviewer the mission granted.",
            )

    def _check_review(
        self, mission: Mission, finding_id: str, status: Any, rationale: Any, reviewer: str, *, field: str = ""
    ) -> None:
        prefix = f"{field}." if field else ""
        if status not in REVIEW_STATUSES:
            raise InvalidRequestError(
                f"unknown review status {status!r}",
                field=f"{prefix}status",
                remediation=f"Use one of {', '.join(REVIEW_STATUSES)}.",
            )
        if not isinstance(rationale, str) or not rationale.strip():
            raise InvalidRequestError(
                "a review needs a rationale", field=f"{prefix}rationale", remediation="Say why you decided this."
            )
        self._require(mission, reviewer, "review", field="actor" if field else "reviewer")
        finding = mission.findings[finding_id]
        if reviewer == finding.worker_id:
            raise UnauthorizedError(
                "a worker may not review its own finding",
                field="reviewer",
                remediation="Ask the coordinator or a reviewer of the mission.",
            )
        if finding.promotion is not None:
            raise ConflictError(
                f"finding {finding_id} is already promoted",
                field=f"{prefix}finding_id",
                remediation="Promoted state is final for this mission; report a new finding to correct it.",
            )

    def _ref(self, item: Any, field: str, default_session: str) -> dict[str, Any]:
        """A citation string or ``{session?, seq, hash}`` -> a verified full ref (the event exists, same hash)."""
        try:
            if isinstance(item, str):
                event = self.log.resolve(parse_citation(item, field=field))
            elif isinstance(item, dict) and isinstance(item.get("seq"), int) and isinstance(item.get("hash"), str):
                session = item.get("session", default_session)
                event = self.log.get(session, item["seq"])
                if event.hash != item["hash"]:
                    raise NotFoundError(f"{field}: the event has a different hash", field=field)
            else:
                raise InvalidRequestError(f"{field} must be a citation", field=field)
        except ZaxyError as exc:
            raise type(exc)(
                exc.message,
                field=field,
                remediation="Cite an existing event by its eventloom:// citation or {session, seq, hash (64 hex)}.",
            ) from exc
        return ref_of(event)

    def _resolves(self, ref: dict[str, Any]) -> bool:
        try:
            return self.log.get(ref["session"], ref["seq"]).hash == ref["hash"]
        except (ZaxyError, KeyError, TypeError):
            return False

    def _write(self, session: str, events: list[tuple[str, dict[str, Any], str]]) -> list[Event]:
        drafts = [{"type": kind, "payload": payload, "actor": actor} for kind, payload, actor in events]
        return self._append_many(session, drafts)


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


def _written(event: Event) -> dict[str, Any]:
    return {"event_type": event.type, "seq": event.seq, "hash": event.hash, "citation": event.citation}


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def _slug(title: Any) -> str:
    text = title if isinstance(title, str) else ""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:32].strip("-")
    return slug or "mission"


def _check_id(value: Any, field: str) -> None:
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise InvalidRequestError(
            f"invalid {field} {value!r}",
            field=field,
            remediation="Use 1-48 characters: lowercase letters, digits, '-' and '_', starting with a letter or digit.",
        )
