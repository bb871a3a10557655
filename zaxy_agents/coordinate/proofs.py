"""Proof packets: a synthesis answer bound to a Coordinate decision (seed 003, coordination_record_synthesis_artifact).

A coordinator who answers from a Memory Checkout's synthesis candidates (a total, a count, a latest value) while
writing a merge brief, an approval packet, an accepted checkout or a handoff records the generic synthesis
artifact (``memory.synthesis.artifact.created``, owned by the synthesis feature) and then a mission-scoped
``coordination.proof_packet.created``: which accepted findings, reviews and promotions the decision rests on,
which handoff it belongs to, and which ledger rows rest only on worker-local state (pending, rejected or deferred
findings) and so stay non-authoritative diagnostics. This module builds that payload from the folded mission; the
service writes it. The synthesis feature reaches Coordinate only through :class:`SynthesisPort` (two callables
the fabric passes in), so domain code never calls the fabric back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.eventloom.citations import parse_citation
from zaxy_agents.eventloom.models import Event

from .contracts import ProofPacketCreated
from .mission import Finding, Mission, ref_of, same_ref


@dataclass(frozen=True)
class SynthesisPort:
    """The synthesis feature as Coordinate uses it: ``record(checkout, candidate, outcome, *, reason,
    corrected_value, session, actor)`` persists a checkout's answer candidates (``memory_synthesis_artifact``) and
    ``read(session, artifact_id)`` reads an artifact back with its candidates, ledger rows and outcomes."""

    record: Callable[..., dict[str, Any]]
    read: Callable[[str, str], dict[str, Any]]


def ledger_rows(checkout: Any) -> list[dict[str, Any]]:
    """The checkout's synthesis ledger rows (empty when it has none; the synthesis recorder says what is wrong)."""
    synthesis = (checkout.get("diagnostics") or {}).get("synthesis") if isinstance(checkout, dict) else None
    rows = synthesis.get("ledger_rows") if isinstance(synthesis, dict) else None
    return [row for row in rows if isinstance(row, dict)] if isinstance(rows, list) else []


def supporting_findings(mission: Mission, handoff: Event | None) -> list[Finding]:
    """The accepted findings a decision rests on: those a handoff carried, else every promoted finding."""
    promoted = mission.promoted()
    if handoff is None:
        return promoted
    refs = handoff.payload.get("promoted_refs", [])
    return [f for f in promoted if f.promotion is not None and any(same_ref(ref, f.promotion) for ref in refs)]


def packet(
    mission: Mission, decision_scope: str, rows: list[dict[str, Any]], handoff: Event | None, actor: str
) -> dict[str, Any]:
    """The proof packet's mission side (everything but the artifact it binds)."""
    accepted = supporting_findings(mission, handoff)
    excluded, diagnostic, worker_sources = _classify(mission, rows)
    for finding in accepted:
        if not any(same_ref(ref, finding.event) for ref in worker_sources):
            worker_sources.append(ref_of(finding.event))
    conflicted = sorted({i for cluster in mission.conflicts() for i in cluster["finding_ids"]})
    return {
        "mission_id": mission.mission_id,
        "decision_scope": decision_scope,
        "accepted_finding_ids": [f.finding_id for f in accepted],
        "review_refs": [ref_of(_accepting_review(f)) for f in accepted],
        "promotion_refs": [ref_of(f.promotion) for f in accepted if f.promotion is not None],
        "worker_source_refs": worker_sources,
        "handoff_id": handoff.payload["handoff_id"] if handoff is not None else None,
        "handoff_event_ref": ref_of(handoff) if handoff is not None else None,
        "diagnostic_pending_ids": [f.finding_id for f in mission.pending()],
        "conflict_ids": conflicted,
        "excluded_row_reasons": excluded,
        "non_authoritative_rows": diagnostic,
        "created_by": actor,
    }


def check_scope(decision_scope: Any, handoff_id: Any, scopes: tuple[str, ...]) -> None:
    if decision_scope not in scopes:
        raise InvalidRequestError(
            f"unknown decision_scope {decision_scope!r}",
            field="decision_scope",
            remediation=f"Use one of {', '.join(scopes)}: the Coordinate decision the answer is part of.",
        )
    if (decision_scope == "handoff") != (handoff_id is not None):
        raise InvalidRequestError(
            "handoff_id goes with decision_scope 'handoff', and only with it",
            field="handoff_id",
            remediation="Pass decision_scope='handoff' with the handoff_id coordination_handoff returned, "
            "or drop handoff_id.",
        )


def precheck(mission_side: dict[str, Any], session: str) -> None:
    """Validate the proof packet's mission side before the artifact is written, so the packet's own append
    cannot fail afterwards and leave an artifact without its packet."""
    placeholder = {
        "proof_id": "prf_" + "0" * 16,
        "artifact_id": "syn_" + "0" * 24,
        "artifact_ref": {"session": session, "seq": 1, "hash": "0" * 64},
    }
    try:
        ProofPacketCreated.model_validate({**mission_side, **placeholder})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InvalidRequestError(
            f"the proof packet would be invalid at {where}: {first['msg']}",
            field="checkout",
            remediation="Bind a smaller decision (fewer findings or ledger rows), or record it in parts.",
        ) from None


def _accepting_review(finding: Finding) -> Event:
    """The review a promotion cites (the fold only keeps promotions that cite an accepting latest review)."""
    assert finding.promotion is not None
    cited = finding.promotion.payload["review_ref"]
    return next(review.event for review in finding.reviews if same_ref(cited, review.event))


def _classify(
    mission: Mission, rows: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Split the ledger rows: excluded ones with their reasons; rows resting on worker-local state no review
    promoted (non-authoritative); and the worker source events of rows that rest on promoted findings."""
    by_event = {(f.event.session, f.event.seq): f for f in mission.findings.values()}
    worker_prefix = mission.session + "."
    excluded: list[dict[str, Any]] = []
    diagnostic: list[dict[str, Any]] = []
    worker_sources: list[dict[str, Any]] = []
    for row in rows:
        row_id = str(row.get("row_id") or row.get("fact_id") or "")[:64] or "row"
        if row.get("status") == "excluded":
            excluded.append({"row_id": row_id, "reason": str(row.get("reason") or "excluded")[:500]})
        try:
            cited = parse_citation(row.get("citation"), field="row.citation")
        except InvalidRequestError:
            continue
        finding = by_event.get((cited.session, cited.seq))
        if finding is not None and finding.promotion is not None:
            if not any(same_ref(ref, finding.event) for ref in worker_sources):
                worker_sources.append(ref_of(finding.event))
        elif finding is not None or cited.session.startswith(worker_prefix):
            diagnostic.append(
                {
                    "row_id": row_id,
                    "citation": str(row.get("citation")),
                    "finding_id": finding.finding_id if finding is not None else None,
                    "reason": (
                        f"worker-local finding, review status {finding.review_status}"
                        if finding is not None
                        else "worker-local event outside any reported finding"
                    ),
                    "authority_status": "non_authoritative",
                }
            )
    return excluded, diagnostic, worker_sources
