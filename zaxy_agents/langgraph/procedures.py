"""Procedural-memory tools for LangGraph agents (opt-in: ``memory_tools(include=...)`` or
:func:`procedure_tools`): ``memory_plan_from_procedures`` and ``memory_skill_from_procedure``, the same operations
as the MCP full profile, in the run's session (plans read the run's recall scope)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_core.tools import BaseTool
from pydantic import BaseModel, ConfigDict

from zaxy_agents.checkpoints import DEFAULT_SESSION_PREFIX
from zaxy_agents.fabric import MemoryFabric
from zaxy_agents.tool_arguments import PlanFromProceduresFields, SkillFromProcedureFields

from .tools import ToolContext, ZaxyTool, memory_tools

PROCEDURE_TOOLS = ("memory_plan_from_procedures", "memory_skill_from_procedure")


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlanArgs(PlanFromProceduresFields, _Args):
    pass


class SkillArgs(SkillFromProcedureFields, _Args):
    pass


class MemoryPlanFromProceduresTool(ZaxyTool):
    name: str = "memory_plan_from_procedures"
    description: str = (
        "Plan a goal from procedural memory: the cited steps of the best applicable (validated or accepted) "
        "procedure, plus diagnostic and excluded procedures with reasons (not instructions). Non-authoritative."
    )
    args_schema: type[BaseModel] = PlanArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: PlanArgs) -> dict[str, Any]:
        others = [name for name in context.scope.recall if name != context.session]
        return context.fabric.plan_from_procedures(
            context.session, args.goal, scope=others, as_of=args.as_of, limit=args.limit
        )


class MemorySkillFromProcedureTool(ZaxyTool):
    name: str = "memory_skill_from_procedure"
    description: str = (
        "Propose a skill from an accepted procedure candidate (cand_...): it stays a proposal until a reviewer "
        "validates it; nothing is applied."
    )
    args_schema: type[BaseModel] = SkillArgs
    default: ClassVar[bool] = False

    def execute(self, context: ToolContext, args: SkillArgs) -> dict[str, Any]:
        return context.fabric.skill_from_procedure(
            context.session, args.candidate_id, skill_id=args.skill_id, actor=args.actor
        )


def procedure_tools(
    fabric: MemoryFabric,
    *,
    scope: Sequence[str] = (),
    session: str | None = None,
    session_prefix: str = DEFAULT_SESSION_PREFIX,
    include: Sequence[str] = PROCEDURE_TOOLS,
) -> list[BaseTool]:
    """The procedural-memory tools (both by default), scoped like :func:`memory_tools`."""
    return memory_tools(fabric, scope=scope, session=session, session_prefix=session_prefix, include=include)
