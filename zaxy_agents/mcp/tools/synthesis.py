"""Synthesis artifacts and the evidence ledger (full profile, seed 003).

memory_synthesis_artifact persists a checkout's answer candidates (``memory.synthesis.artifact.created``) and the
outcome of a selected one; memory_synthesis_evidence records feedback on one ledger row. The checkout owns the
session: a ``session_id`` naming another session is refused, and over HTTP the checkout's session must be the
caller's. Nothing here changes a fact.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.errors import InvalidRequestError
from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import ToolArgs, payload_validator
from zaxy_agents.tool_arguments import CheckoutArgument, SynthesisArtifactFields, SynthesisEvidenceFields


class ArtifactArgs(CheckoutArgument, SynthesisArtifactFields, ToolArgs):
    _bounded = payload_validator("checkout")


class EvidenceArgs(CheckoutArgument, SynthesisEvidenceFields, ToolArgs):
    _bounded = payload_validator("checkout")


def _session(call: ToolCall[Any]) -> str:
    """The checkout's session (the caller's when it names none), allowed for this caller."""
    named = call.args.checkout.get("session")
    session = named if isinstance(named, str) else call.session
    if call.args.session_id is not None and call.args.session_id != session:
        raise InvalidRequestError(
            f"session_id {call.args.session_id!r} differs from the checkout's session {session!r}",
            field="session_id",
            remediation="Omit session_id: the checkout owns the session.",
        )
    return call.caller.allow_session(session, field="checkout.session")


@tool(
    "memory_synthesis_artifact",
    profile="full",
    order=360,
    summarize=lambda r: f"artifact={r.get('artifact_id')} created={r.get('created')}",
    description="""Persist the answer candidates of a memory_checkout response as a deterministic
    memory.synthesis.artifact.created event (once per bundle), and, with candidate and outcome, the outcome of the
    candidate that shaped your answer: memory.synthesis.used, .rejected, .corrected (pass corrected_value) or
    memory.evidence.excluded. Pass the checkout unchanged: candidates must follow from its ledger rows and every
    row's cited event must still state its value. The checkout owns the session. Non-authoritative: no fact
    changes.""",
)
def memory_synthesis_artifact(call: ToolCall[ArtifactArgs]) -> dict[str, Any]:
    args = call.args
    return call.fabric.record_synthesis_artifact(
        args.checkout,
        args.candidate,
        args.outcome,
        reason=args.reason,
        corrected_value=args.corrected_value,
        session=_session(call),
        actor=args.actor,
    )


@tool(
    "memory_synthesis_evidence",
    profile="full",
    order=370,
    summarize=lambda r: f"{r.get('event_type')} row={r.get('row_id')}",
    description="""Record feedback on one diagnostics.synthesis.ledger_rows item of a memory_checkout response:
    used or helpful appends memory.evidence.reinforced (a row that is a graph fact is reinforced), excluded appends
    memory.evidence.excluded. The event keeps the row's fact id, source group, citation, the support source ids,
    the optional selected candidate, the checkout quality, slot plan and your reason. Records the checkout's
    artifact first if it is not recorded yet.""",
)
def memory_synthesis_evidence(call: ToolCall[EvidenceArgs]) -> dict[str, Any]:
    args = call.args
    return call.fabric.record_synthesis_evidence(
        args.checkout,
        args.row,
        args.outcome,
        candidate=args.candidate,
        reason=args.reason,
        session=_session(call),
        actor=args.actor,
    )
