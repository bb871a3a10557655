"""The proof-packet operations of Coordinate: bind a synthesis answer to a mission decision, and trace a proof.

See :mod:`.proofs` for what a proof packet holds and why.
"""

from __future__ import annotations

import json
from typing import Any

from zaxy_agents.errors import InvalidRequestError, NotFoundError, ZaxyError
from zaxy_agents.eventloom.models import Event

from . import proofs, views
from .access import MissionAccess, digest, written
from .contracts import DECISION_SCOPES, PROOF_PACKET_CREATED, SCOPE_PERMISSION
from .mission import ref_of


class ProofOperations(MissionAccess):
    """``record_synthesis_artifact`` and ``proof_trace`` (by handoff, finding, artifact or seq)."""

    def record_synthesis_artifact(
        self,
        mission_id: str,
        checkout: dict[str, Any],
        *,
        decision_scope: str,
        candidate: str | int | dict[str, Any] | None = None,
        outcome: str | None = None,
        handoff_id: str | None = None,
        reason: str | None = None,
        corrected_value: str | None = None,
        actor: str | None = None,
    ) -> dict[str, Any]:
        """Record ``checkout``'s synthesis answer candidates (the generic ``memory_synthesis_artifact``, with the
        selected ``candidate``'s ``outcome``) and bind them to a mission decision with a
        ``coordination.proof_packet.created``. Authority, scope and handoff are checked first and the artifact
        checks itself before its append, so a refused call writes nothing."""
        mission = self._mission(mission_id)
        actor = actor or mission.coordinator
        proofs.check_scope(decision_scope, handoff_id, DECISION_SCOPES)
        self._require(mission, actor, SCOPE_PERMISSION[decision_scope])
        handoff = self._handoff(mission, handoff_id) if handoff_id is not None else None
        if self._synthesis is None:
            raise ZaxyError(
                "synthesis artifacts are not available on this memory",
                field="checkout",
                remediation="Use a MemoryFabric (fabric.coordination), which wires the synthesis feature in.",
            )
        mission_side = proofs.packet(mission, decision_scope, proofs.ledger_rows(checkout), handoff, actor)
        proofs.precheck(mission_side, mission.session)
        recorded = self._synthesis.record(
            checkout,
            candidate,
            outcome,
            reason=reason,
            corrected_value=corrected_value,
            session=mission.session,
            actor=actor,
        )
        outcome_ref = None
        if recorded.get("outcome"):
            outcome_ref = self._ref(recorded["outcome"]["citation"], "outcome", mission.session)
        candidate_id = (recorded.get("outcome") or {}).get("candidate", {}).get("candidate_id")
        proof_id = (
            "prf_"
            + digest(
                mission_id,
                recorded["artifact_id"],
                decision_scope,
                handoff_id or "",
                str(mission.head.seq),
                json.dumps(outcome_ref, sort_keys=True),
            )[:16]
        )
        payload = {
            **mission_side,
            "proof_id": proof_id,
            "artifact_id": recorded["artifact_id"],
            "artifact_ref": {"session": recorded["session"], "seq": recorded["seq"], "hash": recorded["hash"]},
            "outcome_ref": outcome_ref,
            "candidate_id": candidate_id,
        }
        event = self._write(mission.session, [(PROOF_PACKET_CREATED, payload, actor)])[0]
        return {
            "mission_id": mission_id,
            "proof_id": proof_id,
            "decision_scope": decision_scope,
            "artifact_id": recorded["artifact_id"],
            "artifact_citation": recorded["citation"],
            "outcome": recorded.get("outcome"),
            "handoff_event_ref": mission_side["handoff_event_ref"],
            "accepted_finding_ids": mission_side["accepted_finding_ids"],
            "non_authoritative_rows": mission_side["non_authoritative_rows"],
            "excluded_row_reasons": mission_side["excluded_row_reasons"],
            "authority_status": "coordinator_memory",
            **written(event),
        }

    def proof_trace(
        self,
        mission_id: str,
        *,
        handoff_id: str | None = None,
        finding_id: str | None = None,
        artifact_id: str | None = None,
        proof_seq: int | None = None,
    ) -> dict[str, Any]:
        """Replay how promoted claims came to be, every step cited and re-verified against the log: by a
        handoff, one finding, a synthesis artifact a proof packet bound, or the seq of a promotion, handoff or
        proof packet."""
        mission = self._mission(mission_id)
        named = {"handoff_id": handoff_id, "finding_id": finding_id, "artifact_id": artifact_id, "proof_seq": proof_seq}
        given = [name for name, value in named.items() if value is not None]
        if len(given) != 1:
            raise InvalidRequestError(
                "name exactly one of handoff_id, finding_id, artifact_id, proof_seq",
                field="handoff_id",
                remediation="handoff_id traces a handoff, finding_id one finding, artifact_id a proof packet's "
                "synthesis artifact, proof_seq a promotion, handoff or proof packet seq.",
            )
        handoff = proof = None
        finding_ids: list[str] = []
        if proof_seq is not None:
            handoff = next((e for e in mission.handoffs.values() if e.seq == proof_seq), None)
            proof = next((e for e in mission.proofs if e.seq == proof_seq), None)
            promoted = next((f for f in mission.promoted() if f.promotion and f.promotion.seq == proof_seq), None)
            if handoff is None and promoted is None and proof is None:
                raise NotFoundError(
                    f"event {proof_seq} of {mission.session} is no promotion, handoff or proof packet",
                    field="proof_seq",
                    remediation="Use the seq of a promotion, handoff or proof packet (coordination_merge_brief "
                    "and coordination_record_synthesis_artifact return them).",
                )
            finding_ids = [promoted.finding_id] if promoted else []
        elif handoff_id is not None:
            handoff = self._handoff(mission, handoff_id)
        elif artifact_id is not None:
            proof = next((e for e in reversed(mission.proofs) if e.payload["artifact_id"] == artifact_id), None)
            if proof is None:
                raise NotFoundError(
                    f"no proof packet of mission {mission_id!r} binds artifact {artifact_id!r}",
                    field="artifact_id",
                    remediation="Use an artifact_id coordination_record_synthesis_artifact returned for this mission.",
                )
        else:
            assert finding_id is not None
            self._finding(mission, finding_id)
            finding_ids = [finding_id]
        if proof is not None:
            handoff = mission.handoffs.get(proof.payload.get("handoff_id") or "")
            finding_ids = list(proof.payload.get("accepted_finding_ids", []))
        elif handoff is not None:
            finding_ids = [f.finding_id for f in proofs.supporting_findings(mission, handoff)]
        trace = views.proof_trace(mission, finding_ids, handoff, self._resolves)
        if proof is not None:
            linked = [proof]
        else:  # a handoff's trace links back the proof packets later bound to it
            handed = handoff.payload["handoff_id"] if handoff is not None else None
            linked = [e for e in mission.proofs if handed is not None and e.payload.get("handoff_id") == handed]
        trace["proof_packets"] = [views.proof_dict(e) for e in linked]
        if proof is not None:
            artifact = self._artifact(proof)
            trace["artifact"] = artifact
            trace["steps"].append(views.proof_step("synthesis_artifact", proof.payload["artifact_ref"], self._resolves))
            trace["steps"].append(views.proof_step("proof_packet", ref_of(proof), self._resolves, actor=proof.actor))
            trace["non_authoritative_diagnostics"] = proof.payload.get("non_authoritative_rows", [])
            trace["verified"] = all(step["verified"] for step in trace["steps"])
        return trace

    def _artifact(self, proof: Event) -> dict[str, Any] | None:
        """The synthesis artifact a proof packet binds, read back (None when this service has no synthesis)."""
        if self._synthesis is None:
            return None
        ref = proof.payload["artifact_ref"]
        artifact = self._synthesis.read(ref["session"], proof.payload["artifact_id"])
        keep = ("artifact_id", "citation", "query", "question_type", "answer_candidates", "ledger_rows", "outcomes")
        return {key: artifact.get(key) for key in keep}
