"""What the read tools answer, computed from a folded :class:`Mission`: merge brief, mission-scoped checkout,
performance ledger, approval packet and proof trace.

Accepted mission state is what a reviewer with the right accepted *and* promoted; everything else a worker
reported is worker-local and non-authoritative, shown only as diagnostics and always labelled so.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from zaxy_agents.eventloom.citations import format_citation

from .mission import Finding, Mission, ref_of

Resolves = Callable[[dict[str, Any]], bool]

COORDINATE_PURPOSE = {
    "preset": "coordinate",
    "evidence_policy": "accepted parent state is authoritative; worker-local pending rows are diagnostics only",
    "expected_action": "act on promoted mission state; review or report, never treat a pending finding as fact",
}


def brief(mission: Mission) -> dict[str, Any]:
    """The coordinator's merge brief: every worker's findings grouped by where review left them."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for finding in sorted(mission.findings.values(), key=lambda f: (f.event.timestamp, f.finding_id)):
        groups.setdefault(finding.review_status, []).append(finding.to_dict())
    return {
        **_header(mission),
        "workers": [
            {"worker_id": w.worker_id, "session": w.session, "purpose": w.purpose, "assignments": w.assignments}
            for w in mission.workers.values()
        ],
        "findings": {status: groups.get(status, []) for status in _STATUS_ORDER},
        "counts": {status: len(groups.get(status, [])) for status in _STATUS_ORDER},
        "conflicts": mission.conflicts(),
        "ignored_events": mission.ignored,
    }


def checkout(mission: Mission, worker_id: str | None, include_diagnostics: bool) -> dict[str, Any]:
    """Mission-scoped checkout: the brief, promoted state, the caller's assignment, the latest handoff.

    Pending findings never appear among accepted state; with ``include_diagnostics`` they are listed in
    ``diagnostics.pending`` labelled non-authoritative."""
    promoted = mission.promoted()
    assignments = mission.workers[worker_id].assignments if worker_id else []
    handoff = _latest_handoff(mission)
    lines = [
        f"# Coordinate Checkout: {mission.title}",
        "",
        f"Objective: {mission.objective} [{mission.start.citation}]",
    ]
    lines += ["", "## Accepted Mission State"]
    lines += [f"- {f.subject}: {f.claim} [{f.promotion.citation}]" for f in promoted if f.promotion] or ["- (none yet)"]
    if worker_id:
        lines += ["", f"## Your Assignment ({worker_id})"]
        lines += [f"- {a['task']} [{a['citation']}]" for a in assignments] or ["- (no assignment yet)"]
    if handoff is not None:
        lines += ["", "## Latest Handoff", f"- {handoff.payload['summary']} [{handoff.citation}]"]
        lines += [f"- next: {step}" for step in handoff.payload.get("next_steps", [])]
    pending = mission.pending()
    conflicts = mission.conflicts()
    lines += [
        "",
        "## Guidance",
        f"- {len(pending)} pending worker finding(s) and {len(conflicts)} conflict(s) are not accepted state; "
        "do not treat them as facts (coordination_review_finding / coordination_promote decide).",
    ]
    diagnostics: dict[str, Any] = {
        "accepted_count": len(promoted),
        "pending_count": len(pending),
        "conflict_count": len(conflicts),
        "ignored_event_count": len(mission.ignored),
        "include_diagnostics": include_diagnostics,
    }
    if include_diagnostics:
        diagnostics["pending"] = [{**f.to_dict(with_reviews=False), "row_status": "non_authoritative"} for f in pending]
        diagnostics["conflicts"] = conflicts
        diagnostics["ignored_events"] = mission.ignored
    citations = [mission.start.citation] + [f.promotion.citation for f in promoted if f.promotion]
    citations += [a["citation"] for a in assignments] + ([handoff.citation] if handoff is not None else [])
    return {
        **_header(mission),
        "worker_id": worker_id,
        "prompt": "\n".join(lines) + "\n",
        "accepted_state": [f.to_dict(with_reviews=False) for f in promoted],
        "assignments": assignments,
        "latest_handoff": _handoff_dict(handoff) if handoff is not None else None,
        "purpose": COORDINATE_PURPOSE,
        "citations": citations,
        "diagnostics": diagnostics,
    }


def ledger(mission: Mission) -> dict[str, Any]:
    """Per-worker outcomes: reported, accepted, promoted, rejected, duplicate, missing-evidence, test-backed."""
    rows = []
    for worker in mission.workers.values():
        mine = [f for f in mission.findings.values() if f.worker_id == worker.worker_id]
        counts = {
            "reported": len(mine),
            "accepted": sum(1 for f in mine if f.review_status in {"accepted", "promoted"}),
            "promoted": sum(1 for f in mine if f.promotion is not None),
            "rejected": sum(1 for f in mine if f.review_status == "rejected"),
            "duplicate": sum(1 for f in mine if f.review_status == "duplicate"),
            "missing_evidence": sum(1 for f in mine if not f.evidence or f.review_status == "needs_evidence"),
            "test_backed": sum(1 for f in mine if f.test_backed and f.evidence),
            "pending": sum(1 for f in mine if f.review_status in {"pending", "deferred"}),
        }
        reported = counts["reported"]
        rates = {
            f"{name}_rate": (round(counts[name] / reported, 4) if reported else None)
            for name in ("accepted", "rejected", "duplicate", "missing_evidence", "test_backed")
        }
        rows.append({"worker_id": worker.worker_id, **counts, **rates})
    return {**_header(mission), "workers": rows}


def packet_id(mission: Mission) -> str:
    """Changes whenever the mission's parent history or its open findings change: a stale packet is refused."""
    open_ids = sorted(f.finding_id for f in _open(mission))
    basis = f"{mission.session}:{mission.head.seq}:{mission.head.hash}:{','.join(open_ids)}"
    return "apr_" + hashlib.sha256(basis.encode()).hexdigest()[:16]


def approval_packet(mission: Mission) -> dict[str, Any]:
    """Pending and conflicted findings exported for a remote reviewer, with the decision shape to send back."""
    items = [f.to_dict() for f in _open(mission)]
    return {
        **_header(mission),
        "packet_id": packet_id(mission),
        "as_of": mission.head.citation,
        "items": items,
        "conflicts": mission.conflicts(),
        "decision_template": {
            "finding_id": "<finding_id>",
            "status": "accepted | rejected | duplicate | needs_evidence | deferred",
            "rationale": "<why>",
            "promote": False,
        },
        "authority_status": "non_authoritative",
    }


def proof_trace(mission: Mission, finding_ids: list[str], handoff: Any, resolves: Resolves) -> dict[str, Any]:
    """How promoted claims came to be: report (with each evidence citation re-verified), reviews, promotion,
    and the handoff that carried them; ``verified`` is true only when every step still resolves."""
    steps: list[dict[str, Any]] = []
    claims = []
    for finding_id in finding_ids:
        finding = mission.findings[finding_id]
        claims.append({"finding_id": finding_id, "subject": finding.subject, "claim": finding.claim})
        steps.append(_step("reported", finding.event, resolves, actor=finding.worker_id))
        for ref in finding.evidence:
            citation = format_citation(ref["session"], ref["seq"], ref["hash"])
            steps.append(
                {
                    "step": "evidence",
                    "finding_id": finding_id,
                    "ref": ref,
                    "citation": citation,
                    "verified": resolves(ref),
                }
            )
        for review in finding.reviews:
            steps.append(_step("reviewed", review.event, resolves, actor=review.reviewer, status=review.status))
        if finding.promotion is not None:
            steps.append(_step("promoted", finding.promotion, resolves, actor=finding.promotion.actor))
    if handoff is not None:
        steps.append(_step("handed_off", handoff, resolves, actor=handoff.actor))
    return {
        **_header(mission),
        "claims": claims,
        "handoff": _handoff_dict(handoff) if handoff is not None else None,
        "steps": steps,
        "verified": all(step["verified"] for step in steps),
    }


_STATUS_ORDER = ("promoted", "accepted", "pending", "deferred", "needs_evidence", "duplicate", "rejected")


def _open(mission: Mission) -> list[Finding]:
    conflicted = {i for cluster in mission.conflicts() for i in cluster["finding_ids"]}
    return [
        f
        for f in mission.findings.values()
        if f.promotion is None and (f.review_status in {"pending", "deferred"} or f.finding_id in conflicted)
    ]


def _latest_handoff(mission: Mission) -> Any:
    return max(mission.handoffs.values(), key=lambda e: e.seq) if mission.handoffs else None


def _handoff_dict(event: Any) -> dict[str, Any]:
    p = event.payload
    return {
        "handoff_id": p["handoff_id"],
        "summary": p["summary"],
        "next_steps": p.get("next_steps", []),
        "risks": p.get("risks", []),
        "to": p.get("to"),
        "promoted_refs": p.get("promoted_refs", []),
        "citation": event.citation,
        "handoff_event_ref": ref_of(event),
    }


def _header(mission: Mission) -> dict[str, Any]:
    return {
        "mission_id": mission.mission_id,
        "session": mission.session,
        "title": mission.title,
        "objective": mission.objective,
        "coordinator": mission.coordinator,
        "reviewers": mission.reviewers,
        "dispatchers": mission.dispatchers,
        "mission_citation": mission.start.citation,
    }


def proof_dict(event: Any) -> dict[str, Any]:
    """A proof packet as the trace and the checkout show it (coordinator memory, never accepted state itself)."""
    p = event.payload
    return {
        "proof_id": p["proof_id"],
        "decision_scope": p["decision_scope"],
        "artifact_id": p["artifact_id"],
        "handoff_id": p.get("handoff_id"),
        "handoff_event_ref": p.get("handoff_event_ref"),
        "accepted_finding_ids": p.get("accepted_finding_ids", []),
        "diagnostic_pending_ids": p.get("diagnostic_pending_ids", []),
        "conflict_ids": p.get("conflict_ids", []),
        "excluded_row_reasons": p.get("excluded_row_reasons", []),
        "created_by": p["created_by"],
        "citation": event.citation,
        "proof_seq": event.seq,
    }


def proof_step(name: str, ref: dict[str, Any], resolves: Resolves, **extra: Any) -> dict[str, Any]:
    citation = format_citation(ref["session"], ref["seq"], ref["hash"])
    return {"step": name, "citation": citation, "verified": resolves(ref), **extra}


def _step(name: str, event: Any, resolves: Resolves, **extra: Any) -> dict[str, Any]:
    return {"step": name, "citation": event.citation, "verified": resolves(ref_of(event)), **extra}
