"""Belief-update proposals (full profile, seed 002/003 beta.1): propose, review, list.

memory_propose_belief_update appends a cited ``belief.update.proposed`` event (pending, non-authoritative);
memory_review_belief_update records a disposition, mirroring consolidation review (admin token over HTTP: an
agent must not accept its own proposals on a shared server); memory_belief_update_proposals lists them. Nothing
here changes a current fact: promotion is a separate authority path.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.errors import UnauthorizedError
from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import MAX_SCOPE, SessionName, ToolArgs, optional
from zaxy_agents.tool_arguments import BeliefListFields, ProposeBeliefFields, ReviewBeliefFields, source_value


class ProposeArgs(ProposeBeliefFields, ToolArgs):
    pass


class ReviewArgs(ReviewBeliefFields, ToolArgs):
    pass


class ListArgs(BeliefListFields, ToolArgs):
    scope: optional(
        list[SessionName], "Other sessions to list as well (default: as memory_checkout).", max_length=MAX_SCOPE
    ) = None


@tool(
    "memory_propose_belief_update",
    profile="full",
    order=330,
    summarize=lambda r: f"proposal={r.get('proposal_id')} created={r.get('created')}",
    description="""Propose a belief update (claim, rationale, confidence, citations, phase): appended as
    belief.update.proposed, review_status pending, authority_status non_authoritative. A proposal is not a fact
    update: current facts do not change, and memory_checkout reports it under diagnostics.belief_update_proposals
    until a review disposes of it. The same claim on the same citations is proposed once.""",
)
def memory_propose_belief_update(call: ToolCall[ProposeArgs]) -> dict[str, Any]:
    args = call.args
    return call.fabric.propose_belief_update(
        call.session,
        claim=args.claim,
        rationale=args.rationale,
        confidence=args.confidence,
        citations=[source_value(citation) for citation in args.citations],
        phase=args.phase,
        claim_key=args.claim_key,
        actor=args.actor,
    )


@tool(
    "memory_review_belief_update",
    profile="full",
    order=340,
    admin=True,
    summarize=lambda r: f"status={r.get('status')} promoted={r.get('promoted')}",
    description="""Record a review disposition of a belief update proposal: accepted, rejected, deferred or
    conflicted, with a rationale (belief.update.reviewed). Never a promotion: an accepted proposal stays
    non-authoritative and no current fact changes. A proposal whose citations no longer resolve cannot be accepted.
    Over HTTP this needs the admin token.""",
)
def memory_review_belief_update(call: ToolCall[ReviewArgs]) -> dict[str, Any]:
    if call.caller.restricted and not call.caller.admin:
        raise UnauthorizedError(
            "reviewing a belief update needs the admin token over HTTP",
            field="authorization",
            remediation="Send the admin bearer token (ZAXY_ADMIN_TOKEN on the server).",
        )
    args = call.args
    return call.fabric.review_belief_update(
        call.session,
        args.proposal_id,
        status=args.status,
        rationale=args.rationale,
        reviewer=args.reviewer,
        actor=args.actor,
    )


@tool(
    "memory_belief_update_proposals",
    profile="full",
    order=350,
    read_only=True,
    summarize=lambda r: f"proposals={r.get('proposal_count')} pending={r.get('pending_count')}",
    description="""List belief update proposals (newest first) with their claim, rationale, confidence, phase,
    citations and review state, plus proposal_count, pending_count and counts per disposition. Review material,
    not memory.""",
)
def memory_belief_update_proposals(call: ToolCall[ListArgs]) -> dict[str, Any]:
    args = call.args
    return call.fabric.belief_proposals(
        call.session, scope=call.caller.allow_scope(args.scope), status=args.status, as_of=args.as_of, limit=args.limit
    )
