"""Planning from procedural memory (full profile, seed 003 beta.2) and skill proposals from accepted procedures.

memory_plan_from_procedures returns a non-authoritative planning packet: the best applicable procedure's cited
steps, with diagnostic and excluded procedures and their reasons. memory_skill_from_procedure turns an accepted,
cited procedure candidate (e.g. a mined one) into a ``skill.proposed`` skill: review-gated, never applied by itself.
"""

from __future__ import annotations

from typing import Any

from zaxy_agents.mcp.registry import ToolCall, tool
from zaxy_agents.mcp.schema import MAX_SCOPE, SessionName, ToolArgs, optional
from zaxy_agents.tool_arguments import PlanFromProceduresFields, SkillFromProcedureFields


class PlanArgs(PlanFromProceduresFields, ToolArgs):
    scope: optional(
        list[SessionName], "Other sessions to plan from as well (default: as memory_checkout).", max_length=MAX_SCOPE
    ) = None


class SkillArgs(SkillFromProcedureFields, ToolArgs):
    pass


@tool(
    "memory_plan_from_procedures",
    profile="full",
    order=380,
    read_only=True,
    summarize=lambda r: f"plan={'yes' if r.get('plan') else 'no'} applicable={len(r.get('applicable') or [])}",
    description="""Build a non-authoritative planning packet for goal from procedural memory (skills and procedure
    candidates): plan.steps come from the best applicable procedure (validated or revised skills, accepted
    candidates; cited), each step cited. Proposed, pending or deferred procedures are listed as diagnostic;
    rejected, conflicted, deprecated, contradicted, stale, superseded, closed or uncited ones as excluded, with the
    reason: never as instructions. skill_proposals lists accepted procedures that are not skills yet.""",
)
def memory_plan_from_procedures(call: ToolCall[PlanArgs]) -> dict[str, Any]:
    args = call.args
    return call.fabric.plan_from_procedures(
        call.session, args.goal, scope=call.caller.allow_scope(args.scope), as_of=args.as_of, limit=args.limit
    )


@tool(
    "memory_skill_from_procedure",
    profile="full",
    order=390,
    summarize=lambda r: f"skill={r.get('skill_id')} status={r.get('status')}",
    description="""Propose a skill (skill.proposed) from an accepted, cited procedure candidate, e.g. one mined by
    zaxy memory mine-procedures: its steps, citing the candidate and its source traces. Review-gated: the skill is
    diagnostic until a reviewer validates it with memory_skill(action='validated'); nothing is applied.""",
)
def memory_skill_from_procedure(call: ToolCall[SkillArgs]) -> dict[str, Any]:
    args = call.args
    return call.fabric.skill_from_procedure(call.session, args.candidate_id, skill_id=args.skill_id, actor=args.actor)
